package consume_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/prometheus/procfs"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/handler"
)

// soakEnv names the soak's length (a Go duration); `make soak` sets it
// (10m). Unset, the soak is the suite's short form, soakShort.
const soakEnv = "BRIGHTER_SOAK_DURATION"

// soakRejectionRunsEnv switches on the check that a budget dead-letter's
// rejectionMessage names the deliveries and the handler runs (set it to
// 1); soakCheckRejectionRuns is its default.
const soakRejectionRunsEnv = "BRIGHTER_SOAK_CHECK_REJECTION_RUNS"

// soakCheckRejectionRuns is whether the rejection-message check runs when
// soakRejectionRunsEnv is unset: on, since the pump's budget rejection names
// the deliveries and the handler runs here ("delivered N times, handled M
// times in this process"); BRIGHTER_SOAK_CHECK_REJECTION_RUNS=0 turns it off.
const soakCheckRejectionRuns = true

// soakShort is the length of the soak in the suite (make test).
const soakShort = 60 * time.Second

// soakBudget is the subscription's requeueCount in the soak.
const soakBudget = 3

// soakStallAfter is the subscription's stallAfter in the soak: a black hole
// longer than it must make /readyz answer 503.
const soakStallAfter = 3 * time.Second

// soakTimeOut is the subscription's timeOut (a receive's wait).
const soakTimeOut = time.Second

// soakReceiveMargin is what a receive's deadline adds to timeOut
// (docs/commands/consume.md: "timeOut plus 10s").
const soakReceiveMargin = 10 * time.Second

// soakDrainTimeout is the subscription's drainTimeout: a graceful stop,
// and the final one with an /events reader attached, must exit 0 within
// it plus soakStopGrace.
const soakDrainTimeout = 10 * time.Second

// soakStopGrace is what a stop may take past drainTimeout: the process's
// own shutdown after the drain (listener, clients, telemetry).
const soakStopGrace = 5 * time.Second

// soakReadyBound is docs/commands/consume.md's bound for /readyz to answer
// 503 once the broker is black-holed: max(stallAfter, timeOut + 10s)
// after the first unanswered call started, which starts within timeOut of
// the hole opening (the receive in flight is answered first): 12 s here.
// The harness allows stallLoadSlack on top (the pump's turn between two
// receives on a loaded machine, as TestConsumeReadyzBoundWithBlackHoledSQS
// does) and its 100 ms poll.
const soakReadyBound = max(soakStallAfter, soakTimeOut+soakReceiveMargin) + soakTimeOut

// soakPerformers and soakBufferSize are the subscription's noOfPerformers
// and bufferSize: a process holds up to performers x bufferSize messages
// it has received and not yet handed to a handler.
const (
	soakPerformers = 2
	soakBufferSize = 4
)

// soakPlan is what the soak's handler does with a message, chosen by the
// message's body ({"plan": name}): defer while the presented delivery
// count is below defers (-1: always), then acknowledge; or reject.
type soakPlan struct {
	name   string
	defers int
	reject bool
}

// soakPlans are the plans the soak sends, one batch of each per round:
// acknowledge; defer once, then acknowledge; defer twice, then
// acknowledge; always defer (dead-lettered by the budget after
// requeueCount handler runs); reject (dead-lettered as rejected).
func soakPlans() []soakPlan {
	return []soakPlan{{name: "ack"}, {name: "defer1", defers: 1}, {name: "defer2", defers: 2}, {name: "always", defers: -1}, {name: "reject", reject: true}}
}

// soakPhaseRoom is how much of the soak's length must be left for another
// phase to start: about a black-hole phase (readiness lost and back).
const soakPhaseRoom = 15 * time.Second

// soakRunTime is how long each handler run takes: long enough that a
// SIGKILL or a reset finds runs in progress.
const soakRunTime = 50 * time.Millisecond

// soakRejectReason is the rejection message the soak's handler gives a
// message whose plan is reject.
const soakRejectReason = "soak plan: reject"

// outcome is the plan's outcome for a delivery presented with count.
func (p soakPlan) outcome(count int) string {
	switch {
	case p.reject:
		return "reject"
	case p.defers < 0 || count < p.defers:
		return "defer"
	default:
		return "ack"
	}
}

// soakRun is one handler run the soak's http handler served: which consume
// process (its index) ran it, the delivery count presented, and the
// outcome replied ("" while it runs; "cut" when the process went away
// before the reply).
type soakRun struct {
	proc    int
	count   int
	outcome string
	start   time.Time
}

// soakHandler is the soak's http handler: it replies with each message's
// plan and records every run, per message id, with the consume process
// that made it (the path /h/PROC names it: each process has a
// subscriptions file of its own). hold makes a process's runs wait until
// release, so that a stop finds messages buffered.
type soakHandler struct {
	mu     sync.Mutex
	plans  map[string]soakPlan // by body
	runs   map[string][]*soakRun
	active map[int]map[string]bool // message ids in a run, per process
	held   map[int]chan struct{}
	srv    *httptest.Server
}

func newSoakHandler(t *testing.T) *soakHandler {
	h := &soakHandler{plans: map[string]soakPlan{}, runs: map[string][]*soakRun{}, active: map[int]map[string]bool{}, held: map[int]chan struct{}{}}
	for _, p := range soakPlans() {
		h.plans[soakBody(p)] = p
	}
	h.srv = httptest.NewServer(h)
	t.Cleanup(h.srv.Close)
	return h
}

// soakBody is the body of a message sent with plan p.
func soakBody(p soakPlan) string { return `{"plan":"` + p.name + `"}` }

