package consume_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
)

// Settings of BenchmarkConsumePubSub (docs/performance.md): the backlogs
// per side (benchGCPFull, and benchGCPSmall where start-up weighs most), the
// pairs an op (benchGCPTrials), and the subscription's bufferSize and noOfPerformers, which the
// plain loop matches through flow control (MaxOutstandingMessages =
// bufferSize x noOfPerformers) and NumGoroutines (1, as the stream consumer
// uses).
const (
	benchGCPFull       = 5000
	benchGCPSmall      = 1000
	benchGCPTrials     = 3
	benchGCPBuffer     = 10
	benchGCPPerformers = 4
	benchGCPProject    = "brighter-bench"
	benchGCPPoll       = 20 * time.Millisecond
	benchGCPPollMax    = 250 * time.Millisecond
	benchGCPDeadline   = 5 * time.Minute
)

// BenchmarkConsumePubSub measures `brighter consume` against a plain
// cloud.google.com/go/pubsub/v2 Subscriber.Receive loop that only acks, on
// the same Google Pub/Sub emulator (gcptest) in one run (target ratio >=
// 0.95, docs/performance.md).
//
// Each pair publishes the case's messages in Brighter's Pub/Sub wire format
// to each of two topics (timer stopped), then
//   - runs `brighter consume` (transport gcp, mode stream or pull, proactor,
//     builtin ack handler, bufferSize 10, noOfPerformers 4) through run()
//     on one subscription, and
//   - runs a plain program on the other: pubsub.NewClient to the emulator
//     (through the same counting proxy) and its Subscriber, inside its
//     timer as brighter's start-up is inside brighter's, then Receive with
//     NumGoroutines 1 and MaxOutstandingMessages 40, acking each message,
//
// each timed from its start until it has acknowledged every message of its
// topic (brighter: brighter_messages_acknowledged_total on its --listen
// /metrics; plain: a Prometheus counter of the same name after m.Ack(),
// served and scraped the same way, benchGCPAckedServer, so that both sides
// pay the instrument; both polled on the schedule of benchGCPWaitAcked,
// every 20 ms near the end), then stopped by cancelling its
// context. Which side goes first alternates. One op runs benchGCPTrials
// pairs; the figures are medians over every pair of every op. Both sides
// reach the emulator through a counting h2c proxy (faultproxy.Counter).
//
// Reported: brighter-msgs/s, plain-msgs/s, ratio (brighter / plain, both
// start-ups included, per pair), min-ratio, ratio-asym (over the loop
// timed from its Receive: its client made before it, the anchor before
// 2026-12-05 23:00), plain-startup-ms (NewClient and the Subscriber) and
// brighter-startup-ms (to its last start-up call answered, validate's
// GetSubscription); the CPU each side used (this process, the counting
// proxy included: user + system), brighter-cpu-us/msg, plain-cpu-us/msg,
// cpu-per-msg-ratio (the target is <= 1.1) and cpu-ratio-asym (the loop's
// CPU less its start-up's; each side starts after a runtime.GC, so that
// neither pays for collecting the fill's garbage or the other side's);
// heap allocations a message (brighter-allocs/msg,
// plain-allocs/msg); goroutine scheduling events the runtime recorded per
// 1,000 messages (brighter-sched/kmsg, plain-sched/kmsg: a sample of the
// hand-offs between goroutines, see benchAllocs) and garbage collections
// (brighter-gcs, plain-gcs) a side's run; and per message over all pairs: brighter-calls/msg
// and plain-calls/msg (every gRPC call during the runs, a stream counted
// once), brighter-ack/msg and plain-ack/msg (Acknowledge RPCs) and
// brighter-modack/msg (ModifyAckDeadline RPCs). The emulator's own
// delivery rate bounds both sides (docs/performance.md). Each side runs
// under a profiler label (side=brighter or side=plain): a -cpuprofile splits
// by it (go tool pprof -tagfocus side=brighter).
//
// Sub-benchmarks: stream (brighter's `mode: stream`, the client library
// batching acknowledgements itself) and pull (`mode: pull`: the pump's
// batcher sends AcknowledgeRequests of up to gcp.PullAckBatchMax ack ids),
// with benchGCPFull messages, and stream-1000 and pull-1000 with
// benchGCPSmall, where start-up weighs most; the plain loop is the client
// library's Receive in all. The pull cases have a second anchor of pull's
// own protocol, run in turn with the other two sides (each side first in
// one pair of three): a plain loop of SubscriptionAdminClient.Pull
// (MaxMessages bufferSize) and Acknowledge of each Pull's ack ids
// (benchGCPPullLoop), reported as pullloop-msgs/s, ratio-pullloop (its
// time over brighter's), pullloop-cpu-us/msg, cpu-per-msg-ratio-pullloop
// (brighter's CPU a message over its), pullloop-allocs/msg and
// pullloop-calls/msg.
func BenchmarkConsumePubSub(b *testing.B) {
	var counter *faultproxy.Counter
	client, srv := gcptest.StartVia(b, benchGCPProject, nil, gcp.Connect, func(emulator string) string {
		counter = startGCPCounter(b, emulator)
		return counter.Addr()
	})
	for _, tc := range []struct {
		name, mode string
		messages   int
	}{
		{"stream", "stream", benchGCPFull}, {"pull", "pull", benchGCPFull},
		{"stream-1000", "stream", benchGCPSmall}, {"pull-1000", "pull", benchGCPSmall},
	} {
		n := tc.messages
		if benchSmoke() {
			n = benchSmokeMessages
		}
		b.Run(tc.name, func(b *testing.B) {
			benchGCPMode(b, client, srv, counter, tc.mode, n)
		})
	}
}

