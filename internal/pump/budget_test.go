package pump_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// a budget of 3 with a handler that always defers gives exactly 3
// handler invocations presenting 0, 1, 2 (the memory counter is exact), two
// requeues, one DeliveryError rejection, and a dead-letter copy that
// carries HandledCount 3 and the five metadata keys.
func TestBudgetRejectsAfterRDeliveries_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		e.publish(t, srcQueue, "m1", "")
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
			t.Fatalf("Run = %v, want nil (MT_QUIT when the source is empty)", err)
		}
		if got := e.calls.Load(); got != 3 {
			t.Fatalf("handler invocations = %d, want exactly 3", got)
		}
		if fmt.Sprint(seen) != "[0 1 2]" {
			t.Errorf("presented counts = %v, want [0 1 2]", seen)
		}
		if n := e.events.Count(pump.EventDeferred); n != 2 {
			t.Errorf("deferred events = %d, want 2", n)
		}
		rej := e.events.Of(pump.EventRejected)
		if len(rej) != 1 || rej[0].Reason != message.ReasonDeliveryError || rej[0].Destination != dlqQueue {
			t.Fatalf("rejections = %+v, want exactly one DeliveryError to %s", rej, dlqQueue)
		}
		dl := e.receiveAll(t, dlqQueue)
		if len(dl) != 1 {
			t.Fatalf("dead-letter queue holds %d messages, want 1", len(dl))
		}
		if dl[0].Header.HandledCount != 3 {
			t.Errorf("dead-letter copy HandledCount = %d, want 3 (R-5, R-28)", dl[0].Header.HandledCount)
		}
		requireFiveKeys(t, dl[0], "DeliveryError")
		// What dlq peek, stats and triage read from the copy: delivered 3
		// times, not the stamped count plus one.
		if d := inspect.Describe(dl[0]); d.Deliveries != 3 {
			t.Errorf("the copy reads as delivered %d times, want 3 (rejection message %q)", d.Deliveries, d.RejectionMessage)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
	})
}

// requeueCount -1 never rejects; the count still advances.
func TestUnlimitedBudgetNeverRejects_R6(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		e.publish(t, srcQueue, "m1", "")
		const defers = 25
		var last atomic.Int64
		e.start(t, fastOptions(v), func(_ context.Context, m *message.Message) pump.Result {
			last.Store(int64(m.Header.HandledCount))
			if m.Header.HandledCount < defers {
				return pump.Result{Outcome: pump.Defer}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != defers+1 {
			t.Errorf("handler invocations = %d, want %d", got, defers+1)
		}
		if last.Load() != defers {
			t.Errorf("last presented count = %d, want %d", last.Load(), defers)
		}
		if n := e.events.Count(pump.EventRejected) + e.events.Count(pump.EventBudgetExhausted); n != 0 {
			t.Errorf("rejected/budget events = %d, want 0", n)
		}
		if d := e.b.Depth(dlqQueue); d != 0 {
			t.Errorf("dead-letter depth = %d, want 0", d)
		}
	})
}

// budgets 1, 0 and -3 reject on the first deferral without calling
// Requeue.
func TestBudgetOneZeroOrBelowMinusOneRejectsOnFirstDeferral_R7(t *testing.T) {
	for _, budget := range []int{1, 0, -3} {
		t.Run(fmt.Sprintf("requeueCount=%d", budget), func(t *testing.T) {
			t.Parallel()
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
				cc := &countingConsumer{Consumer: e.c}
				e.publish(t, srcQueue, "m1", "")
				opts := fastOptions(v)
				opts.RequeueCount = budget
				e.startWith(t, cc, opts, deferAlways)
				if err := e.wait(t, 10*time.Second); err != nil {
					t.Fatalf("Run = %v", err)
				}
				if got := e.calls.Load(); got != 1 {
					t.Errorf("handler invocations = %d, want 1", got)
				}
				if got := cc.requeues.Load(); got != 0 {
					t.Errorf("Requeue calls = %d, want 0", got)
				}
				rej := e.events.Of(pump.EventRejected)
				if len(rej) != 1 || rej[0].Reason != message.ReasonDeliveryError {
					t.Fatalf("rejections = %+v, want one DeliveryError", rej)
				}
				dl := e.receiveAll(t, dlqQueue)
				if len(dl) != 1 || dl[0].Header.HandledCount != 1 {
					t.Fatalf("dead-letter = %v, want one copy with HandledCount 1", dl)
				}
			})
		})
	}
}

// R-4 (reporting): budget exhaustion is logged at Warning exactly once per
// message, naming the message id, the count and the budget.
func TestBudgetExhaustionWarningOncePerMessage_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		ids := []string{"a", "b", "c"}
		for _, id := range ids {
			e.publish(t, srcQueue, id, "")
		}
		opts := fastOptions(v)
		opts.RequeueCount = 2
		e.start(t, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		warns := withMsg(e.logs.records(t), pump.LogBudgetExhausted)
		per := map[string]int{}
		for _, w := range warns {
			if w["level"] != "WARN" {
				t.Errorf("budget record level = %v, want WARN", w["level"])
			}
			if attr(w, "delivery_count") != "2" || attr(w, "budget") != "2" {
				t.Errorf("budget record = %v, want delivery_count 2 and budget 2", w)
			}
			per[attr(w, "message_id")]++
		}
		for _, id := range ids {
			if per[id] != 1 {
				t.Errorf("budget warnings for %s = %d, want exactly 1 (all: %v)", id, per[id], per)
			}
		}
		if len(warns) != len(ids) {
			t.Errorf("budget warnings = %d, want %d", len(warns), len(ids))
		}
	})
}