// url is the handler's URL for the consume process proc.
func (h *soakHandler) url(proc int) string { return h.srv.URL + "/h/" + strconv.Itoa(proc) }

func (h *soakHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proc, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/h/"))
	body, _ := io.ReadAll(r.Body)
	id, _ := handler.DecodeCEHeaderValue(r.Header.Get("ce-id"))
	count, cerr := strconv.Atoi(r.Header.Get(handler.HeaderHandledCount))
	h.mu.Lock()
	plan, ok := h.plans[string(body)]
	if err != nil || cerr != nil || id == "" || !ok {
		h.mu.Unlock()
		http.Error(w, fmt.Sprintf("soak handler: path %q, id %q, count %q, body %q not understood", r.URL.Path, id, r.Header.Get(handler.HeaderHandledCount), body), http.StatusBadRequest)
		return
	}
	run := &soakRun{proc: proc, count: count, start: time.Now()}
	h.runs[id] = append(h.runs[id], run)
	if h.active[proc] == nil {
		h.active[proc] = map[string]bool{}
	}
	h.active[proc][id] = true
	gate := h.held[proc]
	h.mu.Unlock()
	out := plan.outcome(count)
	time.Sleep(soakRunTime)
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			out = "cut"
		}
	}
	h.mu.Lock()
	run.outcome = out
	delete(h.active[proc], id)
	h.mu.Unlock()
	if out == "cut" {
		return
	}
	reply := map[string]string{"outcome": out}
	switch out {
	case "defer":
		reply["delay"] = "0s"
	case "reject":
		reply["reason"] = soakRejectReason
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// hold makes proc's runs wait until release.
func (h *soakHandler) hold(proc int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held[proc] = make(chan struct{})
}

// release lets proc's held runs reply.
func (h *soakHandler) release(proc int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.held[proc]; c != nil {
		close(c)
		delete(h.held, proc)
	}
}

// activeIn is how many runs proc has in progress now.
func (h *soakHandler) activeIn(proc int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.active[proc])
}

// runsOf is a copy of the runs of id.
func (h *soakHandler) runsOf(id string) []soakRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]soakRun, 0, len(h.runs[id]))
	for _, r := range h.runs[id] {
		out = append(out, *r)
	}
	return out
}

// soakRecord is the part of an /events record the soak reads.
type soakRecord struct {
	Kind        string    `json:"kind"`
	Time        time.Time `json:"time"`
	MessageID   string    `json:"messageId"`
	Reason      string    `json:"reason"`
	Description string    `json:"description"`
	Error       string    `json:"error"`
	Dropped     uint64    `json:"dropped"`
	Count       int       `json:"deliveryCount"`
	Outcome     string    `json:"outcome"`
	Retry       bool      `json:"routingRetry"`
	AckRetry    bool      `json:"ackRetry"`
}

// soakEvents reads a consume process's /events (NDJSON) from its start to
// its exit and keeps, per message id, the kinds in order.
type soakEvents struct {
	mu      sync.Mutex
	byMsg   map[string][]soakRecord
	kinds   map[string]int
	dropped uint64
	done    chan struct{}
}

// readEvents attaches a reader to /events on addr.
func readEvents(t *testing.T, addr string) *soakEvents {
	t.Helper()
	e := &soakEvents{byMsg: map[string][]soakRecord{}, kinds: map[string]int{}, done: make(chan struct{})}
	resp, err := http.Get("http://" + addr + "/events")
	if err != nil {
		t.Fatalf("read /events of %s: %v", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("read /events of %s: status %d", addr, resp.StatusCode)
	}
	go func() {
		defer close(e.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
		for sc.Scan() {
			var r soakRecord
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			e.mu.Lock()
			e.kinds[r.Kind]++
			e.dropped += r.Dropped
			if r.MessageID != "" {
				e.byMsg[r.MessageID] = append(e.byMsg[r.MessageID], r)
			}
			e.mu.Unlock()
		}
	}()
	return e
}

// of is a copy of the records of id.
func (e *soakEvents) of(id string) []soakRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]soakRecord(nil), e.byMsg[id]...)
}

// count is how many records of kind were read.
func (e *soakEvents) count(kind string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kinds[kind]
}

// ids are the message ids the records name.
func (e *soakEvents) ids() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.byMsg))
	for id := range e.byMsg {
		out = append(out, id)
	}
	return out
}

// soakCase is one transport of the soak: its connection block (endpoint
// through the proxy) and settings, and a direct connection block for
// sending and reading back.
type soakCase struct {
	name                   string
	conn, direct, settings string
	source                 string // the source's URL for dlq peek
	sourceFlags            []string
	// deadLetterDown makes the dead-letter destination refuse (true) or
	// take (false) the routed copies.
	deadLetterDown func(bool)
	// broker describes what the broker itself recorded of a message
	// (by message id), for a report row that must be explained; nil
	// when the broker keeps no such record.
	broker func(id string) string
}