// benchGCPMode runs b.N ops of benchGCPTrials pairs of BenchmarkConsumePubSub
// with brighter in mode (stream or pull) and n messages a side, and reports
// its metrics.
func benchGCPMode(b *testing.B, client *pubsub.Client, srv *gcptest.Server, counter *faultproxy.Counter, mode string, n int) {
	project := srv.Project
	dir := b.TempDir()
	var bTook, pTook, ratios, asymRatios, bCPU, pCPU, cpuRatios, cpuAsymRatios, pStartup, bStartup, bAllocs, pAllocs []float64
	var bCalls, pCalls map[string]int
	// The pull cases' second anchor: a plain loop of the pull protocol
	// (benchGCPPullLoop).
	pullLoop := mode == "pull"
	var lTook, lRatios, lCPU, lCPURatios, lAllocs, lSched, lGCs []float64
	var bSched, pSched, bGCs, pGCs []float64
	var lCalls map[string]int
	trials := benchGCPTrials
	if benchSmoke() {
		trials = 1
	}
	per := func(x uint64) float64 { return float64(x) / float64(n) }
	b.ResetTimer()
	for i := range b.N {
		for trial := range trials {
			b.StopTimer()
			tag := fmt.Sprintf("%s-%d-%d-%d", mode, time.Now().UnixNano()%1e9, i, trial)
			bt := "bench-brighter-" + tag
			pt := "bench-plain-" + tag
			benchGCPFill(b, client, project, bt, n)
			benchGCPFill(b, client, project, pt, n)
			lt := "bench-pullloop-" + tag
			if pullLoop {
				benchGCPFill(b, client, project, lt, n)
			}
			cfg := benchGCPConfig(b, dir, project, counter.Addr(), bt, mode)
			b.StartTimer()
			var btook, bstart, bcpu, pcpu time.Duration
			var balloc, palloc benchAllocs
			var pr benchSQSPlainRun
			brighter := func() {
				counter.Reset()
				runtime.GC() // the fill's and the other side's garbage, collected before the clock starts
				cpu, mem := benchProcessCPU(b), benchReadAllocs()
				btook, bstart = benchGCPBrighter(b, counter, cfg, n)
				bcpu, balloc = benchProcessCPU(b)-cpu, benchReadAllocs().since(mem)
				bCalls = benchGCPAdd(bCalls, counter.Reset())
			}
			plain := func() {
				counter.Reset()
				runtime.GC()
				cpu, mem := benchProcessCPU(b), benchReadAllocs()
				pr = benchGCPPlain(b, project, counter.Addr(), pt, n)
				pcpu, palloc = benchProcessCPU(b)-cpu, benchReadAllocs().since(mem)
				pCalls = benchGCPAdd(pCalls, counter.Reset())
			}
			var lr benchSQSPlainRun
			var lcpu time.Duration
			var lalloc benchAllocs
			if !pullLoop {
				benchPair((i*trials+trial)%2 == 0, brighter, plain)
			} else {
				loop := func() {
					counter.Reset()
					runtime.GC()
					cpu, mem := benchProcessCPU(b), benchReadAllocs()
					lr = benchGCPPullLoop(b, project, counter.Addr(), lt, n)
					lcpu, lalloc = benchProcessCPU(b)-cpu, benchReadAllocs().since(mem)
					lCalls = benchGCPAdd(lCalls, counter.Reset())
				}
				// The three sides in turn, each pair's first one
				// round: brighter, plain, loop; plain, loop, brighter; ...
				sides := []struct {
					name string
					f    func()
				}{{"brighter", brighter}, {"plain", plain}, {"pullloop", loop}}
				for k := range sides {
					s := sides[(i*trials+trial+k)%len(sides)]
					benchSide(s.name, s.f)
				}
				lTook = append(lTook, lr.took.Seconds())
				lRatios = append(lRatios, lr.took.Seconds()/btook.Seconds())
				lCPU = append(lCPU, float64(lcpu.Microseconds())/float64(n))
				lCPURatios = append(lCPURatios, bcpu.Seconds()/lcpu.Seconds())
				lAllocs = append(lAllocs, per(lalloc.mallocs))
				lSched = append(lSched, 1000*per(lalloc.sched))
				lGCs = append(lGCs, float64(lalloc.gcs))
				b.Logf("pair %d.%d: pull loop %s (start-up %s)", i, trial, lr.took.Round(time.Millisecond), lr.startup.Round(10*time.Microsecond))
			}
			b.Logf("pair %d.%d: brighter %s (start-up %s), plain %s (start-up %s) for %d messages each",
				i, trial, btook.Round(time.Millisecond), bstart.Round(10*time.Microsecond), pr.took.Round(time.Millisecond), pr.startup.Round(10*time.Microsecond), n)
			bTook = append(bTook, btook.Seconds())
			pTook = append(pTook, pr.took.Seconds())
			ratios = append(ratios, pr.took.Seconds()/btook.Seconds())
			asymRatios = append(asymRatios, (pr.took-pr.startup).Seconds()/btook.Seconds())
			pStartup = append(pStartup, float64(pr.startup.Microseconds())/1000)
			bStartup = append(bStartup, float64(bstart.Microseconds())/1000)
			bCPU = append(bCPU, float64(bcpu.Microseconds())/float64(n))
			pCPU = append(pCPU, float64(pcpu.Microseconds())/float64(n))
			cpuRatios = append(cpuRatios, bcpu.Seconds()/pcpu.Seconds())
			cpuAsymRatios = append(cpuAsymRatios, bcpu.Seconds()/(pcpu-pr.startupCPU).Seconds())
			bAllocs = append(bAllocs, per(balloc.mallocs))
			pAllocs = append(pAllocs, per(palloc.mallocs))
			bSched = append(bSched, 1000*per(balloc.sched))
			pSched = append(pSched, 1000*per(palloc.sched))
			bGCs = append(bGCs, float64(balloc.gcs))
			pGCs = append(pGCs, float64(palloc.gcs))
		}
	}
	b.StopTimer()
	total := float64(b.N * trials * n)
	b.Logf("%d ops: brighter %s; plain %s", b.N, faultproxy.CallsText(bCalls), faultproxy.CallsText(pCalls))
	b.ReportMetric(float64(n)/median(bTook), "brighter-msgs/s")
	b.ReportMetric(float64(n)/median(pTook), "plain-msgs/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "min-ratio")
	b.ReportMetric(median(asymRatios), "ratio-asym")
	b.ReportMetric(median(pStartup), "plain-startup-ms")
	b.ReportMetric(median(bStartup), "brighter-startup-ms")
	b.ReportMetric(median(bCPU), "brighter-cpu-us/msg")
	b.ReportMetric(median(pCPU), "plain-cpu-us/msg")
	b.ReportMetric(median(cpuRatios), "cpu-per-msg-ratio")
	b.ReportMetric(median(cpuAsymRatios), "cpu-ratio-asym")
	b.ReportMetric(median(bAllocs), "brighter-allocs/msg")
	b.ReportMetric(median(pAllocs), "plain-allocs/msg")
	b.ReportMetric(median(bSched), "brighter-sched/kmsg")
	b.ReportMetric(median(pSched), "plain-sched/kmsg")
	b.ReportMetric(median(bGCs), "brighter-gcs")
	b.ReportMetric(median(pGCs), "plain-gcs")
	b.ReportMetric(float64(faultproxy.Sum(bCalls))/total, "brighter-calls/msg")
	b.ReportMetric(float64(faultproxy.Sum(pCalls))/total, "plain-calls/msg")
	b.ReportMetric(float64(bCalls["Acknowledge"])/total, "brighter-ack/msg")
	b.ReportMetric(float64(pCalls["Acknowledge"])/total, "plain-ack/msg")
	b.ReportMetric(float64(bCalls["ModifyAckDeadline"])/total, "brighter-modack/msg")
	if pullLoop {
		b.Logf("%d ops: pull loop %s", b.N, faultproxy.CallsText(lCalls))
		b.ReportMetric(float64(n)/median(lTook), "pullloop-msgs/s")
		b.ReportMetric(median(lRatios), "ratio-pullloop")
		b.ReportMetric(median(lCPU), "pullloop-cpu-us/msg")
		b.ReportMetric(median(lCPURatios), "cpu-per-msg-ratio-pullloop")
		b.ReportMetric(median(lAllocs), "pullloop-allocs/msg")
		b.ReportMetric(median(lSched), "pullloop-sched/kmsg")
		b.ReportMetric(median(lGCs), "pullloop-gcs")
		b.ReportMetric(float64(faultproxy.Sum(lCalls))/total, "pullloop-calls/msg")
	}
}

// startGCPCounter starts a counting h2c proxy (faultproxy.StartGRPCCounter)
// to the emulator at host:port emulator, closed when b ends.
func startGCPCounter(b *testing.B, emulator string) *faultproxy.Counter {
	b.Helper()
	c, err := faultproxy.StartGRPCCounter(emulator)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// benchGCPAdd adds the counts of more to into (made when nil) and returns it.
func benchGCPAdd(into, more map[string]int) map[string]int {
	if into == nil {
		into = map[string]int{}
	}
	for k, v := range more {
		into[k] += v
	}
	return into
}

// benchGCPFill creates topic name with a subscription of the same name and
// publishes n messages encoded by gcp.Encode.
func benchGCPFill(b *testing.B, c *pubsub.Client, project, name string, n int) {
	b.Helper()
	ctx := context.Background()
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + project + "/topics/" + name}); err != nil {
		b.Fatalf("create topic %s: %v", name, err)
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + project + "/subscriptions/" + name, Topic: "projects/" + project + "/topics/" + name, AckDeadlineSeconds: 60,
	}); err != nil {
		b.Fatalf("create subscription %s: %v", name, err)
	}
	pub := c.Publisher(name)
	defer pub.Stop()
	results := make([]*pubsub.PublishResult, 0, n)
	for j := range n {
		m := message.New(name+"-"+strconv.Itoa(j), name, message.MTEvent, benchSQSBody)
		w := gcp.Encode(m)
		results = append(results, pub.Publish(ctx, &pubsub.Message{Data: w.Data, Attributes: w.Attributes}))
	}
	for _, r := range results {
		if _, err := r.Get(ctx); err != nil {
			b.Fatalf("publish to %s: %v", name, err)
		}
	}
}

