package pump_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// cycleHop is one subscription of a rejection cycle on the memory
// transport: the queue it reads, where it routes, and its handler.
type cycleHop struct {
	queue, deadLetter, invalid string
	outcome                    pump.Outcome
	budget                     int
}

// Subscriptions whose rejection destinations form a cycle (no linter sees
// them: each could be in a file of its own) do not route a poison message
// round for ever (docs/adr/0004 decision 12): it goes round once, and the
// subscription whose rejection would route it to a destination on its
// rejectionPath a second time leaves it on its own queue, released with
// the longest delay, with one Error; nothing is lost and no routing
// follows. Both variants, on the memory transport: two subscriptions
// rejecting, two deferring with a budget of 2 (a deferring handler once
// saw delivery_count 50551), and three whose cycle passes an
// invalid-message channel.
func TestRejectionCycleIsBounded(t *testing.T) {
	cases := []struct {
		name string
		hops []cycleHop
		// holder is the queue left holding the message; routed the
		// routings before the refusal.
		holder string
		routed int
		path   string
	}{
		{"two rejecting", []cycleHop{
			{queue: "qa", deadLetter: "qb", outcome: pump.Reject, budget: -1},
			{queue: "qb", deadLetter: "qa", outcome: pump.Reject, budget: -1},
		}, "qa", 2, "qb,qa"},
		{"two deferring with budget 2", []cycleHop{
			{queue: "qa", deadLetter: "qb", outcome: pump.Defer, budget: 2},
			{queue: "qb", deadLetter: "qa", outcome: pump.Defer, budget: 2},
		}, "qa", 2, "qb,qa"},
		{"three through an invalid-message channel", []cycleHop{
			{queue: "qa", deadLetter: "qb", outcome: pump.Reject, budget: -1},
			{queue: "qb", deadLetter: "qb-dlq", invalid: "qc", outcome: pump.Unacceptable, budget: -1},
			{queue: "qc", deadLetter: "qa", outcome: pump.Reject, budget: -1},
		}, "qa", 3, "qb,qc,qa"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				b := memory.NewBroker(false)
				logs := &syncBuffer{}
				logger := slog.New(slog.NewJSONHandler(logs, nil))
				var runs []*pumptest.Run
				for _, h := range tc.hops {
					c := b.NewConsumer(memory.ConsumerOptions{Queue: h.queue, DeadLetter: h.deadLetter, Invalid: h.invalid, Logger: logger})
					opts := fastOptions(v)
					opts.Subscription, opts.RequeueCount = h.queue, h.budget
					outcome := h.outcome
					runs = append(runs, pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result {
						return pump.Result{Outcome: outcome, Reason: "poison"}
					}))
				}
				m := message.New("poison-1", "qa", message.MTCommand, []byte(`{}`))
				if err := b.Publish(context.Background(), "qa", m); err != nil {
					t.Fatal(err)
				}
				rejected := func() (routed, refused int) {
					for _, r := range runs {
						for _, e := range r.Of(pump.EventRejected) {
							if e.Permanent {
								refused++
							} else if e.Err == nil {
								routed++
							}
						}
					}
					return routed, refused
				}
				pumptest.WaitUntil(t, 10*time.Second, "the cycle refused", func() bool {
					_, refused := rejected()
					return refused > 0
				})
				// The message now waits 10 minutes on its queue: no
				// routing, no handler run follows.
				pumptest.Stays(t, 500*time.Millisecond, "no rejection after the refusal", func() bool {
					routed, refused := rejected()
					return routed == tc.routed && refused == 1
				})
				for _, r := range runs {
					r.Stop(t)
				}
				cycles := withMsg(logs.records(t), broker.LogRoutingCycle)
				if len(cycles) != 1 || cycles[0]["level"] != "ERROR" || cycles[0]["message_id"] != "poison-1" || cycles[0]["rejection_path"] != tc.path {
					t.Errorf("cycle records = %v, want one Error naming poison-1 and the path %s", cycles, tc.path)
				}
				total := 0
				for _, q := range b.Queues() {
					total += b.Depth(q)
				}
				held := b.Snapshot(tc.holder)
				if total != 1 || len(held) != 1 {
					t.Fatalf("queues hold %d messages, %s holds %d: want the one message, on %s (never lost, never duplicated)", total, tc.holder, len(held), tc.holder)
				}
				if got := message.RejectionPath(held[0]); got != tc.path {
					t.Errorf("held copy's rejectionPath = %q, want %q", got, tc.path)
				}
			})
		})
	}
}