// TestSoak is the soak harness (docs/reliability.md): messages go through
// two `brighter consume` processes on one subscription (one Reactor, one
// Proactor), through a TCP fault proxy in front of the broker (fauxqs; the
// RocketMQ test broker; pstest for Pub/Sub, pull mode), while the harness
// SIGKILLs a process, stops one gracefully with messages buffered, resets
// every connection, adds latency, black-holes the broker and makes the
// dead-letter destination refuse its copies for a while. The handler, an
// http handler served by the test, follows each message's plan (from its
// body: acknowledge, defer then acknowledge, always defer, reject) and
// records every run per message and process. Checked at the end: nothing
// lost, no message handled over its budget within one process, nothing
// dead-lettered by the budget without a handler run, duplicate
// acknowledgements only where a SIGKILL or a lease or settle failure
// explains them, every stop (an /events reader attached) within
// drainTimeout + 5 s with exit 0, no hot loop in a black hole, and /readyz
// 503 within the documented bound of it. Its length is
// BRIGHTER_SOAK_DURATION (make soak), else 60 s.
func TestSoak(t *testing.T) {
	t.Parallel()
	d := soakShort
	if v := os.Getenv(soakEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: %v", soakEnv, v, err)
		}
	}
	run := fmt.Sprintf("k%d", time.Now().UnixNano()%1e9)
	chanName := func(transport string) string { return "soak-" + transport + "-" + run }

	emu := cmdtest.SharedSQS(t)
	sqsDown := &atomic.Bool{}
	sqsTrace := &sqsWire{}
	sqsProxy := startProxy(t, strings.TrimPrefix(refusingSQS(t, emu.Endpoint, "/"+chanName("sqs")+"-dlq", sqsDown, sqsTrace), "http://"))

	rmq, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatalf("start the RocketMQ test broker: %v", err)
	}
	t.Cleanup(rmq.Close)
	rmqProxy := startProxy(t, rmq.Endpoint())
	_, port, _ := net.SplitHostPort(rmqProxy.Addr())
	p, _ := strconv.Atoi(port)
	rmq.AdvertisePort(p) // every RocketMQ call through the proxy, not only the route query
	rmqDLQ := chanName("rocketmq") + "-dlq"
	rmqDown := func(down bool) {
		if !down {
			rmq.FailSend(nil)
			return
		}
		rmq.FailSend(func(topic, _ string) error {
			if topic == rmqDLQ {
				return fmt.Errorf("soak: dead-letter topic %s down", topic)
			}
			return nil
		})
	}

	// Google's emulator stops redelivering nacked messages under load
	// (docs/emulators.md): the Pub/Sub soak runs on pstest, which
	// redelivers faithfully. Its Publish reactor refuses the dead-letter
	// topic's publishes during an outage.
	psDown := &atomic.Bool{}
	ps := pstest.NewServer(pstest.ServerReactorOption{FuncName: "Publish", Reactor: &refusePublish{topic: "projects/soak/topics/" + chanName("gcp") + "-dlq", down: psDown}})
	t.Cleanup(func() { _ = ps.Close() })
	psProxy := startProxy(t, ps.Addr)

	cases := []struct {
		c     soakCase
		proxy *faultproxy.Proxy
	}{
		{soakCase{name: "sqs",
			conn:     fmt.Sprintf("  aws:\n    region: %s\n    endpoint: http://%s\n", sqstest.Region, sqsProxy.Addr()),
			direct:   fmt.Sprintf("  aws:\n    region: %s\n    endpoint: %s\n", sqstest.Region, emu.Endpoint),
			settings: "    sqs: {visibilityTimeout: 4s}\n",
			source:   "sqs://" + chanName("sqs"), sourceFlags: []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region},
			deadLetterDown: sqsDown.Store, broker: sqsTrace.explain}, sqsProxy},
		{soakCase{name: "rocketmq",
			conn:     fmt.Sprintf("  rocketmq:\n    endpoint: %s\n", rmqProxy.Addr()),
			direct:   fmt.Sprintf("  rocketmq:\n    endpoint: %s\n", rmq.Endpoint()),
			settings: "    rocketmq: {consumerGroup: g-soak-" + run + ", invisibleDuration: 4s}\n",
			source:   "rocketmq://" + chanName("rocketmq") + "?group=g-soak-" + run, sourceFlags: []string{"--rocketmq-endpoint", rmq.Endpoint()},
			deadLetterDown: rmqDown}, rmqProxy},
		{soakCase{name: "gcp",
			conn:     fmt.Sprintf("  gcp:\n    projectId: soak\n    emulatorHost: %s\n", psProxy.Addr()),
			direct:   fmt.Sprintf("  gcp:\n    projectId: soak\n    emulatorHost: %s\n", ps.Addr),
			settings: gcpScaleOut("pull", chanName("gcp")),
			source:   "pubsub://projects/soak/subscriptions/" + chanName("gcp"), sourceFlags: []string{"--endpoint", ps.Addr},
			deadLetterDown: psDown.Store, broker: func(id string) string { return pstestRecord(ps, id) }}, psProxy},
	}
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			t.Parallel()
			soak(t, tc.c, tc.proxy, chanName(tc.c.name), d)
		})
	}
}

// refusePublish is a pstest reactor on Publish: while down, a publish to
// topic answers UNAVAILABLE; every other publish goes on.
type refusePublish struct {
	topic string
	down  *atomic.Bool
}

// React refuses r's publish to the dead-letter topic while it is down.
func (r *refusePublish) React(req any) (bool, any, error) {
	if pr, ok := req.(*pubsubpb.PublishRequest); ok && r.down.Load() && pr.GetTopic() == r.topic {
		return true, nil, status.Errorf(codes.Unavailable, "soak: dead-letter topic %s down", r.topic)
	}
	return false, nil, nil
}

