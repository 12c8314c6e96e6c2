package gcp

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/message"
)

// env is the test's own project on the test binary's Google Pub/Sub
// emulator (gcptest) with a client whose connection carries the fault
// interceptor.
type env struct {
	client  *pubsub.Client
	project string
	faults  *gcptest.Faults
	logs    *recorder
	log     *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	f := &gcptest.Faults{}
	client, srv := gcptest.Start(t, "brighter-test", f, Connect)
	rec := &recorder{}
	return &env{client: client, project: srv.Project, faults: f, logs: rec, log: slog.New(rec)}
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// channels creates topic, subscription and routing topics with makeChannels
// create; IAM members are set so no Resource Manager call is made.
func (e *env) channels(t *testing.T, o ChannelOptions) {
	t.Helper()
	if o.DeadLetterPolicy != nil && o.DeadLetterPolicy.PublisherMember == "" {
		o.DeadLetterPolicy.PublisherMember = "serviceAccount:test@example.iam.gserviceaccount.com"
		o.DeadLetterPolicy.SubscriberMember = "serviceAccount:test@example.iam.gserviceaccount.com"
	}
	if o.Logger == nil {
		o.Logger = e.log
	}
	if err := NewChannels(e.client, o).EnsureChannels(ctxT(t, 10*time.Second)); err != nil {
		t.Fatalf("EnsureChannels: %v", err)
	}
}

type mode string

const (
	modePull   mode = "pull"
	modeStream mode = "stream"
)

var modes = []mode{modePull, modeStream}

func (e *env) consumer(t *testing.T, md mode, o ConsumerOptions) broker.Consumer {
	t.Helper()
	if o.Logger == nil {
		o.Logger = e.log
	}
	if o.BufferSize == 0 {
		o.BufferSize = 10
	}
	p := NewProducer(e.client, ProducerOptions{EnableMessageOrdering: true})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	var c broker.Consumer
	if md == modePull {
		c = NewPullConsumer(e.client, p, o)
	} else {
		c = NewStreamConsumer(e.client, p, o)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

func (e *env) send(t *testing.T, topic string, m *message.Message) {
	t.Helper()
	p := NewProducer(e.client, ProducerOptions{EnableMessageOrdering: true})
	defer p.Close(context.Background())
	m.Header.Topic = topic
	if err := p.Send(ctxT(t, 10*time.Second), m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// receiveOne polls c until one message arrives or d passes.
func receiveOne(t *testing.T, c broker.Consumer, d time.Duration) *message.Message {
	t.Helper()
	if m := receiveWithin(t, c, d); m != nil {
		return m
	}
	t.Fatalf("no message within %v", d)
	return nil
}

// receiveWithin returns the one message c delivers within d, or nil when
// none comes; more than one, or a failed receive, fails the test.
func receiveWithin(t *testing.T, c broker.Consumer, d time.Duration) *message.Message {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ms, err := c.Receive(ctxT(t, d), 500*time.Millisecond)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(ms) > 1 {
			t.Fatalf("receive: %d messages, want 1", len(ms))
		}
		if len(ms) == 1 {
			return ms[0]
		}
	}
	return nil
}

// expectNone asserts that c delivers nothing during d.
func expectNone(t *testing.T, c broker.Consumer, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ms, err := c.Receive(ctxT(t, d+time.Second), 300*time.Millisecond)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(ms) > 0 {
			t.Fatalf("unexpected delivery of %s (count %d)", ms[0].Header.MessageID, ms[0].Header.HandledCount)
		}
	}
}

// pullRaw reads one message of sub straight from the emulator (no codec),
// acknowledging it, polling up to d.
func (e *env) pullRaw(t *testing.T, sub string, d time.Duration) *pubsubpb.PubsubMessage {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx := ctxT(t, 5*time.Second)
		resp, err := e.client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: SubscriptionName(e.project, sub), MaxMessages: 1})
		if err != nil {
			t.Fatalf("pull %s: %v", sub, err)
		}
		if len(resp.ReceivedMessages) == 1 {
			rm := resp.ReceivedMessages[0]
			_ = e.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: SubscriptionName(e.project, sub), AckIds: []string{rm.AckId}})
			return rm.Message
		}
	}
	t.Fatalf("nothing on %s within %v", sub, d)
	return nil
}

// quietWindow is how long a test watches for a message that must not come
// back on sub: the ack deadline the emulator granted the subscription (it
// may hold more than was asked: Pub/Sub's minimum is 10 s), half as much
// again for a loaded machine, plus a second.
func (e *env) quietWindow(t *testing.T, sub string) time.Duration {
	t.Helper()
	s, err := e.client.SubscriptionAdminClient.GetSubscription(ctxT(t, 5*time.Second), &pubsubpb.GetSubscriptionRequest{Subscription: SubscriptionName(e.project, sub)})
	if err != nil {
		t.Fatalf("read subscription %s: %v", sub, err)
	}
	d := time.Duration(s.GetAckDeadlineSeconds()) * time.Second
	return d + d/2 + time.Second
}

func (e *env) topicExists(t *testing.T, topic string) bool {
	_, err := e.client.TopicAdminClient.GetTopic(ctxT(t, 5*time.Second), &pubsubpb.GetTopicRequest{Topic: topicName(e.project, topic)})
	if status.Code(err) == codes.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("get topic: %v", err)
	}
	return true
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.records = append(r.records, rec.Clone())
	r.mu.Unlock()
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// find returns the records at level whose message is msg.
func (r *recorder) find(level slog.Level, msg string) []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Record
	for _, rec := range r.records {
		if rec.Level == level && rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}

func (r *recorder) countLevel(level slog.Level) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.records {
		if rec.Level == level {
			n++
		}
	}
	return n
}

func attr(rec slog.Record, key string) string {
	var v string
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// recordText renders a record's message and attributes for "contains" checks.
func recordText(rec slog.Record) string {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	return b.String()
}

func newMsg(id string) *message.Message {
	return message.New(id, "", message.MTCommand, []byte(`{"n":1}`))
}
