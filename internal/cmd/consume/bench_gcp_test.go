package consume_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
)

// Settings of BenchmarkConsumePubSub (docs/performance.md): the backlog
// per side, and the subscription's bufferSize and noOfPerformers, which the
// plain loop matches through flow control (MaxOutstandingMessages =
// bufferSize x noOfPerformers) and NumGoroutines (1, as the stream consumer
// uses).
const (
	benchGCPFull       = 5000
	benchGCPBuffer     = 10
	benchGCPPerformers = 4
	benchGCPProject    = "brighter-bench"
	benchGCPPoll       = 20 * time.Millisecond
	benchGCPDeadline   = 5 * time.Minute
)

// benchGCPMessages is the messages per side of an op: benchGCPFull, or
// benchSmokeMessages with BRIGHTER_BENCH_SMOKE set (make bench-smoke: the
// benchmark still runs; its figures mean nothing).
func benchGCPMessages() int {
	if benchSmoke() {
		return benchSmokeMessages
	}
	return benchGCPFull
}

// BenchmarkConsumePubSub measures `brighter consume` in stream mode against a
// plain cloud.google.com/go/pubsub/v2 Subscriber.Receive loop that only acks,
// on the same Google Pub/Sub emulator (gcptest) in one run (target ratio >= 0.9,
// docs/performance.md).
//
// Each iteration publishes benchGCPMessages() messages in Brighter's Pub/Sub
// wire format to each of two topics (timer stopped), then
//   - runs `brighter consume` (transport gcp, mode stream, proactor, builtin
//     ack handler, bufferSize 10, noOfPerformers 4) through run() on one
//     subscription, and
//   - runs Subscriber.Receive with NumGoroutines 1 and
//     MaxOutstandingMessages 40, acking each message, on the other,
//
// each timed from its start until it has acknowledged every message of its
// topic (brighter: brighter_messages_acknowledged_total on its --listen
// /metrics; plain: a counter after m.Ack()), then stopped by cancelling its
// context. The order
// alternates between iterations. Both sides reach the emulator through a
// counting h2c proxy (faultproxy.Counter). Reported: brighter-msgs/s,
// plain-msgs/s and ratio (brighter / plain), and per message over all ops:
// brighter-calls/msg and plain-calls/msg (every gRPC call during the runs,
// a stream counted once), brighter-ack/msg and plain-ack/msg (Acknowledge
// RPCs) and brighter-modack/msg (ModifyAckDeadline RPCs). The emulator's
// own delivery rate bounds both sides (docs/performance.md).
//
// Sub-benchmarks: stream (brighter's `mode: stream`, the client library
// batching acknowledgements itself) and pull (`mode: pull`: the pump's
// batcher sends AcknowledgeRequests of up to gcp.PullAckBatchMax ack ids); the plain loop
// is the client library's Receive in both.
func BenchmarkConsumePubSub(b *testing.B) {
	var counter *faultproxy.Counter
	client, srv := gcptest.StartVia(b, benchGCPProject, nil, gcp.Connect, func(emulator string) string {
		counter = startGCPCounter(b, emulator)
		return counter.Addr()
	})
	for _, mode := range []string{"stream", "pull"} {
		b.Run(mode, func(b *testing.B) {
			benchGCPMode(b, client, srv, counter, mode)
		})
	}
}

