package consume_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
)

// callsMessages is how many messages each case of
// TestConsumeCountsBrokerCallsAsTheWireSeesThem consumes.
const callsMessages = 30

// callsSettle bounds the wait for the consumer's call counts and the
// wire's to agree once every message is acknowledged: a long poll started
// between the two reads is counted by one before the other sees it.
const callsSettle = 15 * time.Second

// callsWire is one transport's side of the test: the subscriptions file
// (its subscription named "calls", with messagePumpType %[1]s), the
// operations the wire saw so far, and which of those operations are
// receives and acknowledgements. whole is true when the wire sees every
// call (a proxy), so every operation counted must match it; the RocketMQ
// test broker's counts are compared for receives and acknowledgements
// only (the client's own route, heartbeat and telemetry calls are not
// counted).
type callsWire struct {
	config          string
	seen            func() map[string]int
	receives, acks  []string
	receivesAtLeast int
	whole           bool
}

// TestConsumeCountsBrokerCallsAsTheWireSeesThem runs `brighter consume
// --listen` (builtin ack handler) over callsMessages messages on each
// transport's emulator, in both pump variants, with the broker behind a
// counting proxy on the wire (SQS, Pub/Sub) or the test broker's own call
// counts (RocketMQ). Once every message is acknowledged, the receive and
// acknowledgement calls brighter_broker_calls_total reports on /metrics, by
// operation and under the kinds receive and ack, are what the wire saw: a
// DeleteMessageBatch is one ack call, a Pull or a StreamingPull stream one
// receive call, and so on. Behind a proxy, every other operation
// (look-ups, deadline changes) matches too.
func TestConsumeCountsBrokerCallsAsTheWireSeesThem(t *testing.T) {
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run("sqs/"+variant, func(t *testing.T) { callsRun(t, variant, "sqs", callsSQS(t)) })
		t.Run("gcp-pull/"+variant, func(t *testing.T) { callsRun(t, variant, "gcp", callsGCP(t, "pull")) })
		t.Run("rocketmq/"+variant, func(t *testing.T) { callsRun(t, variant, "rocketmq", callsRocketMQ(t)) })
	}
	t.Run("gcp-stream/proactor", func(t *testing.T) { callsRun(t, "proactor", "gcp", callsGCP(t, "stream")) })
}

// callsRun runs consume over w's subscriptions file until callsMessages
// messages are acknowledged, then waits for /metrics and the wire to agree
// on every receive and acknowledgement operation.
func callsRun(t *testing.T, variant, transport string, w callsWire) {
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(w.config, variant)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := runConsume(ctx, cfg, cmdtest.AnyListen)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-c.code; code != cmdutil.ExitOK {
			t.Errorf("consume exited with %d; stderr:\n%s", code, c.stderr.String())
		}
	}
	defer stop()
	addr := c.waitReady(t, 30*time.Second, cancel, "")
	deadline := time.Now().Add(60 * time.Second)
	for benchGCPScrapeAcked(addr) < callsMessages {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages acknowledged after 60s; stderr:\n%s", benchGCPScrapeAcked(addr), callsMessages, c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var counted, seen map[string]int
	agree := func() bool {
		before := callsScrape(t, addr, transport)
		seen = w.seen()
		counted = callsScrape(t, addr, transport)
		if !maps.Equal(before, counted) {
			return false // a call was counted between the reads
		}
		acked := 0
		for _, op := range append(append([]string{}, w.receives...), w.acks...) {
			if counted[op+"/"+callsKind(w, op)] != seen[op] {
				return false
			}
			if slices.Contains(w.acks, op) {
				acked += seen[op]
			}
		}
		if acked == 0 {
			// The Pub/Sub stream client sends its acknowledgements in the
			// background, after the pump counted them acknowledged: none on
			// the wire yet is not agreement.
			return false
		}
		if !w.whole {
			return true
		}
		byOp := map[string]int{}
		for k, n := range counted {
			byOp[k[:strings.IndexByte(k, '/')]] += n
		}
		return maps.Equal(byOp, seen)
	}
	settle := time.Now().Add(callsSettle)
	for !agree() {
		if time.Now().After(settle) {
			t.Fatalf("after %s, brighter_broker_calls_total{transport=%q} = %v; the wire saw %v", callsSettle, transport, counted, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sum := func(ops []string) int {
		n := 0
		for _, op := range ops {
			n += seen[op]
		}
		return n
	}
	if r := sum(w.receives); r < w.receivesAtLeast {
		t.Errorf("%d receive calls on the wire for %d messages, want at least %d", r, callsMessages, w.receivesAtLeast)
	}
	if a := sum(w.acks); a == 0 {
		t.Errorf("no acknowledgement call on the wire for %d acknowledged messages", callsMessages)
	}
	t.Logf("%s: counted %v; the wire saw %v", variant, counted, seen)
	stop()
}

// callsKind is the kind label op must be counted under.
func callsKind(w callsWire, op string) string {
	for _, r := range w.receives {
		if r == op {
			return "receive"
		}
	}
	return "ack"
}

// callsSeries matches one series of brighter_broker_calls_total.
var callsSeries = regexp.MustCompile(`^brighter_broker_calls_total\{(.*)\} (\S+)$`)

// callsLabel matches one label of a series.
var callsLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// callsScrape returns brighter_broker_calls_total of transport on addr's
// /metrics, summed over channels, keyed "operation/kind".
func callsScrape(t *testing.T, addr, transport string) map[string]int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read /metrics: %v", err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		m := callsSeries.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range callsLabel.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		if labels["transport"] != transport {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("series %q: %v", line, err)
		}
		out[labels["operation"]+"/"+labels["kind"]] += int(v)
	}
	return out
}

