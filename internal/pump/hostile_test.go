package pump_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// routedCopy returns what a rejecting consumer of srcQueue publishes to
// dlqQueue: a copy stamped with its count and the five metadata keys.
func routedCopy(id string, stamped int) *message.Message {
	m := message.New(id, srcQueue, message.MTCommand, []byte(`{}`))
	m.Header.HandledCount = stamped
	return message.Stamp(m, dlqQueue, message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget"}, time.Now())
}

// R-11, R-28 (a hostile count): a subscription that consumes a dead-letter queue
// has a budget that runs down. A deferring handler with requeueCount 3 is
// invoked exactly 3 times per routed copy, every delivery presents the
// stamped count of the source channel (R-28, as AC-41 asks), and the copy is
// then routed by THIS subscription's dead-letter key as a DeliveryError.
func TestRoutedCopyBudgetRunsDownOnItsOwnChannel_R11_R28(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const dlq2 = "orders.dlq.dlq"
		e := newEnv(t, memory.ConsumerOptions{Queue: dlqQueue, DeadLetter: dlq2, StopWhenEmpty: true})
		e.publishMsg(t, dlqQueue, routedCopy("c1", 5))
		var mu sync.Mutex
		var seen []int
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			seen = append(seen, m.Header.HandledCount)
			mu.Unlock()
			return pump.Result{Outcome: pump.Defer}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 3 {
			t.Fatalf("handler invocations = %d, want exactly 3 (the budget must run down)", got)
		}
		mu.Lock()
		for i, c := range seen {
			if c != 5 {
				t.Errorf("delivery %d presented %d, want the stamped 5 every time (R-28)", i+1, c)
			}
		}
		mu.Unlock()
		out := e.receiveAll(t, dlq2)
		if len(out) != 1 {
			t.Fatalf("%s holds %d messages, want 1", dlq2, len(out))
		}
		if got, _ := out[0].Header.Bag.String(message.KeyOriginalTopic); got != dlqQueue {
			t.Errorf("originalTopic = %q, want %q (routed by this subscription)", got, dlqQueue)
		}
		if got, _ := out[0].Header.Bag.String(message.KeyRejectionMessage); !strings.Contains(got, "delivery 3 on this channel reached requeueCount 3") {
			t.Errorf("rejectionMessage = %q, want it to say the channel's own delivery 3 reached the budget", got)
		}
		if d := inspect.Describe(out[0]); d.Deliveries != 3 {
			t.Errorf("the copy reads as delivered %d times, want this channel's 3 (its stamped count is 5)", d.Deliveries)
		}
		if d := e.b.Depth(dlqQueue); d != 0 {
			t.Errorf("%s depth = %d, want 0", dlqQueue, d)
		}
	})
}

// R-11 (a hostile count): a raw producer that forges originalTopic and
// rejectionTimestamp onto a source message cannot make its budget inert.
func TestForgedRejectionMetadataDoesNotMakeBudgetInert_R11(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		m := message.New("f1", srcQueue, message.MTCommand, []byte(`{}`))
		m.Header.Bag[message.KeyOriginalTopic] = "elsewhere"
		m.Header.Bag[message.KeyRejectionTimestamp] = "2026-01-01T00:00:00.0000000+00:00"
		e.publishMsg(t, srcQueue, m)
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 3 {
			t.Fatalf("handler invocations = %d, want exactly 3", got)
		}
		if n := len(e.receiveAll(t, dlqQueue)); n != 1 {
			t.Errorf("dead-letter queue holds %d, want 1", n)
		}
	})
}

// A hostile count: the pump's +1 saturates. A count at math.MaxInt (what a wrapped
// sum would overflow from) is never presented negative; it has reached any
// budget already, so it is rejected on arrival without a handler run
// (exhausted is final: docs/adr/0001-delivery-count-contract.md §10).
func TestCountAtMaxIntSaturatesAndRejects_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		m := message.New("big", srcQueue, message.MTCommand, []byte(`{}`))
		m.Header.HandledCount = math.MaxInt
		e.publishMsg(t, srcQueue, m)
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 0 {
			t.Fatalf("handler invocations = %d, want 0 (the count is past the budget on arrival)", got)
		}
		for _, ev := range e.events.Of(pump.EventRejected) {
			if ev.DeliveryCount < 0 {
				t.Errorf("rejected event count %d, want >= 0 (saturated, not wrapped)", ev.DeliveryCount)
			}
		}
		if n := len(e.receiveAll(t, dlqQueue)); n != 1 {
			t.Errorf("dead-letter queue holds %d, want 1", n)
		}
	})
}

