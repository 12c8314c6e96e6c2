package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// TestPeek_ShowsWhatThePumpRouted_R28_AC41 runs a pump with a defer handler
// and requeueCount 3 over SQS, then peeks the dead-letter queue through the
// ordinary consumer: the five rejection keys, HandledCount >= 3, and the
// same counts on a second peek (the DLQ receive count does not leak into
// the presented count of a routed copy).
func TestPeek_ShowsWhatThePumpRouted_R28_AC41(t *testing.T) {
	t.Parallel()
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(v), func(t *testing.T) {
			c := clients(t)
			queue, dlq := uniq("orders"), uniq("orders-dlq")
			makeQueues(t, c, queue, dlq, false)
			k, err := sqs.NewConsumer(c, sqs.ConsumerOptions{Queue: queue, DeadLetter: dlq, BufferSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			m := message.New("poison-"+string(v), queue, message.MTCommand, []byte(`{"orderId":42}`))
			if err := sqs.NewProducer(c, sqs.ProducerOptions{}).Send(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			p, err := pump.New(k, func(ctx context.Context, m *message.Message) pump.Result { return pump.Result{Outcome: pump.Defer} },
				pump.Options{Variant: v, TimeOut: time.Second, RequeueCount: 3, EmptyChannelDelay: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); _ = p.Run(ctx) }()
			waitDepth(t, c, dlq, 1, 30*time.Second)
			cancel()
			wg.Wait()

			src := source(reader(t, c, dlq, false), dlq)
			for round := 1; round <= 2; round++ {
				got := peekJSON(t, src, inspect.Filter{})
				if len(got) != 1 {
					t.Fatalf("peek %d: %d messages, want 1", round, len(got))
				}
				g := got[0]
				for _, key := range message.RejectionKeys {
					if _, ok := g.Header.Bag[key]; !ok {
						t.Errorf("peek %d: bag lacks %s: %v", round, key, g.Header.Bag)
					}
				}
				if g.Header.HandledCount < 3 {
					t.Errorf("peek %d: HandledCount %d, want >= 3 (the count the rejecting consumer stamped)", round, g.Header.HandledCount)
				}
				if g.Header.HandledCount != 3 {
					t.Errorf("peek %d: HandledCount %d, want exactly the stamped 3 however often the DLQ is read", round, g.Header.HandledCount)
				}
				d := inspect.Describe(g)
				if d.OriginalTopic != queue || d.Reason != "DeliveryError" {
					t.Errorf("peek %d: described %+v", round, d)
				}
			}
			if n := depth(t, c, dlq); n != 1 {
				t.Fatalf("after two peeks the DLQ holds %d messages, want 1 (peek removes nothing)", n)
			}
			if n := visible(t, c, dlq); n != 1 {
				t.Fatalf("after peek %d DLQ messages are visible, want 1 (released at once)", n)
			}
		})
	}
}

// seedDLQ fills a DLQ with five routed copies of different reasons, topics
// and messages, and returns the queue names (topics a and b exist).
func seedDLQ(t *testing.T, c *sqs.Clients) (dlq, topicA, topicB string) {
	dlq, topicA, topicB = uniq("dlq"), uniq("topic-a"), uniq("topic-b")
	makeQueues(t, c, topicA, dlq, false)
	makeQueues(t, c, topicB, "", false)
	deadLetter(t, c, dlq, "m1", topicA, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order 17 timed out"}, 3, false, "")
	deadLetter(t, c, dlq, "m2", topicA, message.Rejection{Reason: message.ReasonDeliveryError, Description: "order 18 timed out"}, 3, false, "")
	deadLetter(t, c, dlq, "m3", topicA, message.Rejection{Reason: message.ReasonUnacceptable, Description: "no customer"}, 0, false, "")
	deadLetter(t, c, dlq, "m4", topicB, message.Rejection{Reason: message.ReasonDeliveryError, Description: "payment declined"}, 5, false, "")
	deadLetter(t, c, dlq, "m5", topicB, message.Rejection{Reason: message.ReasonNone}, 1, false, "")
	return dlq, topicA, topicB
}

// TestReplay_EachFilter_R5 replays with each filter and checks that exactly
// the selected messages moved (published, then removed) and the others
// stayed.
func TestReplay_EachFilter_R5(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		filter func(a, b string) inspect.Filter
		want   []string
	}{
		{"reason", func(a, b string) inspect.Filter { return inspect.Filter{Reasons: []string{"unacceptable"}} }, []string{"m3"}},
		{"topic", func(a, b string) inspect.Filter { return inspect.Filter{Topics: []string{b}} }, []string{"m4", "m5"}},
		{"id", func(a, b string) inspect.Filter { return inspect.Filter{IDs: []string{"m2", "m5"}} }, []string{"m2", "m5"}},
		{"grep", func(a, b string) inspect.Filter {
			return inspect.Filter{Grep: regexp.MustCompile(`timed out`)}
		}, []string{"m1", "m2"}},
		{"since", func(a, b string) inspect.Filter { return inspect.Filter{Since: time.Now().Add(time.Hour)} }, nil},
		{"until", func(a, b string) inspect.Filter { return inspect.Filter{Until: time.Now().Add(time.Hour)} }, []string{"m1", "m2", "m3", "m4", "m5"}},
		{"limit", func(a, b string) inspect.Filter { return inspect.Filter{Limit: 2} }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := clients(t)
			dlq, a, b := seedDLQ(t, c)
			src := source(reader(t, c, dlq, false), dlq)
			p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
			sum, err := inspect.Replay(context.Background(), src, dlq, p, tc.filter(a, b), inspect.ReplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := len(tc.want)
			if tc.name == "limit" {
				want = 2
			}
			if sum.Replayed != want || sum.Failed != 0 || sum.Skipped+sum.Replayed > 5 {
				t.Fatalf("summary %+v, want %d replayed", sum, want)
			}
			if n := depth(t, c, dlq); n != 5-want {
				t.Fatalf("DLQ holds %d, want %d", n, 5-want)
			}
			var arrived []*message.Message
			na, nb := depth(t, c, a), depth(t, c, b)
			if na > 0 {
				arrived = append(arrived, drain(t, c, a, false, na)...)
			}
			if nb > 0 {
				arrived = append(arrived, drain(t, c, b, false, nb)...)
			}
			if len(arrived) != want {
				t.Fatalf("%d arrived, want %d", len(arrived), want)
			}
			got := ids(arrived)
			for _, id := range tc.want {
				if got[id] == nil {
					t.Errorf("%s did not arrive; got %v", id, got)
				}
			}
			left := ids(peekJSON(t, src, inspect.Filter{}))
			for id := range got {
				if left[id] != nil {
					t.Errorf("%s is both replayed and still in the DLQ", id)
				}
			}
		})
	}
}

// TestReplay_CopyShape_R5 checks what arrives: same id, body, bag entries and
// correlation id; no rejection keys; replayedFrom and replayedAt; a budget
// that starts from 0 on the ordinary consumer.
func TestReplay_CopyShape_R5(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	if _, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{IDs: []string{"m1"}}, inspect.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	m := drain(t, c, a, false, 1)[0]
	h := m.Header
	if h.MessageID != "m1" || string(m.Body) != `{"id":"m1"}` || h.CorrelationID != "corr-m1" || h.Bag["tenant"] != "acme" || h.MessageType != message.MTCommand {
		t.Errorf("replayed copy lost something: %+v body %s", h, m.Body)
	}
	for _, k := range append(message.RejectionKeys[:], message.KeyPumpRejectionReason) {
		if _, ok := h.Bag[k]; ok {
			t.Errorf("replayed copy still carries %s", k)
		}
	}
	if h.Bag[message.KeyReplayedFrom] != "sqs://"+dlq {
		t.Errorf("replayedFrom = %v", h.Bag[message.KeyReplayedFrom])
	}
	if s, _ := h.Bag.String(message.KeyReplayedAt); s == "" {
		t.Error("replayedAt missing")
	}
	if h.HandledCount != 0 {
		t.Errorf("replayed message presents HandledCount %d on its first delivery, want 0 (its budget starts afresh)", h.HandledCount)
	}
}

// TestReplay_KeepCountAndNewID checks --keep-count and --new-id.
func TestReplay_KeepCountAndNewID(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, _, b := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	if _, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{IDs: []string{"m4"}}, inspect.ReplayOptions{KeepCount: true, NewID: true}); err != nil {
		t.Fatal(err)
	}
	m := drain(t, c, b, false, 1)[0]
	if m.Header.HandledCount != 5 || m.Header.MessageID == "m4" || m.Header.CorrelationID != "corr-m4" {
		t.Errorf("got id %s count %d correlation %s; want a new id, count 5, corr-m4", m.Header.MessageID, m.Header.HandledCount, m.Header.CorrelationID)
	}
}