// benchGCPMode runs b.N ops of BenchmarkConsumePubSub with brighter in
// mode (stream or pull) and reports its metrics.
func benchGCPMode(b *testing.B, client *pubsub.Client, srv *gcptest.Server, counter *faultproxy.Counter, mode string) {
	project := srv.Project
	dir := b.TempDir()
	var brighterTook, plainTook time.Duration
	var bCalls, pCalls map[string]int
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		bt := fmt.Sprintf("bench-brighter-%s-%d", mode, i)
		pt := fmt.Sprintf("bench-plain-%s-%d", mode, i)
		benchGCPFill(b, client, project, bt)
		benchGCPFill(b, client, project, pt)
		cfg := benchGCPConfig(b, dir, project, counter.Addr(), bt, mode)
		b.StartTimer()
		brighter := func() {
			counter.Reset()
			brighterTook += benchGCPBrighter(b, cfg)
			bCalls = benchGCPAdd(bCalls, counter.Reset())
		}
		plain := func() {
			counter.Reset()
			plainTook += benchGCPPlain(b, client, pt)
			pCalls = benchGCPAdd(pCalls, counter.Reset())
		}
		if i%2 == 0 {
			brighter()
			plain()
		} else {
			plain()
			brighter()
		}
	}
	b.StopTimer()
	total := float64(b.N * benchGCPMessages())
	brighterRate := total / brighterTook.Seconds()
	plainRate := total / plainTook.Seconds()
	b.Logf("%d ops: brighter %s; plain %s", b.N, faultproxy.CallsText(bCalls), faultproxy.CallsText(pCalls))
	b.ReportMetric(brighterRate, "brighter-msgs/s")
	b.ReportMetric(plainRate, "plain-msgs/s")
	b.ReportMetric(brighterRate/plainRate, "ratio")
	b.ReportMetric(float64(faultproxy.Sum(bCalls))/total, "brighter-calls/msg")
	b.ReportMetric(float64(faultproxy.Sum(pCalls))/total, "plain-calls/msg")
	b.ReportMetric(float64(bCalls["Acknowledge"])/total, "brighter-ack/msg")
	b.ReportMetric(float64(pCalls["Acknowledge"])/total, "plain-ack/msg")
	b.ReportMetric(float64(bCalls["ModifyAckDeadline"])/total, "brighter-modack/msg")
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
// publishes benchGCPMessages() messages encoded by gcp.Encode.
func benchGCPFill(b *testing.B, c *pubsub.Client, project, name string) {
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
	results := make([]*pubsub.PublishResult, 0, benchGCPMessages())
	for j := range benchGCPMessages() {
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

// benchGCPWaitAcked polls acked until it reaches benchGCPMessages() and
// returns the time since start. It fails the benchmark after
// benchGCPDeadline or when failed reports a consumer error.
func benchGCPWaitAcked(b *testing.B, acked func() int, start time.Time, failed func() string) time.Duration {
	b.Helper()
	tick := time.NewTicker(benchGCPPoll)
	defer tick.Stop()
	for {
		n := acked()
		if n >= benchGCPMessages() {
			return time.Since(start)
		}
		if time.Since(start) > benchGCPDeadline {
			b.Fatalf("%d of %d messages acknowledged after %s", n, benchGCPMessages(), benchGCPDeadline)
		}
		if msg := failed(); msg != "" {
			b.Fatal(msg)
		}
		<-tick.C
	}
}

// benchGCPScrapeAcked sums brighter_messages_acknowledged_total on the
// /metrics of addr; an unreachable endpoint counts 0.
func benchGCPScrapeAcked(addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
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

// benchGCPBrighter runs `brighter consume --config cfg` until every message
// of its topic is acknowledged (its /metrics, served on a free loopback
// port with --listen, says so), stops it, and returns the time taken. It
// fails when consume exits early or not with 0, or logs an error.
func benchGCPBrighter(b *testing.B, cfg string) time.Duration {
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
	took := benchGCPWaitAcked(b, acked, start, func() string {
		if c.exited.Load() {
			return "brighter consume exited before every message was acknowledged; stderr:\n" + stderr.String()
		}
		return ""
	})
	cancel()
	if got := <-c.code; got != cmdutil.ExitOK {
		b.Fatalf("brighter consume exited with %d; stderr:\n%s", got, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "level=ERROR") {
		b.Fatalf("brighter consume logged an error:\n%s", s)
	}
	return took
}

// benchGCPPlain runs a plain Subscriber.Receive loop (NumGoroutines 1,
// MaxOutstandingMessages bufferSize x noOfPerformers, ack in the callback)
// until every message of topic is acknowledged and returns the time taken.
func benchGCPPlain(b *testing.B, c *pubsub.Client, topic string) time.Duration {
	b.Helper()
	sub := c.Subscriber(topic)
	sub.ReceiveSettings.NumGoroutines = 1
	sub.ReceiveSettings.MaxOutstandingMessages = benchGCPBuffer * benchGCPPerformers
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	var acked atomic.Int64
	go func() {
		done <- sub.Receive(ctx, func(_ context.Context, m *pubsub.Message) { m.Ack(); acked.Add(1) })
	}()
	took := benchGCPWaitAcked(b, func() int { return int(acked.Load()) }, start, func() string {
		select {
		case err := <-done:
			return fmt.Sprintf("plain Receive ended early: %v", err)
		default:
			return ""
		}
	})
	cancel()
	if err := <-done; err != nil {
		b.Fatalf("plain Receive: %v", err)
	}
	return took
}
