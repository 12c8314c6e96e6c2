package sqs

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// routedPastTheHandler runs a pump of opts over k with a handler that
// returns outcome, until dlq holds a dead-letter copy, then stops it. It
// fails the test if no copy arrives within 20 s or Run returns an error,
// and reports an error if the handler ran or the copy's rejection message
// is not want.
func routedPastTheHandler(t *testing.T, c *Clients, k *Consumer, opts pump.Options, outcome pump.Outcome, dlq, want string, obs ...pump.Observer) {
	t.Helper()
	runs := make(chan struct{}, 1)
	p, err := pump.New(k, func(context.Context, *message.Message) pump.Result {
		runs <- struct{}{}
		return pump.Result{Outcome: outcome}
	}, opts, obs...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	reader, err := NewConsumer(c, ConsumerOptions{Queue: dlq})
	if err != nil {
		t.Fatal(err)
	}
	dead := receiveOne(t, reader, 20*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(runs) != 0 {
		t.Error("the handler ran on the delivery routed past it")
	}
	if desc, _ := dead.Header.Bag.String(message.KeyRejectionMessage); desc != want {
		t.Errorf("rejection message\n%q, want\n%q", desc, want)
	}
}

// A handler cut off by every graceful stop (it outlasts drainTimeout each
// time) spends a delivery per stop on SQS, which counts receives: with
// requeueCount 2 the budget forgives up to 2 such deliveries, so after 4
// stops the 5th delivery is dead-lettered without a handler run, in both
// variants. Each stop's warning says the delivery counts and what is
// forgiven, and the rejection message says exactly that, not that handlers
// spent the budget (docs/adr/0001-delivery-count-contract.md §10).
func TestHandlerCutOffByEveryStopIsRoutedPastTheForgivenDeliveries_R4(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q, dlq := uniq("cutoff-"+string(v)), uniq("cutoff-dlq-"+string(v))
			ch := ChannelOptions{Queue: q, DeadLetter: dlq}
			k := setup(t, c, ch, ConsumerOptions{VisibilityTimeout: time.Minute})
			send(t, c, ProducerOptions{}, newMessage(q))
			const budget, stops = 2, 4
			started := make(chan struct{}, 1)
			cutOff := func(ctx context.Context, _ *message.Message) pump.Result {
				started <- struct{}{}
				<-ctx.Done() // outlasts every drain
				return pump.Result{Outcome: pump.Defer, Err: ctx.Err()}
			}
			opts := pump.Options{Subscription: "cutoff", Variant: v, BufferSize: 1, TimeOut: time.Second, RequeueCount: budget,
				DrainTimeout: 100 * time.Millisecond, EmptyChannelDelay: 10 * time.Millisecond}
			for i := range stops {
				sink, logger := newSink()
				p, err := pump.New(k, cutOff, opts, pump.LogObserver{Logger: logger})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				select {
				case <-started:
				case <-time.After(20 * time.Second):
					cancel()
					t.Fatalf("stop %d: the handler never ran", i+1)
				}
				cancel()
				if err := <-done; err != nil {
					t.Fatalf("stop %d: Run = %v", i+1, err)
				}
				rec, ok := sink.find(slog.LevelWarn, pump.LogCutOff)
				if !ok {
					t.Fatalf("stop %d: no %q warning", i+1, pump.LogCutOff)
				}
				if rec.Attrs["budget"] != "2" || rec.Attrs["delivery_count"] != strconv.Itoa(i) {
					t.Errorf("stop %d: cut-off warning attributes %v, want budget 2 and delivery_count %d", i+1, rec.Attrs, i)
				}
			}
			// The 5th delivery: 4 before it, the 2 forgiven and 2 more.
			want := "redelivery budget exhausted: delivered 5 times on this channel, handled 0 times in this process; of the 4 deliveries before this one, at most 2 are forgiven " +
				"as deliveries no handler finished (stops and kills of consumers, lapsed leases); the other 2 count against requeueCount 2 as handlers' deferrals would, though no handler may have run it (brighter cannot tell them apart); routed without a handler run"
			routedPastTheHandler(t, c, k, opts, pump.Ack, dlq, want, pumptest.NewEvents())
		})
	}
}

// A message whose first delivery carries a stamped count that reached the
// budget (as a .NET publisher or another consumer's requeue may stamp it)
// is dead-lettered on that delivery without a handler run, in both
// variants, and its rejection message says so: the stamp, one delivery on
// this channel, not "delivered 6 times".
func TestStampedCountAtTheBudgetIsDeadLetteredWithAnHonestReason_R4(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q, dlq := uniq("stamped-"+string(v)), uniq("stamped-dlq-"+string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{VisibilityTimeout: time.Minute})
			m := newMessage(q)
			m.Header.HandledCount = 5
			send(t, c, ProducerOptions{}, m)
			want := "redelivery budget exhausted: its stamped count 5 (the handled-count its sender wrote, taken as deferrals by handlers before it reached this channel) " +
				"reached requeueCount 3; delivered 1 time on this channel, handled 0 times in this process; routed without a handler run"
			routedPastTheHandler(t, c, k, pump.Options{Subscription: "stamped", Variant: v, BufferSize: 1, TimeOut: time.Second, RequeueCount: 3,
				EmptyChannelDelay: 10 * time.Millisecond}, pump.Defer, dlq, want)
		})
	}
}

// A graceful stop while a deferred message waits out its requeue delay
// leaves it invisible for the rest of the delay, in both variants: the
// deferral is one ChangeMessageVisibility, and neither the pump's stop nor
// the consumer's Close touches it (docs/commands/consume.md#pubsub-redelivery-gaps
// compares the Pub/Sub stream, which needs its Close to keep the hold).
func TestStopDuringADeferralLeavesTheMessageAwayForItsDelay_R7(t *testing.T) {
	const delay = 4 * time.Second
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("held-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{VisibilityTimeout: time.Minute})
			send(t, c, ProducerOptions{}, newMessage(q))
			at := pumptest.DeferredThenStopped(t, v, k, delay, 20*time.Second)
			reader, err := NewConsumer(c, ConsumerOptions{Queue: q})
			if err != nil {
				t.Fatal(err)
			}
			for time.Since(at) < delay+20*time.Second {
				ms, err := reader.Receive(context.Background(), time.Second)
				if err != nil {
					t.Fatalf("receive: %v", err)
				}
				if len(ms) == 0 {
					continue
				}
				// Measured as the Receive returns, up to its wait after the arrival.
				if back := time.Since(at); back < delay {
					t.Fatalf("the deferred message came back %s after its deferral, before its delay %s", back, delay)
				}
				return
			}
			t.Fatal("the deferred message never came back")
		})
	}
}