// TestReplay_MissingDestination_LosesNothing replays to a queue that does
// not exist: every message fails, none is created, none leaves the DLQ.
func TestReplay_MissingDestination_LosesNothing(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, _, _ := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{To: uniq("no-such-queue")})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 5 || sum.Replayed != 0 {
		t.Fatalf("summary %+v, want 5 failed", sum)
	}
	if n := depth(t, c, dlq); n != 5 {
		t.Fatalf("DLQ holds %d, want all 5", n)
	}
	if n := visible(t, c, dlq); n != 5 {
		t.Fatalf("%d visible, want 5 released at once", n)
	}
}

// TestReplay_FaultBetweenPublishAndRemove injects a failure on DeleteMessage:
// the message is published and stays in the DLQ, in both places, never in
// neither.
func TestReplay_FaultBetweenPublishAndRemove(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	injected := errors.New("injected: connection reset before DeleteMessage")
	fc := faultyClients(t, func(op string) error {
		if op == "DeleteMessage" {
			return injected
		}
		return nil
	})
	src := source(reader(t, fc, dlq, false), dlq)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{IDs: []string{"m1"}}, inspect.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || sum.Replayed != 0 {
		t.Fatalf("summary %+v, want 1 failed", sum)
	}
	if n := depth(t, c, dlq); n != 5 {
		t.Fatalf("DLQ holds %d, want 5 (m1 not removed)", n)
	}
	if got := drain(t, c, a, false, 1); got[0].Header.MessageID != "m1" {
		t.Fatalf("destination got %s, want m1", got[0].Header.MessageID)
	}
}