// refusingSQS is HTTP middleware in front of the SQS endpoint target: while
// down is set, a SendMessage or SendMessageBatch to the queue whose URL
// ends with queueSuffix answers 500 (the routed copy is refused); every
// other request passes. It returns the middleware's URL.
func refusingSQS(t *testing.T, target, queueSuffix string, down *atomic.Bool, trace *sqsWire) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	// A request its client gave up on (a reset, a black hole) is the
	// soak's doing, not news: answer 502 without a log line.
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	srv := httptest.NewServer(trace.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() && strings.Contains(r.Header.Get("X-Amz-Target"), "SendMessage") {
			body, _ := io.ReadAll(r.Body)
			var req struct{ QueueUrl string }
			if json.Unmarshal(body, &req) == nil && strings.HasSuffix(req.QueueUrl, queueSuffix) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#InternalError","message":"soak: dead-letter queue down"}`)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rp.ServeHTTP(w, r)
	})))
	t.Cleanup(srv.Close)
	return srv.URL
}

func startProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(target)
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// soakConfig is the subscriptions file of the soak on channel with conn,
// the http handler at handlerURL and the pump variant pumpType.
func soakConfig(t *testing.T, dir, name, conn string, c soakCase, channel, handlerURL, pumpType string) string {
	t.Helper()
	file := filepath.Join(dir, name)
	yaml := fmt.Sprintf(`connections:
%ssubscriptions:
  - name: soak
    transport: %s
    channelName: %s
    routingKey: %s
    messagePumpType: %s
    makeChannels: create
    noOfPerformers: %d
    bufferSize: %d
    timeOut: %s
    emptyChannelDelay: 50ms
    channelFailureDelay: 100ms
    maxChannelFailureDelay: 1s
    callTimeout: 2s
    stallAfter: %s
    requeueCount: %d
    deadLetterRoutingKey: %s-dlq
    handler:
      type: http
      url: %s
      timeout: 30s
    drainTimeout: %s
%s`, conn, c.name, channel, channel, pumpType, soakPerformers, soakBufferSize, soakTimeOut, soakStallAfter, soakBudget, channel, handlerURL, soakDrainTimeout, c.settings)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// soakProc is one consume process of the soak and what became of it.
type soakProc struct {
	*consumeProc
	index   int
	events  *soakEvents
	killed  bool // SIGKILLed
	stopped bool // stopped with SIGTERM
	variant string
	// heldAtStop is how many of its handler runs were held when a
	// graceful stop with messages in hand sent SIGTERM, at stopAt.
	heldAtStop int
	stopAt     time.Time
}

// soakDLQCopy is a routed copy read back from the dead-letter destination.
type soakDLQCopy struct {
	ID  string `json:"id"`
	Bag struct {
		Reason  string `json:"rejectionReason"`
		Message string `json:"rejectionMessage"`
	} `json:"bag"`
}

func soak(t *testing.T, c soakCase, proxy *faultproxy.Proxy, channel string, d time.Duration) {
	dir := t.TempDir()
	h := newSoakHandler(t)
	direct := soakConfig(t, dir, "direct.yaml", c.direct, c, channel, h.url(0), "proactor")
	checkRejection := soakCheckRejectionRuns
	if v := os.Getenv(soakRejectionRunsEnv); v != "" {
		checkRejection = v == "1"
	}
	var ids []string
	planOf := map[string]soakPlan{}
	sendRound := func(perPlan int) {
		for _, p := range soakPlans() {
			got := strings.Fields(cmdtest.Brighter(t, dir, "send", "--config", direct, "--subscription", "soak", "--count", strconv.Itoa(perPlan), "--body", soakBody(p)))
			if len(got) != perPlan {
				t.Fatalf("send printed %d ids, want %d", len(got), perPlan)
			}
			for _, id := range got {
				planOf[id] = p
			}
			ids = append(ids, got...)
		}
	}
	var all []*soakProc
	var stops []string // stops that failed their bound
	start0 := func() *soakProc {
		i := len(all) + 1
		variant := []string{"reactor", "proactor"}[i%2]
		file := soakConfig(t, dir, fmt.Sprintf("brighter-%d.yaml", i), c.conn, c, channel, h.url(i), variant)
		p := &soakProc{consumeProc: startConsume(t, dir, file), index: i, variant: variant}
		p.events = readEvents(t, p.addr)
		all = append(all, p)
		return p
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range all {
				t.Logf("consume %d (%s, pid %d) log:\n%s", p.index, p.variant, p.cmd.Process.Pid, soakTail(p.stderr.String(), 40))
			}
		}
	})
	stopGracefully := func(p *soakProc, why string) {
		at := time.Now()
		signalStop(t, p)
		awaitStop(p, at, why, &stops)
	}
	procs := []*soakProc{start0(), start0()}
	killOne := func(i int) {
		procs[i].killed = true
		procs[i].kill(t)
		procs[i] = start0()
	}
	// stopInHand stops a process gracefully while it has work in hand:
	// the handler runs of every process are held, a batch is sent, and
	// SIGTERM goes to the first process found with both performers in a
	// held run (else the one with the most, after 5 s), half a second later, so
	// that its receives have filled their buffers (bufferSize > 1: a
	// Reactor performer holds the rest of its batch, a Proactor receives
	// ahead). The held runs are released just after the signal; the runs
	// the process starts after it are the buffered messages its drain
	// handed to the handler. Then a replacement starts in its place.
	stopInHand := func() {
		for _, p := range procs {
			h.hold(p.index)
		}
		sendRound(soakBufferSize)
		busiest := func() int {
			b := 0
			for i, p := range procs {
				if h.activeIn(p.index) > h.activeIn(procs[b].index) {
					b = i
				}
			}
			return b
		}
		soakEventually(5*time.Second, func() bool { return h.activeIn(procs[busiest()].index) >= soakPerformers })
		time.Sleep(500 * time.Millisecond)
		i := busiest()
		p := procs[i]
		p.heldAtStop, p.stopAt = h.activeIn(p.index), time.Now()
		held := make([]int, len(procs))
		for j, q := range procs {
			held[j] = q.index
		}
		go func() {
			time.Sleep(200 * time.Millisecond)
			for _, proc := range held {
				h.release(proc)
			}
		}()
		stopGracefully(p, "graceful stop with work in hand")
		procs[i] = start0()
	}
	var stalls, hot []string
	start := time.Now()
	round := 0
	outages := 0
	// No phase starts within soakPhaseRoom of the end: a black hole or a
	// stop started late would overrun the soak's length (at least one full
	// round runs whatever the duration).
	for time.Since(start)+soakPhaseRoom < d || round < 6 {
		sendRound(4)
		switch round % 6 {
		case 0: // latency both ways
			proxy.SetLatency(150 * time.Millisecond)
			proxy.SetMode(faultproxy.Latency)
			soakPause(d)
			proxy.SetMode(faultproxy.Pass)
		case 1:
			killOne(round / 6 % 2)
		case 2: // connection resets, and the dead-letter destination refuses copies
			refused0 := refusedRoutings(all)
			c.deadLetterDown(true)
			outages++
			// Messages sent into the outage: the reject plan's route at
			// once, so a routing meets the outage however loaded the
			// machine is (the round's first messages may have routed
			// before it began).
			sendRound(1)
			for range 3 {
				proxy.Reset()
				soakPause(d / 3)
			}
			// Down until a routing was refused, for at most 30 s more.
			soakEventually(30*time.Second, func() bool { return refusedRoutings(all) > refused0 })
			c.deadLetterDown(false)
		case 3: // black hole past stallAfter: not ready, and no hot loop
			cpu0 := soakCPU(t, procs)
			holeStart := time.Now()
			proxy.SetMode(faultproxy.BlackHole)
			proxy.Reset() // open connections too
			notReady := map[int]time.Duration{}
			bound := soakReadyBound + stallLoadSlack
			soakEventually(bound+5*time.Second, func() bool {
				for i, p := range procs {
					if _, ok := notReady[i]; !ok && cmdtest.Readyz(p.addr) == 503 {
						notReady[i] = time.Since(holeStart)
					}
				}
				return len(notReady) == len(procs)
			})
			for i, p := range procs {
				if at, ok := notReady[i]; !ok || at > bound {
					stalls = append(stalls, fmt.Sprintf("round %d: consume %d (%s) not ready only %s into a black hole, want within %s (docs/commands/consume.md: max(stallAfter, timeOut + 10s) + timeOut = %s, + %s load slack)",
						round, p.index, p.variant, soakSince(at, ok, holeStart), bound, soakReadyBound, stallLoadSlack))
				}
			}
			held := time.Since(holeStart)
			for i, used := range soakCPU(t, procs) {
				if share := float64(used-cpu0[i]) / float64(held); share > 0.25 {
					hot = append(hot, fmt.Sprintf("round %d: consume %d used %.0f%% of a core in a black hole", round, procs[i].index, 100*share))
				}
			}
			proxy.SetMode(faultproxy.Pass)
			for _, p := range procs {
				if !soakEventually(60*time.Second, func() bool { return cmdtest.Readyz(p.addr) == 200 }) {
					stalls = append(stalls, fmt.Sprintf("round %d: consume %d not ready a minute after the black hole lifted", round, p.index))
				}
			}
		case 4:
			killOne(1 - round/6%2)
		case 5:
			stopInHand()
		}
		round++
	}
	proxy.SetMode(faultproxy.Pass)
	c.deadLetterDown(false)
	chaos := time.Since(start)

	dlq := map[string]soakDLQCopy{}
	readDLQ := func() {
		out := cmdtest.Brighter(t, dir, "dlq", "peek", "soak", "--config", direct, "--output", "json")
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			var m soakDLQCopy
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("peek line %q: %v", sc.Text(), err)
			}
			dlq[m.ID] = m
		}
	}
	acked := func(id string) bool {
		for _, r := range h.runsOf(id) {
			if r.outcome == "ack" {
				return true
			}
		}
		return false
	}
	// Every message ends: acknowledged by its handler or dead-lettered.
	lastRead := time.Time{}
	settled := soakEventually(3*time.Minute, func() bool {
		if time.Since(lastRead) > 3*time.Second {
			readDLQ()
			lastRead = time.Now()
		}
		for _, id := range ids {
			if _, ok := dlq[id]; !ok && !acked(id) {
				return false
			}
		}
		return true
	})
	if !settled {
		t.Errorf("after 3 minutes some messages are neither acknowledged nor dead-lettered (reported as lost below)")
	}
	// The final stop: every process at once, /events read, each within
	// the drain bound.
	at := time.Now()
	settle := at.Sub(start) - chaos
	for _, p := range procs {
		signalStop(t, p)
	}
	for _, p := range procs {
		awaitStop(p, at, "final stop", &stops)
	}
	finalStop := time.Since(at)
	readDLQ()

	// The report.
	var lost, overBudget, noRun, dup, dupExplained, wrongEnd, rejectionText, cutByStop []string
	budgetRuns := map[int]int{} // handler runs of a budget dead-letter -> messages
	byIndex := map[int]*soakProc{}
	for _, p := range all {
		byIndex[p.index] = p
	}
	dupTotal, dupBound, gaps := 0, 0, 0
	for _, id := range ids {
		runs := h.runsOf(id)
		plan := planOf[id]
		copyOf, dead := dlq[id]
		acks := 0
		perProc := map[int]int{}
		for _, r := range runs {
			perProc[r.proc]++
			if r.outcome == "ack" {
				acks++
			}
		}
		if acks == 0 && !dead {
			lost = append(lost, fmt.Sprintf("%s (plan %s): runs %s", id, plan.name, soakRunsText(runs)))
		}
		for proc, n := range perProc {
			// An acknowledgement whose broker call failed leaves the
			// message on the broker, and the process that ran the handler
			// acknowledges its redelivery without running the handler
			// again (a restart, which loses that record, is another
			// process here). Only an acknowledgement sent under a lease
			// that could not be kept may be followed by a handler run in
			// the same process: the broker handed the message out again
			// before the settle, and took the settle as done or the
			// redelivery came past the pump's watch for it. Each ack run
			// of the process but its last allows one more run, then, when
			// the process's /events show lease trouble for the message
			// (or lost records); a failed settle alone, or a deferral,
			// never does.
			allowed := soakBudget
			if p := byIndex[proc]; soakLeaseTroubled(p.events.of(id)) || p.events.dropped > 0 {
				allowed += soakAcksBeforeLast(runs, proc)
			}
			if n > allowed {
				overBudget = append(overBudget, fmt.Sprintf("%s (plan %s): %d handler runs in consume %d, budget %d (%d allowed): %s\n%s", id, plan.name, n, proc, soakBudget, allowed, soakRunsText(runs), soakExplain(all, c, id)))
			}
		}
		gaps += soakCountGaps(runs)
		budgetDead := dead && copyOf.Bag.Message != soakRejectReason
		if budgetDead {
			budgetRuns[len(runs)]++
			if len(runs) == 0 {
				noRun = append(noRun, fmt.Sprintf("%s (plan %s): dead-lettered (%s: %q) and never handled", id, plan.name, copyOf.Bag.Reason, copyOf.Bag.Message))
			}
			if checkRejection && !soakRejectionNamesRuns(copyOf.Bag.Message) {
				rejectionText = append(rejectionText, fmt.Sprintf("%s: rejectionMessage %q names not both the deliveries and the handler runs", id, copyOf.Bag.Message))
			}
		}
		switch {
		case plan.reject && acks > 0, plan.defers < 0 && acks > 0:
			wrongEnd = append(wrongEnd, fmt.Sprintf("%s (plan %s) acknowledged: %s", id, plan.name, soakRunsText(runs)))
		case plan.reject && dead && copyOf.Bag.Message != soakRejectReason && len(runs) == 0:
			wrongEnd = append(wrongEnd, fmt.Sprintf("%s (plan reject) dead-lettered by the budget, never handled", id))
		case !plan.reject && plan.defers >= 0 && dead && acks == 0:
			wrongEnd = append(wrongEnd, fmt.Sprintf("%s (plan %s) dead-lettered (%s: %q), never acknowledged: %s", id, plan.name, copyOf.Bag.Reason, copyOf.Bag.Message, soakRunsText(runs)))
		}
		// Duplicates: a message handled to an acknowledgement more than
		// once. Each ack run but the last may have been followed by a
		// redelivery only if its process was SIGKILLed, or its /events
		// shows a failed settle or lease for the message.
		if acks > 1 {
			dupTotal += acks - 1
			dup = append(dup, fmt.Sprintf("%s (plan %s): %s", id, plan.name, soakRunsText(runs)))
			explained := 0
			seen := 0
			for _, r := range runs {
				if r.outcome != "ack" {
					continue
				}
				seen++
				if seen == acks {
					break
				}
				p := byIndex[r.proc]
				if p.killed || soakTroubled(p.events.of(id)) || p.events.dropped > 0 {
					explained++
				}
			}
			dupBound += explained
			if explained < acks-1 {
				dupExplained = append(dupExplained, fmt.Sprintf("%s (plan %s): acknowledged %d times, %d explained by a SIGKILL or a lease or settle failure: %s\n%s", id, plan.name, acks, explained, soakRunsText(runs), soakExplain(all, c, id)))
			}
		}
	}
	// Graceful stops with work in hand: every held run replied (none cut
	// off by the stop), and the runs started after SIGTERM are what the
	// drain handed over from the buffers.
	heldTotal, drained := 0, 0
	for _, p := range all {
		if p.stopAt.IsZero() {
			continue
		}
		heldTotal += p.heldAtStop
		for _, id := range ids {
			for _, r := range h.runsOf(id) {
				if r.proc != p.index {
					continue
				}
				if r.start.After(p.stopAt) {
					drained++
				}
				if r.outcome == "cut" && !p.killed {
					cutByStop = append(cutByStop, fmt.Sprintf("%s: a run in consume %d (%s) was cut off by its graceful stop: %s", id, p.index, p.variant, soakRunsText(h.runsOf(id))))
				}
			}
		}
	}
	refused := refusedRoutings(all)
	// The source is empty once the last leases lapsed.
	var left []string
	if !soakEventually(time.Minute, func() bool {
		left = cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", c.source, "--output", "json"}, c.sourceFlags...)...)
		return len(left) == 0
	}) {
		t.Errorf("the source still holds %d messages: %v", len(left), left)
	}
	kills, graceful, stopsInHand, settleFailed, lapsed, extendFailed := 0, 0, 0, 0, 0, 0
	for _, p := range all {
		settleFailed += p.events.count("settle-failed")
		lapsed += p.events.count("lease-lapsed")
		extendFailed += p.events.count("lease-extend-failed")
		if p.killed {
			kills++
		}
		if p.stopped {
			graceful++
		}
		if !p.stopAt.IsZero() {
			stopsInHand++
		}
	}
	report := []struct {
		what  string
		items []string
	}{
		{"lost (published, never acknowledged nor dead-lettered)", lost},
		{"over budget (more than requeueCount handler runs of one message in one process, a run after an ack sent under a lease that could not be kept apart)", overBudget},
		{"dead-lettered by the budget without a handler run", noRun},
		{"duplicates not explained by a SIGKILL or a lease or settle failure", dupExplained},
		{"ended other than its plan allows", wrongEnd},
		{"handler runs cut off by a graceful stop", cutByStop},
		{"stops not within drainTimeout + 5 s with exit 0 (/events read)", stops},
		{"readiness", stalls},
		{"hot loop", hot},
	}
	if checkRejection {
		report = append(report, struct {
			what  string
			items []string
		}{"budget dead-letters whose rejectionMessage names not the deliveries and the handler runs", rejectionText})
	}
	var lines []string
	for _, r := range report {
		lines = append(lines, fmt.Sprintf("  %-90s %d", r.what, len(r.items)))
		for i, it := range r.items {
			if i == 10 {
				t.Errorf("%s: ... and %d more", r.what, len(r.items)-10)
				break
			}
			t.Errorf("%s: %s", r.what, it)
		}
	}
	var br []string
	for n, k := range budgetRuns {
		br = append(br, fmt.Sprintf("%d run(s): %d", n, k))
	}
	sort.Strings(br)
	t.Logf("soak %s: %s (chaos %s, every message settled %s later, final stop %s), %d rounds, %d messages, %d processes, %d SIGKILLs, %d graceful stops (%d with work in hand: %d runs held at SIGTERM, %d runs started after it), %d connection resets, %d dead-letter outages (%d routings refused), %d dead-lettered (budget: %s)\n"+
		"/events: %d settle-failed, %d lease-extend-failed, %d lease-lapsed records; %d deliveries reached no handler (gaps in the presented counts)\nduplicates: %d acknowledgements more than once (bound %d: ack runs cut off by a SIGKILL or a lease or settle failure) over %d messages\nreport (each must be 0):\n%s",
		c.name, time.Since(start).Round(time.Second), chaos.Round(time.Second), settle.Round(time.Second), finalStop.Round(100*time.Millisecond), round, len(ids), len(all), kills, graceful, stopsInHand, heldTotal, drained, proxy.Resets(), outages, refused, len(dlq), strings.Join(br, ", "),
		settleFailed, extendFailed, lapsed, gaps, dupTotal, dupBound, len(dup), strings.Join(lines, "\n"))
	if refused == 0 {
		t.Errorf("no routing was refused in %d dead-letter outages: the outage window did not reach the dead-letter destination", outages)
	}
	if stopsInHand > 0 && heldTotal == 0 {
		t.Errorf("no graceful stop found a handler run in progress: the stops did not exercise a drain")
	}
}

