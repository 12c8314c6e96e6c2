package inspect_test

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// psMember is named for the DeadLetterPolicy's IAM bindings so no Resource
// Manager call is made (the emulator has no IAM; R-20 tolerates it).
const psMember = "serviceAccount:inspect@brighter-inspect.iam.gserviceaccount.com"

// psEnv is the test's own project on the test binary's Google Pub/Sub
// emulator (gcptest) with a client whose connection fails Acknowledge on
// demand (faults.FailAcknowledge).
type psEnv struct {
	client  *pubsub.Client
	project string
	faults  *gcptest.Faults
}

func newPS(t *testing.T) *psEnv {
	t.Helper()
	e := &psEnv{faults: &gcptest.Faults{}}
	var srv *gcptest.Server
	e.client, srv = gcptest.Start(t, "brighter-inspect", e.faults, gcp.Connect)
	e.project = srv.Project
	return e
}

// channel makes topic, its subscription (with a DeadLetterPolicy, so
// delivery_attempt is populated) and, when dlq is set, the dead-letter
// topic with its subscription of the same id (makeChannels create).
func (e *psEnv) channel(t *testing.T, topic, dlq string) {
	t.Helper()
	o := gcp.ChannelOptions{
		Topic: topic, Subscription: topic + "-sub", MakeChannels: broker.MakeCreate, DeadLetterTopic: dlq, RequeueCount: 3,
		DeadLetterPolicy: &gcp.DeadLetterPolicy{Topic: topic + "-native", MaxDeliveryAttempts: 100, PublisherMember: psMember, SubscriberMember: psMember},
		Logger:           discardLogger(),
	}
	if err := gcp.NewChannels(e.client, o).EnsureChannels(context.Background()); err != nil {
		t.Fatalf("make channels of %s: %v", topic, err)
	}
}

// consumer is the transport's ordinary pull consumer, as the dlq command
// builds its reader (no routes).
func (e *psEnv) consumer(sub string, routes string) *gcp.PullConsumer {
	return gcp.NewPullConsumer(e.client, gcp.NewProducer(e.client, gcp.ProducerOptions{}),
		gcp.ConsumerOptions{Subscription: sub, BufferSize: 10, DeadLetterTopic: routes, Logger: discardLogger()})
}

func (e *psEnv) source(sub string) *inspect.Source {
	return &inspect.Source{Consumer: e.consumer(sub, ""), Name: "pubsub://projects/" + e.project + "/subscriptions/" + sub,
		Wait: 500 * time.Millisecond, Logger: discardLogger()}
}