// TestReplay_FIFOKeepsGroup replays from a FIFO DLQ: the group id is kept,
// and a second replay of the same message within the five-minute
// deduplication window is not dropped (fresh deduplication id).
func TestReplay_FIFOKeepsGroup(t *testing.T) {
	t.Parallel()
	c := clients(t)
	queue, dlq := uniq("fifo-orders"), uniq("fifo-dlq")
	makeQueues(t, c, queue, dlq, true)
	qn, dn := sqs.QueueName(queue, true), sqs.QueueName(dlq, true)
	p := sqs.NewProducer(c, sqs.ProducerOptions{Fifo: true, MakeChannels: broker.MakeValidate})
	deadLetter(t, c, dlq, "f1", qn, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, 3, true, "customer-7")
	for round := 1; round <= 2; round++ {
		src := source(reader(t, c, dlq, true), dn)
		sum, err := inspect.Replay(context.Background(), src, dn, p, inspect.Filter{}, inspect.ReplayOptions{})
		if err != nil || sum.Replayed != 1 {
			t.Fatalf("round %d: %+v %v", round, sum, err)
		}
		m := drain(t, c, qn, true, 1)[0]
		if m.Header.PartitionKey != "customer-7" || m.Header.MessageID != "f1" {
			t.Fatalf("round %d: got group %q id %s, want customer-7 f1", round, m.Header.PartitionKey, m.Header.MessageID)
		}
		// It fails again and the Router dead-letters it again, carrying the
		// deduplication id it arrived with: the next replay must not reuse it.
		again := message.Stamp(m, dn, message.Rejection{Reason: message.ReasonDeliveryError, Description: "again"}, time.Now())
		if err := p.Send(context.Background(), again); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplay_DryRunChangesNothing checks --dry-run.
func TestReplay_DryRunChangesNothing(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	sum, err := inspect.Replay(context.Background(), src, dlq, nil, inspect.Filter{}, inspect.ReplayOptions{DryRun: true})
	if err != nil || sum.Replayed != 5 || !sum.DryRun {
		t.Fatalf("%+v %v", sum, err)
	}
	if depth(t, c, dlq) != 5 || depth(t, c, a) != 0 {
		t.Fatal("a dry run moved messages")
	}
}

// TestStats_GroupsNormalised checks the stats of the seeded DLQ.
func TestStats_GroupsNormalised(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	st, _, err := inspect.Collect(context.Background(), source(reader(t, c, dlq, false), dlq), inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 5 || st.ByReason["DeliveryError"] != 3 || st.ByTopic[a] != 3 {
		t.Fatalf("stats %+v", st)
	}
	if g := st.Groups[0]; g.Count != 2 || g.Message != "order <n> timed out" || g.OriginalTopic != a {
		t.Fatalf("largest group %+v, want the two timeouts", g)
	}
	if depth(t, c, dlq) != 5 {
		t.Fatal("stats removed messages")
	}
}

// TestReplay_FIFOGroupBeyondOneBatch replays a FIFO DLQ holding fifteen
// messages of one message group: SQS holds back the group's later messages
// while earlier ones are in flight, so the scan must let the replay's
// removals finish before it takes an empty receive for the end. All fifteen
// arrive, in order, in their group.
func TestReplay_FIFOGroupBeyondOneBatch(t *testing.T) {
	t.Parallel()
	c := clients(t)
	queue, dlq := uniq("fifo-orders"), uniq("fifo-dlq")
	makeQueues(t, c, queue, dlq, true)
	qn, dn := sqs.QueueName(queue, true), sqs.QueueName(dlq, true)
	const n = 15
	for i := range n {
		deadLetter(t, c, dlq, fmt.Sprintf("g%02d", i), qn, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, 3, true, "customer-9")
	}
	p := sqs.NewProducer(c, sqs.ProducerOptions{Fifo: true, MakeChannels: broker.MakeValidate})
	src := source(reader(t, c, dlq, true), dn)
	// A short poll (no long-poll wait to hide the gap): the receive that
	// follows a batch finds the group held back while its deletes run.
	src.Wait = 100 * time.Millisecond
	sum, err := inspect.Replay(context.Background(), src, dn, p, inspect.Filter{}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != n || sum.Failed != 0 {
		t.Fatalf("summary %+v %v, want %d replayed", sum, err, n)
	}
	got := drain(t, c, qn, true, n)
	for i, m := range got {
		if want := fmt.Sprintf("g%02d", i); m.Header.MessageID != want || m.Header.PartitionKey != "customer-9" {
			t.Fatalf("message %d: %s in group %q, want %s in customer-9", i, m.Header.MessageID, m.Header.PartitionKey, want)
		}
	}
}