// FuzzBudgetRejectsByRthDelivery is the pump half of the hostile-count
// property (docs/adr/0001-delivery-count-contract.md §9): for any stamped
// count, with or without (forged or genuine) rejection metadata, a deferring
// handler under requeueCount R is invoked at most R times (not at all when a
// source message arrives with its count at R or more: exhausted is final) and
// the message ends on the dead-letter queue, in both variants. Seeds in
// testdata/fuzz/FuzzBudgetRejectsByRthDelivery.
func FuzzBudgetRejectsByRthDelivery(f *testing.F) {
	f.Add(0, false, uint8(3))
	f.Add(math.MaxInt, false, uint8(3))
	f.Add(5, true, uint8(3))
	f.Add(-7, true, uint8(1))
	f.Fuzz(func(t *testing.T, stamped int, metadata bool, r uint8) {
		budget := int(r%6) + 1
		for _, v := range variants {
			e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
			m := message.New("p", srcQueue, message.MTCommand, []byte(`{}`))
			m.Header.HandledCount = stamped
			if metadata {
				m.Header.Bag[message.KeyOriginalTopic] = "t"
				m.Header.Bag[message.KeyRejectionTimestamp] = "x"
			}
			e.publishMsg(t, srcQueue, m)
			opts := fastOptions(v)
			opts.RequeueCount = budget
			var low bool
			e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
				if m.Header.HandledCount < 0 {
					low = true
				}
				return pump.Result{Outcome: pump.Defer}
			})
			if err := e.wait(t, 10*time.Second); err != nil {
				t.Fatalf("%s: Run = %v", v, err)
			}
			lo := int64(1)
			if !metadata && stamped >= budget {
				lo = 0 // exhausted on arrival: never handled
			}
			if got := e.calls.Load(); got > int64(budget) || got < lo || (lo == 0 && got != 0) {
				t.Fatalf("%s: stamped %d metadata %v budget %d: %d invocations, want %d..%d", v, stamped, metadata, budget, got, lo, budget)
			}
			if low {
				t.Fatalf("%s: a negative count was presented", v)
			}
			if n := len(e.receiveAll(t, dlqQueue)); n != 1 {
				t.Fatalf("%s: dead-letter queue holds %d, want 1", v, n)
			}
		}
	})
}

// TestRoutedCopyDeferralLogSaysWhatCounts: a routed copy stamped 3
// that is deferred on a channel with requeueCount 3 is logged with the count
// it carries and the deliveries spent here (delivery_count=3 budget=3
// budget_spent=1, then 2), never delivery_count=4 budget=3, which read as a
// budget overrun.
func TestRoutedCopyDeferralLogSaysWhatCounts(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{Queue: dlqQueue, DeadLetter: "orders.dlq.dlq", StopWhenEmpty: true})
		e.publishMsg(t, dlqQueue, routedCopy("c1", 3))
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		deferred := e.events.Of(pump.EventDeferred)
		if len(deferred) != 2 {
			t.Fatalf("%d deferrals, want 2 (the third delivery exhausts the budget)", len(deferred))
		}
		for i, d := range deferred {
			if d.DeliveryCount != 3 || d.Spent != i+1 {
				t.Errorf("deferral %d: delivery count %d, spent %d; want the stamped 3 and %d", i+1, d.DeliveryCount, d.Spent, i+1)
			}
		}
		var logged [][3]float64
		for _, r := range e.logs.records(t) {
			if r["msg"] == pump.LogDeferred {
				c, _ := r["delivery_count"].(float64)
				b, _ := r["budget"].(float64)
				s, _ := r["budget_spent"].(float64)
				logged = append(logged, [3]float64{c, b, s})
			}
		}
		if len(logged) != 2 || logged[0] != [3]float64{3, 3, 1} || logged[1] != [3]float64{3, 3, 2} {
			t.Errorf("deferrals logged as (delivery_count, budget, budget_spent) %v, want (3 3 1) and (3 3 2)", logged)
		}
	})
}