// benchGCPWaitAcked polls acked until it reaches n and returns the time
// since start. It fails the benchmark after benchGCPDeadline or when failed
// reports a consumer error. It polls every benchGCPPoll near the end and
// less often before it (benchGCPNextPoll): brighter's poll is a /metrics
// scrape, whose collectors (the process collector reads /proc) cost its
// side CPU: a scrape every 20 ms for the whole run was a fifth to a half
// of what brighter's side used; the plain loop's poll, a counter, is polled on
// the same schedule.
func benchGCPWaitAcked(b *testing.B, acked func() int, n int, start time.Time, failed func() string) time.Duration {
	b.Helper()
	prevN, prevAt := 0, start
	for {
		got := acked()
		now := time.Now()
		if got >= n {
			return now.Sub(start)
		}
		if now.Sub(start) > benchGCPDeadline {
			b.Fatalf("%d of %d messages acknowledged after %s", got, n, benchGCPDeadline)
		}
		if msg := failed(); msg != "" {
			b.Fatal(msg)
		}
		wait := benchGCPNextPoll(n-got, got-prevN, now.Sub(prevAt))
		if got > prevN {
			prevN, prevAt = got, now
		}
		time.Sleep(wait)
	}
}

// benchGCPNextPoll is how long to wait before the next poll when left
// messages are still to be acknowledged and the last done took since (the
// messages acknowledged since the previous poll that saw progress): a
// quarter of the time left at that rate, between benchGCPPoll and
// benchGCPPollMax, so that the run's end is still seen within benchGCPPoll
// unless the rate more than quadruples.
func benchGCPNextPoll(left, done int, since time.Duration) time.Duration {
	if done <= 0 || since <= 0 {
		return benchGCPPoll
	}
	rest := time.Duration(float64(since) * float64(left) / float64(done))
	return min(max(rest/4, benchGCPPoll), benchGCPPollMax)
}