// signalStop sends p SIGTERM.
func signalStop(t *testing.T, p *soakProc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	p.stopped = true
}

// awaitStop waits for p, signalled at at, to exit 0 within drainTimeout +
// soakStopGrace with its /events stream ending with it; what falls short
// is added to stops, named by why. A process still running then is
// SIGKILLed and counted as killed.
func awaitStop(p *soakProc, at time.Time, why string, stops *[]string) {
	select {
	case p.err = <-p.done:
		p.exited = true
	case <-time.After(time.Until(at.Add(soakDrainTimeout + soakStopGrace))):
		*stops = append(*stops, fmt.Sprintf("%s: consume %d (%s) still running %s after SIGTERM (drainTimeout %s + %s), /events read", why, p.index, p.variant, time.Since(at).Round(time.Millisecond), soakDrainTimeout, soakStopGrace))
		_ = p.cmd.Process.Kill()
		p.err, p.exited = <-p.done, true
		p.killed = true // it did not stop: whatever it held counts as cut off
		return
	}
	if p.err != nil {
		*stops = append(*stops, fmt.Sprintf("%s: consume %d (%s) stopped with %v after %s, want exit 0", why, p.index, p.variant, p.err, time.Since(at).Round(time.Millisecond)))
	}
	select {
	case <-p.events.done:
	case <-time.After(5 * time.Second):
		*stops = append(*stops, fmt.Sprintf("%s: consume %d's /events stream did not end with the process", why, p.index))
	}
}