// callsSQS fills a fresh queue on the shared fauxqs with callsMessages
// messages and puts a counting proxy between consume and fauxqs.
func callsSQS(t *testing.T) callsWire {
	emu := cmdtest.SharedSQS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	counter, err := faultproxy.StartSQSCounter(emu.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(counter.Close)
	queue := fmt.Sprintf("calls-%d", time.Now().UnixNano()%1e12)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint).SQS
	ctx := context.Background()
	out, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", queue, err)
	}
	for first := 0; first < callsMessages; first += 10 {
		var entries []types.SendMessageBatchRequestEntry
		for j := first; j < first+10 && j < callsMessages; j++ {
			o, err := sqs.EncodeSQS(message.New(queue+"-"+strconv.Itoa(j), queue, message.MTEvent, []byte(`{"n":1}`)), aws.ToString(out.QueueUrl), nil)
			if err != nil {
				t.Fatal(err)
			}
			attrs := map[string]types.MessageAttributeValue{}
			for k, v := range o.Attributes {
				attrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), MessageBody: aws.String(o.Body), MessageAttributes: attrs})
		}
		res, err := c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: out.QueueUrl, Entries: entries})
		if err != nil || len(res.Failed) > 0 {
			t.Fatalf("SendMessageBatch: %v %v", err, res)
		}
	}
	counter.Reset()
	return callsWire{config: `connections:
  aws:
    region: ` + sqstest.Region + `
    endpoint: ` + counter.URL() + `
subscriptions:
  - name: calls
    transport: sqs
    channelName: ` + queue + `
    messagePumpType: %[1]s
    bufferSize: 10
    noOfPerformers: 2
    timeOut: 1s
    requeueCount: -1
    makeChannels: validate
    handler: {type: builtin, name: ack}
`, seen: counter.Counts, receives: []string{"ReceiveMessage"}, acks: []string{"DeleteMessage", "DeleteMessageBatch"}, receivesAtLeast: callsMessages / 10, whole: true}
}

// callsGCP makes a topic and its subscription in a fresh project on the
// Pub/Sub emulator, publishes callsMessages messages, and puts a counting
// h2c proxy between consume (mode) and the emulator.
func callsGCP(t *testing.T, mode string) callsWire {
	client, srv := gcptest.Start(t, "calls", nil, gcp.Connect)
	counter, err := faultproxy.StartGRPCCounter(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(counter.Close)
	ctx := context.Background()
	name := "calls-" + mode
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + srv.Project + "/topics/" + name}); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + srv.Project + "/subscriptions/" + name, Topic: "projects/" + srv.Project + "/topics/" + name, AckDeadlineSeconds: 60,
	}); err != nil {
		t.Fatalf("create subscription: %v", err)
	}
	pub := client.Publisher(name)
	var results []*pubsub.PublishResult
	for j := range callsMessages {
		w := gcp.Encode(message.New(name+"-"+strconv.Itoa(j), name, message.MTEvent, []byte(`{"n":1}`)))
		results = append(results, pub.Publish(ctx, &pubsub.Message{Data: w.Data, Attributes: w.Attributes}))
	}
	for _, r := range results {
		if _, err := r.Get(ctx); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	pub.Stop()
	receives, atLeast := []string{"Pull"}, callsMessages/10
	if mode == "stream" {
		receives, atLeast = []string{"StreamingPull"}, 1
	}
	return callsWire{config: `connections:
  gcp:
    projectId: ` + srv.Project + `
    emulatorHost: ` + counter.Addr() + `
subscriptions:
  - name: calls
    transport: gcp
    channelName: ` + name + `
    routingKey: ` + name + `
    messagePumpType: %[1]s
    bufferSize: 10
    noOfPerformers: 2
    timeOut: 1s
    requeueCount: -1
    makeChannels: validate
    handler: {type: builtin, name: ack}
    gcp: {mode: ` + mode + `}
`, seen: counter.Counts, receives: receives, acks: []string{"Acknowledge"}, receivesAtLeast: atLeast, whole: true}
}

// callsRocketMQ starts a test broker with a topic of callsMessages
// messages; the broker's own call counts are the wire's.
func callsRocketMQ(t *testing.T) callsWire {
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.CreateTopic("calls")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint()}, Topic: "calls"})
	if err != nil {
		t.Fatal(err)
	}
	for j := range callsMessages {
		if err := p.Send(ctx, message.New("calls-"+strconv.Itoa(j), "calls", message.MTEvent, []byte(`{"n":1}`))); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	_ = p.Close(ctx)
	seen := func() map[string]int {
		return map[string]int{"ReceiveMessage": srv.Calls("ReceiveMessage"), "AckMessage": srv.Calls("AckMessage")}
	}
	return callsWire{config: `connections:
  rocketmq:
    endpoint: ` + srv.Endpoint() + `
subscriptions:
  - name: calls
    transport: rocketmq
    channelName: calls
    messagePumpType: %[1]s
    bufferSize: 10
    noOfPerformers: 2
    timeOut: 1s
    requeueCount: -1
    makeChannels: assume
    handler: {type: builtin, name: ack}
    rocketmq:
      consumerGroup: calls
      invisibleDuration: 30s
`, seen: seen, receives: []string{"ReceiveMessage"}, acks: []string{"AckMessage"}, receivesAtLeast: callsMessages / 10}
}