// benchGCPScrapeAcked sums brighter_messages_acknowledged_total on the
// /metrics of addr; an unreachable endpoint counts 0. It asks for that
// family alone (promhttp's name[] filter) and unencoded: the poll
// runs on brighter's side of the measurement, and the whole
// exposition gzipped cost brighter about 0.5 ms of CPU a scrape (encoding
// every family and compressing it here, decompressing it in the benchmark),
// which the plain loop's counter does not. The registry's collectors
// (the process collector reads /proc) still run on every scrape.
func benchGCPScrapeAcked(addr string) int {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics?name[]=brighter_messages_acknowledged_total", nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	n := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "brighter_messages_acknowledged_total") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			n += v
		}
	}
	return int(n)
}

// benchGCPAckedServer gives a plain side the instrument brighter's side
// is polled with: a counter named brighter_messages_acknowledged_total in a
// registry of its own, served by promhttp on a loopback port, and the
// poll, benchGCPScrapeAcked of that port. Each scrape (the HTTP client and
// the handler) runs in this process, on the side being measured: a perf
// profile put brighter's polls at about 2.6 us a message of its side's CPU
// when only brighter's side was polled over HTTP and the plain sides read
// an atomic counter. The server ends with b.
func benchGCPAckedServer(b *testing.B) (prometheus.Counter, func() int) {
	b.Helper()
	reg := prometheus.NewRegistry()
	acked := prometheus.NewCounter(prometheus.CounterOpts{Name: "brighter_messages_acknowledged_total", Help: "Messages the plain side acknowledged."})
	reg.MustRegister(acked)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	b.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	return acked, func() int { return benchGCPScrapeAcked(addr) }
}