// refusedRoutings is how many rejected records of procs carry an error: a
// routing that failed (the dead-letter destination refused the copy) and
// released the message.
func refusedRoutings(procs []*soakProc) int {
	n := 0
	for _, p := range procs {
		for _, id := range p.events.ids() {
			for _, r := range p.events.of(id) {
				if r.Kind == "rejected" && r.Error != "" {
					n++
				}
			}
		}
	}
	return n
}

// soakTroubled reports whether a process's records of a message show that
// an acknowledgement of it may not have landed.
func soakTroubled(rs []soakRecord) bool {
	for _, r := range rs {
		switch r.Kind {
		case "settle-failed", "lease-extend-failed", "lease-lapsed", "lease-capped", "stale-settle":
			// the acknowledge failed, the lease could not be kept, or a
			// settle used a lapsed lease
			return true
		}
	}
	return false
}

// soakLeaseTroubled reports whether a process's records of a message show
// that its lease could not be kept, so that an acknowledgement of it may
// have been sent with a receipt the broker had already replaced: an
// extension failed, the lease lapsed or was capped, or a settle used a
// lapsed receipt. A failed settle alone is not such trouble: the pump
// retries a failed acknowledgement without a handler run.
func soakLeaseTroubled(rs []soakRecord) bool {
	for _, r := range rs {
		switch r.Kind {
		case "lease-extend-failed", "lease-lapsed", "lease-capped", "stale-settle":
			return true
		}
	}
	return false
}

