package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/message"
)

// Settings of BenchmarkConsumePubSub (issue 4, "Performance"): the backlog
// per side, and the subscription's bufferSize and noOfPerformers, which the
// plain loop matches through flow control (MaxOutstandingMessages =
// bufferSize x noOfPerformers) and NumGoroutines (1, as the stream consumer
// uses).
const (
	benchGCPMessages   = 1000
	benchGCPBuffer     = 10
	benchGCPPerformers = 4
	benchGCPProject    = "brighter-bench"
	benchGCPPoll       = 50 * time.Millisecond
	benchGCPDeadline   = 5 * time.Minute
)

// BenchmarkConsumePubSub measures `brighter consume` in stream mode against a
// plain cloud.google.com/go/pubsub/v2 Subscriber.Receive loop that only acks,
// on the same in-process emulator (pstest) in one run (issue 4,
// "Performance": target ratio >= 0.9).
//
// Each iteration publishes benchGCPMessages messages in Brighter's Pub/Sub
// wire format to each of two topics (timer stopped), then
//   - runs `brighter consume` (transport gcp, mode stream, proactor, builtin
//     ack handler, bufferSize 10, noOfPerformers 4) through run() on one
//     subscription, and
//   - runs Subscriber.Receive with NumGoroutines 1 and
//     MaxOutstandingMessages 40, acking each message, on the other,
//
// each timed from its start until the emulator reports every message of its
// topic acknowledged, then stopped by cancelling its context. The order
// alternates between iterations. Reported: brighter-msgs/s, plain-msgs/s and
// ratio (brighter / plain). The emulator's own delivery rate bounds both
// sides (docs/performance.md).
func BenchmarkConsumePubSub(b *testing.B) {
	client, srv := gcptest.Start(b, benchGCPProject, nil, gcp.Connect)
	dir := b.TempDir()
	var brighterTook, plainTook time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		bt := fmt.Sprintf("bench-brighter-%d", i)
		pt := fmt.Sprintf("bench-plain-%d", i)
		benchGCPFill(b, client, bt)
		benchGCPFill(b, client, pt)
		cfg := benchGCPConfig(b, dir, srv.Addr, bt)
		b.StartTimer()
		if i%2 == 0 {
			brighterTook += benchGCPBrighter(b, srv, bt, cfg)
			plainTook += benchGCPPlain(b, srv, client, pt)
		} else {
			plainTook += benchGCPPlain(b, srv, client, pt)
			brighterTook += benchGCPBrighter(b, srv, bt, cfg)
		}
	}
	b.StopTimer()
	total := float64(b.N * benchGCPMessages)
	brighterRate := total / brighterTook.Seconds()
	plainRate := total / plainTook.Seconds()
	b.ReportMetric(brighterRate, "brighter-msgs/s")
	b.ReportMetric(plainRate, "plain-msgs/s")
	b.ReportMetric(brighterRate/plainRate, "ratio")
}

// benchGCPFill creates topic name with a subscription of the same name and
// publishes benchGCPMessages messages encoded by gcp.Encode.
func benchGCPFill(b *testing.B, c *pubsub.Client, name string) {
	b.Helper()
	ctx := context.Background()
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + benchGCPProject + "/topics/" + name}); err != nil {
		b.Fatalf("create topic %s: %v", name, err)
	}
	if _, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/" + benchGCPProject + "/subscriptions/" + name, Topic: "projects/" + benchGCPProject + "/topics/" + name, AckDeadlineSeconds: 60,
	}); err != nil {
		b.Fatalf("create subscription %s: %v", name, err)
	}
	pub := c.Publisher(name)
	defer pub.Stop()
	results := make([]*pubsub.PublishResult, 0, benchGCPMessages)
	for j := range benchGCPMessages {
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

// benchGCPAcked counts the messages of topic (by their Topic attribute) the
// emulator has seen acknowledged.
func benchGCPAcked(srv *pstest.Server, topic string) int {
	n := 0
	for _, m := range srv.Messages() {
		if m.Acks > 0 && m.Attributes[gcp.AttrTopic] == topic {
			n++
		}
	}
	return n
}

// benchGCPWaitAcked polls the emulator until every message of topic is
// acknowledged and returns the time since start. It fails the benchmark
// after benchGCPDeadline or when failed reports a consumer error.
func benchGCPWaitAcked(b *testing.B, srv *pstest.Server, topic string, start time.Time, failed func() string) time.Duration {
	b.Helper()
	tick := time.NewTicker(benchGCPPoll)
	defer tick.Stop()
	for {
		n := benchGCPAcked(srv, topic)
		if n >= benchGCPMessages {
			return time.Since(start)
		}
		if time.Since(start) > benchGCPDeadline {
			b.Fatalf("topic %s: %d of %d messages acknowledged after %s", topic, n, benchGCPMessages, benchGCPDeadline)
		}
		if msg := failed(); msg != "" {
			b.Fatal(msg)
		}
		<-tick.C
	}
}

// benchGCPConfig writes the subscriptions file of the brighter run.
func benchGCPConfig(b *testing.B, dir, host, name string) string {
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
    gcp: {mode: stream}
`, benchGCPProject, host, name, name, benchGCPBuffer, benchGCPPerformers)
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchGCPBrighter runs `brighter consume --config cfg` until every message
// of topic is acknowledged, stops it, and returns the time taken. It fails
// when consume exits early or not with 0, or logs an error.
func benchGCPBrighter(b *testing.B, srv *pstest.Server, topic, cfg string) time.Duration {
	b.Helper()
	stderr := &lockedBuffer{}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: stderr, Getenv: os.LookupEnv}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var exited atomic.Bool
	code := make(chan int, 1)
	start := time.Now()
	go func() {
		code <- run(ctx, streams, []string{"consume", "--config", cfg})
		exited.Store(true)
	}()
	took := benchGCPWaitAcked(b, srv, topic, start, func() string {
		if exited.Load() {
			return "brighter consume exited before every message was acknowledged; stderr:\n" + stderr.String()
		}
		return ""
	})
	cancel()
	if got := <-code; got != exitOK {
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
func benchGCPPlain(b *testing.B, srv *pstest.Server, c *pubsub.Client, topic string) time.Duration {
	b.Helper()
	sub := c.Subscriber(topic)
	sub.ReceiveSettings.NumGoroutines = 1
	sub.ReceiveSettings.MaxOutstandingMessages = benchGCPBuffer * benchGCPPerformers
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- sub.Receive(ctx, func(_ context.Context, m *pubsub.Message) { m.Ack() })
	}()
	took := benchGCPWaitAcked(b, srv, topic, start, func() string {
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