// benchGCPConfig writes the subscriptions file of the brighter run.
func benchGCPConfig(b *testing.B, dir, project, host, name, mode string) string {
	b.Helper()
	cfg := fmt.Sprintf(`connections:
  gcp:
    projectId: %s
    emulatorHost: %s
subscriptions:
  - name: bench
    transport: gcp
    channelName: %s
    routingKey: %s
    messagePumpType: proactor
    bufferSize: %d
    noOfPerformers: %d
    timeOut: 1s
    requeueCount: -1
    makeChannels: validate
    handler: {type: builtin, name: ack}
    gcp: {mode: %s}
`, project, host, name, name, benchGCPBuffer, benchGCPPerformers, mode)
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchGCPBrighter runs `brighter consume --config cfg` until all n messages
// of its topic are acknowledged (its /metrics, served on a free loopback
// port with --listen, says so), stops it, and returns the time taken and
// its start-up: the time to its last GetSubscription answered through
// counter (makeChannels validate's; 0 when none was). It fails when consume
// exits early or not with 0, or logs an error.
func benchGCPBrighter(b *testing.B, counter *faultproxy.Counter, cfg string, n int) (took, startup time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	c := runConsume(ctx, cfg, cmdtest.AnyListen)
	stderr := c.stderr
	acked := func() int {
		if addr := c.addr(); addr != "" {
			return benchGCPScrapeAcked(addr)
		}
		return 0
	}
	took = benchGCPWaitAcked(b, acked, n, start, func() string {
		if c.exited.Load() {
			return "brighter consume exited before every message was acknowledged; stderr:\n" + stderr.String()
		}
		return ""
	})
	if at := counter.Answered("GetSubscription"); at.After(start) {
		startup = at.Sub(start)
	}
	cancel()
	if got := <-c.code; got != cmdutil.ExitOK {
		b.Fatalf("brighter consume exited with %d; stderr:\n%s", got, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		b.Fatalf("brighter consume logged an error:\n%s", s)
	}
	return took, startup
}

// benchGCPPlain runs a plain program on subscription topic of project and
// returns what it took: from its start, it makes its client
// (pubsub.NewClient to the emulator at addr, as brighter's connection to an
// emulatorHost) and its Subscriber (NumGoroutines 1, MaxOutstandingMessages
// bufferSize x noOfPerformers), which is its start-up, then runs Receive,
// acking in the callback, until all n messages are acknowledged.
func benchGCPPlain(b *testing.B, project, addr, topic string, n int) benchSQSPlainRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var run benchSQSPlainRun
	start := time.Now()
	cpu := benchProcessCPU(b)
	c := benchGCPPlainClient(ctx, b, "plain program", project, addr)
	defer c.Close()
	sub := c.Subscriber(topic)
	sub.ReceiveSettings.NumGoroutines = 1
	sub.ReceiveSettings.MaxOutstandingMessages = benchGCPBuffer * benchGCPPerformers
	run.startup = time.Since(start)
	run.startupCPU = benchProcessCPU(b) - cpu
	done := make(chan error, 1)
	acked, scrape := benchGCPAckedServer(b)
	go func() {
		done <- sub.Receive(ctx, func(_ context.Context, m *pubsub.Message) { m.Ack(); acked.Inc() })
	}()
	run.took = benchGCPWaitAcked(b, scrape, n, start, benchGCPEndedEarly(done, "plain Receive"))
	cancel()
	if err := <-done; err != nil {
		b.Fatalf("plain Receive: %v", err)
	}
	return run
}

// benchGCPEndedEarly is benchGCPWaitAcked's failure check of a plain side
// (who) whose loop sends its end on done: the text of an end before every
// message was acknowledged, or "" while it runs.
func benchGCPEndedEarly(done <-chan error, who string) func() string {
	return func() string {
		select {
		case err := <-done:
			return fmt.Sprintf("%s ended early: %v", who, err)
		default:
			return ""
		}
	}
}

// benchGCPPlainClient makes a plain side's client (who names it in a
// failure): pubsub.NewClient of project to the emulator at addr, without
// authentication or telemetry, as brighter's connection to an
// emulatorHost. The caller closes it as its run ends, so that no client
// of an earlier run is left running beside a later one.
func benchGCPPlainClient(ctx context.Context, b *testing.B, who, project, addr string) *pubsub.Client {
	b.Helper()
	c, err := pubsub.NewClient(ctx, project,
		option.WithEndpoint(addr),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithTelemetryDisabled(),
	)
	if err != nil {
		b.Fatalf("%s: pubsub.NewClient: %v", who, err)
	}
	return c
}

// benchGCPPullLoop runs a plain program of the pull protocol on
// subscription topic of project, the pull cases' second anchor, and returns
// what it took: from its start, it makes its client (pubsub.NewClient to
// the emulator at addr, as benchGCPPlain), which is its start-up, then, in
// one goroutine (brighter's pull consumer has one Pull in flight at a
// time), calls the client's SubscriptionAdminClient.Pull with MaxMessages
// bufferSize and Acknowledge with the ack ids each Pull returned, until all
// n messages are acknowledged.
func benchGCPPullLoop(b *testing.B, project, addr, topic string, n int) benchSQSPlainRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var run benchSQSPlainRun
	start := time.Now()
	cpu := benchProcessCPU(b)
	c := benchGCPPlainClient(ctx, b, "pull loop", project, addr)
	defer c.Close()
	sub := "projects/" + project + "/subscriptions/" + topic
	run.startup = time.Since(start)
	run.startupCPU = benchProcessCPU(b) - cpu
	done := make(chan error, 1)
	acked, scrape := benchGCPAckedServer(b)
	go func() {
		for {
			resp, err := c.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: benchGCPBuffer})
			if err != nil {
				done <- err
				return
			}
			if len(resp.ReceivedMessages) == 0 {
				continue
			}
			ids := make([]string, len(resp.ReceivedMessages))
			for i, m := range resp.ReceivedMessages {
				ids[i] = m.AckId
			}
			if err := c.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids}); err != nil {
				done <- err
				return
			}
			acked.Add(float64(len(ids)))
		}
	}()
	run.took = benchGCPWaitAcked(b, scrape, n, start, benchGCPEndedEarly(done, "pull loop"))
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		b.Fatalf("pull loop: %v", err)
	}
	return run
}