func (e *psEnv) producer(t *testing.T) *gcp.Producer {
	p := gcp.NewProducer(e.client, gcp.ProducerOptions{EnableMessageOrdering: true})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// seed fills a dead-letter topic with five routed copies (as seedDLQ does
// for SQS); topics a and b exist, each with a subscription TOPIC-sub.
func (e *psEnv) seed(t *testing.T) (dlq, a, b string) {
	dlq, a, b = "orders-dlq", "topic-a", "topic-b"
	e.channel(t, a, dlq)
	e.channel(t, b, "")
	p := e.producer(t)
	put := func(id, topic string, rej message.Rejection, count int) {
		m := message.New(id, topic, message.MTCommand, []byte(`{"id":"`+id+`"}`))
		m.Header.CorrelationID = "corr-" + id
		m.Header.HandledCount = count
		m.Header.Bag["tenant"] = "acme"
		if err := p.Publish(context.Background(), dlq, message.Stamp(m, dlq, rej, time.Now())); err != nil {
			t.Fatalf("dead-letter %s: %v", id, err)
		}
	}
	put("m1", a, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order 17 timed out"}, 3)
	put("m2", a, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order 18 timed out"}, 3)
	put("m3", a, message.Rejection{Reason: message.ReasonUnacceptable, Description: "no customer"}, 0)
	put("m4", b, message.Rejection{Reason: message.ReasonDeliveryError, Description: "payment declined"}, 5)
	put("m5", b, message.Rejection{Reason: message.ReasonNone}, 1)
	return dlq, a, b
}

// drain pulls and acknowledges a subscription until want messages came or
// the deadline passes.
func (e *psEnv) drain(t *testing.T, sub string, want int) []*message.Message {
	t.Helper()
	k := e.consumer(sub, "")
	var out []*message.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		ms, err := k.Receive(context.Background(), 500*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out = append(out, m)
			if err := k.Acknowledge(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(out) != want {
		t.Fatalf("%s: got %d messages, want %d", sub, len(out), want)
	}
	return out
}

// TestPeekPubSub_ShowsWhatThePumpRouted_R28_AC41 runs the pump with a defer
// handler and requeueCount 3 over the pull consumer on pstest, then peeks
// the dead-letter topic's subscription twice: the five rejection keys and
// the stamped count 3 both times; nothing removed.
func TestPeekPubSub_ShowsWhatThePumpRouted_R28_AC41(t *testing.T) {
	t.Parallel()
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(v), func(t *testing.T) {
			e := newPS(t)
			e.channel(t, "orders", "orders-dlq")
			m := message.New("poison-"+string(v), "orders", message.MTCommand, []byte(`{"orderId":42}`))
			if err := e.producer(t).Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			p, err := pump.New(e.consumer("orders-sub", "orders-dlq"), func(ctx context.Context, m *message.Message) pump.Result { return pump.Result{Outcome: pump.Defer} },
				pump.Options{Variant: v, TimeOut: 500 * time.Millisecond, RequeueCount: 3, EmptyChannelDelay: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); _ = p.Run(ctx) }()
			src := e.source("orders-dlq")
			var got []*message.Message
			deadline := time.Now().Add(20 * time.Second)
			for len(got) == 0 && time.Now().Before(deadline) {
				got = peekJSON(t, src, inspect.Filter{}) // polls: each peek waits 500 ms for a message
			}
			cancel()
			wg.Wait()
			for round := 1; round <= 2; round++ {
				if round == 2 {
					got = peekJSON(t, src, inspect.Filter{})
				}
				if len(got) != 1 {
					t.Fatalf("peek %d: %d messages, want 1", round, len(got))
				}
				g := got[0]
				for _, key := range message.RejectionKeys {
					if _, ok := g.Header.Bag[key]; !ok {
						t.Errorf("peek %d: bag lacks %s: %v", round, key, g.Header.Bag)
					}
				}
				if g.Header.HandledCount != 3 {
					t.Errorf("peek %d: HandledCount %d, want the stamped 3 however often the DLQ is read", round, g.Header.HandledCount)
				}
				if d := inspect.Describe(g); d.OriginalTopic != "orders" || d.Reason != "DeliveryError" {
					t.Errorf("peek %d: described %+v", round, d)
				}
			}
		})
	}
}

// TestReplayPubSub_Filters_R5 replays with a topic filter, then an id
// filter: exactly the selected messages reach their original topics and
// leave the dead-letter subscription; the rest stay.
func TestReplayPubSub_Filters_R5(t *testing.T) {
	t.Parallel()
	e := newPS(t)
	dlq, a, b := e.seed(t)
	src := e.source(dlq)
	p := e.producer(t)
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{Topics: []string{"topic-b"}}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != 2 || sum.Failed != 0 {
		t.Fatalf("topic filter: %+v %v", sum, err)
	}
	got := ids(e.drain(t, b+"-sub", 2))
	if got["m4"] == nil || got["m5"] == nil {
		t.Fatalf("%s received %v, want m4 m5", b, got)
	}
	sum, err = inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{IDs: []string{"m2"}, Grep: regexp.MustCompile(`timed out`)}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != 1 {
		t.Fatalf("id filter: %+v %v", sum, err)
	}
	if m := e.drain(t, a+"-sub", 1)[0]; m.Header.MessageID != "m2" {
		t.Fatalf("%s received %s, want m2", a, m.Header.MessageID)
	}
	left := ids(peekJSON(t, src, inspect.Filter{}))
	if len(left) != 2 || left["m1"] == nil || left["m3"] == nil {
		t.Fatalf("dead-letter subscription holds %v, want m1 m3", left)
	}
}

// TestReplayPubSub_MissingDestination_LosesNothing replays to a topic that
// does not exist: every publish fails (NotFound), all five stay.
func TestReplayPubSub_MissingDestination_LosesNothing(t *testing.T) {
	t.Parallel()
	e := newPS(t)
	dlq, _, _ := e.seed(t)
	src := e.source(dlq)
	sum, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), inspect.Filter{}, inspect.ReplayOptions{To: "no-such-topic"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 5 || sum.Replayed != 0 {
		t.Fatalf("summary %+v, want 5 failed", sum)
	}
	if got := peekJSON(t, src, inspect.Filter{}); len(got) != 5 {
		t.Fatalf("dead-letter subscription shows %d, want all 5 released at once", len(got))
	}
}

// TestReplayPubSub_FaultBetweenPublishAndRemove fails Acknowledge: m1 is
// published to its topic and is still in the dead-letter subscription, in
// both places, never in neither; the replay counts it as failed.
func TestReplayPubSub_FaultBetweenPublishAndRemove(t *testing.T) {
	t.Parallel()
	e := newPS(t)
	dlq, a, _ := e.seed(t)
	src := e.source(dlq)
	e.faults.FailAcknowledge(true)
	sum, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), inspect.Filter{IDs: []string{"m1"}}, inspect.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.faults.FailAcknowledge(false)
	if sum.Failed != 1 || sum.Replayed != 0 {
		t.Fatalf("summary %+v, want 1 failed", sum)
	}
	if m := e.drain(t, a+"-sub", 1)[0]; m.Header.MessageID != "m1" {
		t.Fatalf("%s received %s, want m1", a, m.Header.MessageID)
	}
	if left := ids(peekJSON(t, src, inspect.Filter{})); len(left) != 5 || left["m1"] == nil {
		t.Fatalf("dead-letter subscription holds %v, want all 5 (m1 not removed)", left)
	}
}

// TestReplayPubSub_BudgetStartsFromZero_R5 replays m4 (stamped count 5):
// the ordinary consumer of its topic presents 0, with replayedFrom and no
// rejection keys.
func TestReplayPubSub_BudgetStartsFromZero_R5(t *testing.T) {
	t.Parallel()
	e := newPS(t)
	dlq, _, b := e.seed(t)
	src := e.source(dlq)
	if _, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), inspect.Filter{IDs: []string{"m4"}}, inspect.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	m := e.drain(t, b+"-sub", 1)[0]
	h := m.Header
	if h.MessageID != "m4" || h.HandledCount != 0 || h.CorrelationID != "corr-m4" || h.Bag["tenant"] != "acme" {
		t.Fatalf("replayed copy: %+v; want m4, count 0, corr-m4, tenant acme", h)
	}
	if h.Bag[message.KeyReplayedFrom] != src.Name || m.HasRejectionMetadata() {
		t.Fatalf("replayed copy bag %v", h.Bag)
	}
}