// soakExplain describes what every process's /events and the broker
// recorded of message id: what a report row that must be explained
// prints beside the runs.
func soakExplain(procs []*soakProc, c soakCase, id string) string {
	var b strings.Builder
	for _, p := range procs {
		rs := p.events.of(id)
		if len(rs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  consume %d (%s) /events:", p.index, p.variant)
		for _, r := range rs {
			fmt.Fprintf(&b, "\n    %s %s count=%d", r.Time.Format("15:04:05.000"), r.Kind, r.Count)
			if r.Outcome != "" {
				fmt.Fprintf(&b, " outcome=%s", r.Outcome)
			}
			if r.Retry || r.AckRetry {
				fmt.Fprintf(&b, " retry")
			}
			if r.Error != "" {
				fmt.Fprintf(&b, " error=%q", r.Error)
			}
		}
		b.WriteString("\n")
	}
	if c.broker != nil {
		b.WriteString("  broker: " + c.broker(id))
	}
	return b.String()
}

// pstestRecord is what pstest recorded of the message whose ce-id is id:
// its deliveries, acknowledgements and ModifyAckDeadline calls.
func pstestRecord(ps *pstest.Server, id string) string {
	var b strings.Builder
	for _, m := range ps.Messages() {
		if m.Attributes["ce-id"] != id {
			continue
		}
		fmt.Fprintf(&b, "%s on %s: %d deliveries, %d acks, modacks:", m.ID, m.Topic, m.Deliveries, m.Acks)
		for _, ma := range m.Modacks {
			fmt.Fprintf(&b, " %s %s:%ds", ma.ReceivedAt.Format("15:04:05.000"), ma.AckID, ma.AckDeadline)
		}
		b.WriteString("; ")
	}
	return b.String()
}

// soakRejectionNamesRuns reports whether a budget rejection's message names
// the deliveries and the handler runs ("... delivered N times, handled M
// times in this process ...").
func soakRejectionNamesRuns(msg string) bool {
	return regexp.MustCompile(`delivered \d+ times?\b.*handled \d+ times?\b`).MatchString(msg)
}

// soakAcksBeforeLast counts the runs of process proc in runs that ended in
// an acknowledgement, its last run left out.
func soakAcksBeforeLast(runs []soakRun, proc int) int {
	n, last := 0, -1
	for i, r := range runs {
		if r.proc == proc {
			last = i
		}
	}
	for i, r := range runs {
		if r.proc == proc && i != last && r.outcome == "ack" {
			n++
		}
	}
	return n
}

// soakRunsText describes runs: process:count:outcome each.
func soakRunsText(runs []soakRun) string {
	var b strings.Builder
	for i, r := range runs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d:%d:%s", r.proc, r.count, r.outcome)
	}
	if b.Len() == 0 {
		return "none"
	}
	return "[proc:count:outcome] " + b.String()
}