// A copy moved back from its dead-letter queue to its source by something
// other than a rejection is a redrive, not a cycle (docs/adr/0004 decision
// 12): rejected again on its source, it is dead-lettered again. Here the
// mover is the dead-letter queue's own native redrive policy, whose
// dead-letter queue is the source (a cycle through a broker's own moves,
// which the Router cannot tell from an operator's redrives): the message
// is dead-lettered 1 + MaxRedrives times, each copy with its rejection,
// then held on its source with one cycle Error. Both variants, memory.
func TestRedrivenCopyIsDeadLetteredAgain(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		b := memory.NewBroker(false)
		logs := &syncBuffer{}
		logger := slog.New(slog.NewJSONHandler(logs, nil))
		src := b.NewConsumer(memory.ConsumerOptions{Queue: "orders", DeadLetter: "orders-dlq", Logger: logger})
		// The dead-letter queue's consumer defers everything; its native
		// policy moves a message back to orders on its second receive.
		dlq := b.NewConsumer(memory.ConsumerOptions{Queue: "orders-dlq", MaxReceiveCount: 1, NativeDeadLetter: "orders", Logger: logger})
		opts := fastOptions(v)
		opts.Subscription = "orders"
		var handled atomic.Int64
		runSrc := pumptest.Start(t, src, opts, func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Reject, Reason: fmt.Sprintf("poison %d", handled.Add(1))}
		})
		dopts := fastOptions(v)
		dopts.Subscription = "orders-dlq"
		runDLQ := pumptest.Start(t, dlq, dopts, func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Defer}
		})
		if err := b.Publish(context.Background(), "orders", message.New("redriven-1", "orders", message.MTCommand, []byte(`{}`))); err != nil {
			t.Fatal(err)
		}
		counts := func() (routed, refused int) {
			for _, e := range runSrc.Of(pump.EventRejected) {
				if e.Permanent {
					refused++
				} else if e.Err == nil {
					routed++
				}
			}
			return routed, refused
		}
		pumptest.WaitUntil(t, 10*time.Second, "the last redrive held", func() bool {
			_, refused := counts()
			return refused > 0
		})
		pumptest.Stays(t, 500*time.Millisecond, "no rejection after the hold", func() bool {
			routed, refused := counts()
			return routed == 1+broker.MaxRedrives && refused == 1
		})
		runSrc.Stop(t)
		runDLQ.Stop(t)
		recs := logs.records(t)
		if n := len(withMsg(recs, broker.LogRedriven)); n != broker.MaxRedrives {
			t.Errorf("%d redrive records, want %d", n, broker.MaxRedrives)
		}
		want := strings.TrimSuffix(strings.Repeat("orders-dlq,", 1+broker.MaxRedrives), ",")
		cycles := withMsg(recs, broker.LogRoutingCycle)
		if len(cycles) != 1 || cycles[0]["rejection_path"] != want || cycles[0]["destination"] != "orders-dlq" {
			t.Errorf("cycle records = %v, want one naming orders-dlq and the path %s", cycles, want)
		}
		held := b.Snapshot("orders")
		if b.Depth("orders")+b.Depth("orders-dlq") != 1 || len(held) != 1 {
			t.Fatalf("orders holds %d, orders-dlq %d: want the one message on orders", b.Depth("orders"), b.Depth("orders-dlq"))
		}
		// The held copy is the last dead-lettered one, with its rejection.
		if got := held[0].Header.Bag[message.KeyRejectionMessage]; got != fmt.Sprintf("poison %d", 1+broker.MaxRedrives) {
			t.Errorf("held copy's rejectionMessage = %v, want the last handler run's reason", got)
		}
	})
}