// Requeue delay: a deferred message is not redelivered before the
// subscription's requeueDelay, and a handler's Result.Delay overrides it.
func TestRequeueDelayHonoured_NFR8(t *testing.T) {
	cases := []struct {
		name      string
		subDelay  time.Duration
		hDelay    time.Duration
		wantDelay time.Duration
	}{
		{"subscription requeueDelay", 150 * time.Millisecond, 0, 150 * time.Millisecond},
		{"handler delay overrides", time.Hour, 120 * time.Millisecond, 120 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{})
				e.publish(t, srcQueue, "m1", "")
				var mu sync.Mutex
				var returned, again time.Time
				opts := fastOptions(v)
				opts.RequeueDelay = tc.subDelay
				e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
					mu.Lock()
					defer mu.Unlock()
					if m.Header.HandledCount == 0 {
						returned = time.Now()
						return pump.Result{Outcome: pump.Defer, Delay: tc.hDelay}
					}
					again = time.Now()
					return pump.Result{Outcome: pump.Ack}
				})
				polltest.Until(t, 10*time.Second, "redelivery", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
				mu.Lock()
				gap := again.Sub(returned)
				mu.Unlock()
				if gap < tc.wantDelay {
					t.Errorf("redelivered %v after the deferral, want at least %v", gap, tc.wantDelay)
				}
				d := e.events.Of(pump.EventDeferred)
				if len(d) != 1 || d[0].Delay != tc.wantDelay {
					t.Errorf("deferred events = %+v, want one with Delay %v", d, tc.wantDelay)
				}
			})
		})
	}
}

// failingRouter wraps the memory consumer so that its first fails
// rejections fail as a dead-letter destination that is down does: the
// message is released at once for redelivery and reported Released with an
// error.
type failingRouter struct {
	*memory.Consumer
	fails atomic.Int64
}

func (c *failingRouter) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	if c.fails.Add(-1) >= 0 {
		if err := c.Consumer.Requeue(ctx, m, 0); err != nil {
			return broker.RejectResult{Route: broker.RouteDeadLetter, Err: err}
		}
		return broker.RejectResult{Route: broker.RouteDeadLetter, Released: true, Err: errors.New("dead-letter destination down")}
	}
	return c.Consumer.Reject(ctx, m, r)
}

// Exhausted is final. Budget 3, a deferring handler, and a dead-letter
// route that fails three times: the handler runs exactly 3 times (counts
// 0, 1, 2); every later delivery, its routing failed here, is routed
// without a handler run, and the fourth routing lands it on the
// dead-letter queue. No further deferral or requeue happens. The message
// is judged and counted once: one budget-exhausted event, the later
// routings marked retries, the copy stamped with the count the budget
// judged and its rejection message saying delivered 6 times, handled 3
// times in this process.
func TestExhaustedMessageNeverHandledAgainWhileRoutingFails_AC3(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		c := &failingRouter{Consumer: e.c}
		c.fails.Store(3)
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.startWith(t, c, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 3 {
			t.Fatalf("handler invocations = %d, want exactly 3 (an exhausted delivery was handled again)", got)
		}
		rej := e.events.Of(pump.EventRejected)
		if len(rej) != 4 {
			t.Fatalf("rejections = %d, want 4 (three failed routings, then the one that landed)", len(rej))
		}
		for i, ev := range rej[1:] {
			if ev.Duration != 0 || ev.Reason != message.ReasonDeliveryError {
				t.Errorf("rejection %d: %+v, want a DeliveryError with no handler run", i+2, ev)
			}
		}
		if n := e.events.Count(pump.EventDeferred); n != 2 {
			t.Errorf("deferred events = %d, want 2", n)
		}
		if n := e.events.Count(pump.EventBudgetExhausted); n != 1 {
			t.Errorf("budget-exhausted events = %d, want 1 (one message judged once)", n)
		}
		for i, ev := range rej {
			if ev.Retry != (i > 0) {
				t.Errorf("routing %d marked retry %v, want the later routings marked retries", i+1, ev.Retry)
			}
		}
		dl := e.receiveAll(t, dlqQueue)
		if len(dl) != 1 {
			t.Fatalf("dead-letter queue holds %d messages, want 1", len(dl))
		}
		requireFiveKeys(t, dl[0], "DeliveryError")
		if got := dl[0].Header.HandledCount; got != 3 {
			t.Errorf("copy's handled count = %d, want 3 (the count the budget judged, not the retries' deliveries)", got)
		}
		desc, _ := dl[0].Header.Bag.String(message.KeyRejectionMessage)
		if !strings.Contains(desc, "(delivered 6 times, handled 3 times in this process); routing retried after it failed") {
			t.Errorf("rejection message %q, want the deliveries, the runs and the retry", desc)
		}
	})
}

// Exhausted is final, with no destination: a message that arrives with its
// count past the budget is acknowledged with the discard Warning, never
// handled.
func TestExhaustedOnArrivalWithoutDestinationIsDiscarded_R17(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{StopWhenEmpty: true})
		m := message.New("late", srcQueue, message.MTCommand, []byte(`{}`))
		m.Header.HandledCount = 3
		e.publishMsg(t, srcQueue, m)
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, deferAlways)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 0 {
			t.Fatalf("handler invocations = %d, want 0", got)
		}
		rej := e.events.Of(pump.EventRejected)
		if len(rej) != 1 || rej[0].Route != broker.RouteNone || rej[0].Err != nil {
			t.Fatalf("rejections = %+v, want one discard", rej)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0 (acknowledged)", d)
		}
	})
}