// soakCountGaps is how many delivery counts below the highest presented to
// a run of the message no run was presented with: deliveries that reached
// no handler (a receive whose answer a reset cut off, a lease that lapsed
// before dispatch, a message released by a stop or lost with a SIGKILL).
func soakCountGaps(runs []soakRun) int {
	seen := map[int]bool{}
	top := -1
	for _, r := range runs {
		seen[r.count] = true
		top = max(top, r.count)
	}
	return top + 1 - len(seen)
}

// soakSince says how long after from a thing happened, or that it had not.
func soakSince(at time.Duration, ok bool, from time.Time) string {
	if !ok {
		return "never (" + time.Since(from).Round(time.Second).String() + ")"
	}
	return at.Round(100 * time.Millisecond).String()
}

// soakPause is one chaos phase's length: a sixth of the soak's length in
// rounds of six, between 2 s and 20 s.
func soakPause(d time.Duration) {
	time.Sleep(min(max(d/36, 2*time.Second), 20*time.Second))
}

// soakEventually polls cond every 100 ms for up to within.
func soakEventually(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// procStat reads /proc/PID/stat of process pid.
func procStat(pid int) (procfs.ProcStat, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return procfs.ProcStat{}, fmt.Errorf("open /proc: %w", err)
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return procfs.ProcStat{}, fmt.Errorf("find process %d: %w", pid, err)
	}
	return p.Stat()
}

// soakCPU is the CPU time (user + system) each process has used so far,
// from /proc/PID/stat.
func soakCPU(t *testing.T, procs []*soakProc) []time.Duration {
	t.Helper()
	out := make([]time.Duration, len(procs))
	for i, p := range procs {
		s, err := procStat(p.cmd.Process.Pid)
		if err != nil {
			t.Fatalf("read the CPU time of pid %d: %v", p.cmd.Process.Pid, err)
		}
		out[i] = time.Duration(s.CPUTime() * float64(time.Second))
	}
	return out
}

// soakTail is the last n lines of s.
func soakTail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(len(ls)-n, 0):], "\n")
}
