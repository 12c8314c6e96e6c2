package pump_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// waste spends n deliveries of what srcQueue holds without a handler run,
// as stops and kills do: each is received and released at once.
func (e *env) waste(t *testing.T, n int) {
	t.Helper()
	c := e.b.NewConsumer(memory.ConsumerOptions{Queue: srcQueue, BufferSize: 10, Logger: e.logger})
	for range n {
		ms, err := c.Receive(context.Background(), time.Millisecond)
		if err != nil || len(ms) == 0 {
			t.Fatalf("waste: receive = %d messages, %v", len(ms), err)
		}
		for _, m := range ms {
			if err := c.Requeue(context.Background(), m, 0); err != nil {
				t.Fatalf("waste: release: %v", err)
			}
		}
	}
}

// runAfterWaste runs a pump of variant v, requeueCount 3 and handler h
// over srcQueue, which holds m (the message "m1" when m is nil) after
// wasted deliveries spent without a handler run, until the queue is empty,
// failing the test unless Run returns nil. It returns the environment for
// the test's own checks.
func runAfterWaste(t *testing.T, v pump.Variant, m *message.Message, wasted int, h pump.Handler) *env {
	t.Helper()
	e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
	if m == nil {
		e.publish(t, srcQueue, "m1", "")
	} else {
		e.publishMsg(t, srcQueue, m)
	}
	if wasted > 0 {
		e.waste(t, wasted)
	}
	opts := fastOptions(v)
	opts.RequeueCount = 3
	e.start(t, opts, h)
	if err := e.wait(t, 10*time.Second); err != nil {
		t.Fatalf("Run = %v", err)
	}
	return e
}

// oneDeadLetter returns the one message dlqQueue holds, failing the test
// unless it holds exactly one.
func (e *env) oneDeadLetter(t *testing.T) *message.Message {
	t.Helper()
	dl := e.receiveAll(t, dlqQueue)
	if len(dl) != 1 {
		t.Fatalf("dead-letter queue holds %d, want 1", len(dl))
	}
	return dl[0]
}

// A message whose deliveries reached the budget through stops and kills
// (received, never handled) still gets its handler run: a handler that
// acknowledges keeps it out of the dead-letter queue.
func TestBudgetReachedByWastedDeliveriesStillRunsTheHandler_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := runAfterWaste(t, v, nil, 3, ack) // delivered three times, handled never
		if got := e.calls.Load(); got != 1 {
			t.Fatalf("handler invocations = %d, want 1 (its chance)", got)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want 1", n)
		}
		if n := len(e.receiveAll(t, dlqQueue)); n != 0 {
			t.Errorf("dead-letter queue holds %d, want 0 (a message that would be acknowledged is never dead-lettered by a stop)", n)
		}
	})
}

// The same message with a deferring handler is routed after that one run,
// and its rejection message says what happened: delivered four times,
// handled once here.
func TestBudgetReachedByWastedDeliveriesRoutesAfterOneRun_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := runAfterWaste(t, v, nil, 3, deferAlways)
		if got := e.calls.Load(); got != 1 {
			t.Fatalf("handler invocations = %d, want 1", got)
		}
		dl := e.oneDeadLetter(t)
		requireFiveKeys(t, dl, "DeliveryError")
		desc, _ := dl.Header.Bag.String(message.KeyRejectionMessage)
		if !strings.Contains(desc, "(delivered 4 times, handled 1 time in this process)") {
			t.Errorf("rejection message %q, want it to say delivered 4 times, handled 1 time in this process", desc)
		}
		if n := e.events.Count(pump.EventBudgetExhausted); n != 1 {
			t.Errorf("budget-exhausted events = %d, want 1", n)
		}
	})
}

// More deliveries than stops and kills can explain (more than twice the
// budget's, with no handler run here) are evidence that handlers spent the
// budget (a process that crashes in the handler every time): the message is
// routed without a run. One delivery fewer and the handler still runs.
func TestDeliveriesPastTwiceTheBudgetAreRoutedWithoutARun_R4(t *testing.T) {
	for _, tc := range []struct {
		wasted, wantRuns int
	}{{wasted: 6, wantRuns: 0}, {wasted: 5, wantRuns: 1}} {
		forEachVariant(t, func(t *testing.T, v pump.Variant) {
			e := runAfterWaste(t, v, nil, tc.wasted, deferAlways)
			if got := e.calls.Load(); got != int64(tc.wantRuns) {
				t.Fatalf("%d deliveries wasted: handler invocations = %d, want %d", tc.wasted, got, tc.wantRuns)
			}
			desc, _ := e.oneDeadLetter(t).Header.Bag.String(message.KeyRejectionMessage)
			want := "redelivery budget exhausted: delivered 7 times on this channel, handled 0 times in this process; of the 6 deliveries before this one, at most 3 are forgiven " +
				"as deliveries no handler finished (stops and kills of consumers, lapsed leases); the other 3 count against requeueCount 3 as handlers' deferrals would, though no handler may have run it (brighter cannot tell them apart); routed without a handler run"
			if tc.wantRuns == 0 && desc != want {
				t.Errorf("rejection message %q, want %q: what was counted and what forgiven", desc, want)
			}
		})
	}
}

// A stamped count (the handled-count its sender wrote) that reached the
// budget is taken as deferrals by handlers elsewhere: the message is routed
// on its first delivery without a handler run, and its rejection message
// says so, not that it was delivered more times than it was. A stamp that
// reaches the budget only with deliveries past the forgiven ones says both.
func TestStampedCountReachingTheBudgetIsNamedInTheReason_R4(t *testing.T) {
	for _, tc := range []struct {
		stamped, wasted int
		want            string
	}{
		{5, 0, "redelivery budget exhausted: its stamped count 5 (the handled-count its sender wrote, taken as deferrals by handlers before it reached this channel) " +
			"reached requeueCount 3; delivered 1 time on this channel, handled 0 times in this process; routed without a handler run"},
		{3, 2, "redelivery budget exhausted: its stamped count 3 (the handled-count its sender wrote, taken as deferrals by handlers before it reached this channel), " +
			"the 2 deliveries before this one on this channel forgiven (up to 3 that no handler finished are: stops and kills of consumers, lapsed leases), " +
			"reached requeueCount 3; delivered 3 times on this channel, handled 0 times in this process; routed without a handler run"},
		{1, 5, "redelivery budget exhausted: its stamped count 1 (the handled-count its sender wrote, taken as deferrals by handlers before it reached this channel) " +
			"plus 2 of the 5 deliveries before this one on this channel (up to 3 that no handler finished are forgiven: stops and kills of consumers, lapsed leases) " +
			"reached requeueCount 3; delivered 6 times on this channel, handled 0 times in this process; routed without a handler run"},
	} {
		t.Run(fmt.Sprintf("stamped%d-wasted%d", tc.stamped, tc.wasted), func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				m := message.New("m1", srcQueue, message.MTCommand, []byte(`{}`))
				m.Header.HandledCount = tc.stamped
				e := runAfterWaste(t, v, m, tc.wasted, deferAlways)
				if got := e.calls.Load(); got != 0 {
					t.Fatalf("handler invocations = %d, want 0", got)
				}
				if desc, _ := e.oneDeadLetter(t).Header.Bag.String(message.KeyRejectionMessage); desc != tc.want {
					t.Errorf("stamped %d, %d wasted: rejection message\n%q, want\n%q", tc.stamped, tc.wasted, desc, tc.want)
				}
			})
		})
	}
}

// A restart between a failed routing and its retry: the new process has no
// record of the judgement, so the handler runs once more (the documented
// cost of a restart) and its Defer routes the message.
func TestRestartAfterAFailedRoutingCostsAtMostOneMoreRun_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue})
		c := &pausedAfterFailedRouting{failingRouter: failingRouter{Consumer: e.c}}
		c.fails.Store(1)
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.startWith(t, c, opts, deferAlways)
		polltest.Until(t, 10*time.Second, "the failed routing", func() bool { return e.events.Count(pump.EventRejected) == 1 })
		if err := e.stop(t); err != nil { // the process stops before the retry
			t.Fatalf("Run = %v", err)
		}
		again := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		again.b, again.c = e.b, e.b.NewConsumer(memory.ConsumerOptions{Queue: srcQueue, DeadLetter: dlqQueue, StopWhenEmpty: true, Logger: e.logger})
		again.start(t, opts, deferAlways)
		if err := again.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load() + again.calls.Load(); got != 4 {
			t.Fatalf("handler invocations = %d, want 4 (3, then one more after the restart)", got)
		}
		if n := len(e.receiveAll(t, dlqQueue)); n != 1 {
			t.Fatalf("dead-letter queue holds %d, want 1", n)
		}
	})
}

// pausedAfterFailedRouting is failingRouter whose Receive returns nothing
// once a routing failed, so that the process can be stopped before it
// retries. The failing routing releases the message before it returns, so
// the pause begins before that routing, once the receives in flight have
// returned (mu): a Proactor's other receiver, waiting in Receive, would
// otherwise take the released message back at once and route it again.
type pausedAfterFailedRouting struct {
	failingRouter
	mu     sync.RWMutex // held for reading by each Receive, for writing to pause
	paused atomic.Bool
}

func (c *pausedAfterFailedRouting) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.paused.Load() {
		return nil, nil
	}
	return c.failingRouter.Receive(ctx, d)
}

func (c *pausedAfterFailedRouting) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	if c.fails.Load() > 0 { // this routing will fail and release m
		c.mu.Lock()
		c.paused.Store(true)
		c.mu.Unlock()
	}
	return c.failingRouter.Reject(ctx, m, r)
}

// A handler's rejection is final, as a budget's is: when its routing fails
// the message comes back, and its next deliveries here retry the routing
// with the same reason and description, without running the handler again,
// until the routing lands.
func TestHandlerRejectionNeverHandledAgainWhileRoutingFails_AC3(t *testing.T) {
	for _, o := range []pump.Outcome{pump.Reject, pump.Unacceptable} {
		forEachVariant(t, func(t *testing.T, v pump.Variant) {
			e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, Invalid: invQueue, StopWhenEmpty: true})
			c := &failingRouter{Consumer: e.c}
			c.fails.Store(2)
			e.publish(t, srcQueue, "m1", "")
			opts := fastOptions(v)
			opts.RequeueCount = 3
			e.startWith(t, c, opts, func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: o, Reason: "order 42 is for a closed account"}
			})
			if err := e.wait(t, 10*time.Second); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if got := e.calls.Load(); got != 1 {
				t.Fatalf("%s: handler invocations = %d, want 1 (a rejection is final)", o, got)
			}
			rej := e.events.Of(pump.EventRejected)
			if len(rej) != 3 {
				t.Fatalf("%s: rejections = %d, want 3 (two failed routings, then the one that landed)", o, len(rej))
			}
			for i, ev := range rej {
				if ev.Retry != (i > 0) || ev.Description != "order 42 is for a closed account" || ev.Outcome != o {
					t.Errorf("%s: rejection %d: retry %v, outcome %v, description %q; want the handler's rejection, retried after the first", o, i+1, ev.Retry, ev.Outcome, ev.Description)
				}
			}
			dest := dlqQueue
			if o == pump.Unacceptable {
				dest = invQueue
			}
			if n := len(e.receiveAll(t, dest)); n != 1 {
				t.Fatalf("%s: %s holds %d, want 1", o, dest, n)
			}
		})
	}
}

// A message that arrives with its budget spent by handlers (here: a
// stamped count at requeueCount) and waits unstarted in the buffer when a
// stop comes is routed by the stop, not released: released, it would come
// back past the delivery the budget routes on, where a native redrive
// limit of 2 x requeueCount + 1 moves it to the broker's own dead-letter
// destination with no rejection reason. The message ahead of it, whose
// handler the stop cuts off, is released as ever; both variants.
func TestStopRoutesABufferedMessageWhoseBudgetIsSpent_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, BufferSize: 2})
		e.publish(t, srcQueue, "slow", "")
		spent := message.New("spent", srcQueue, message.MTEvent, []byte(`{}`))
		spent.Header.HandledCount = 3
		e.publishMsg(t, srcQueue, spent)
		opts := fastOptions(v)
		opts.RequeueCount = 3
		opts.BufferSize = 2
		opts.NoOfPerformers = 1
		opts.DrainTimeout = 100 * time.Millisecond
		started := make(chan struct{}, 1)
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			if m.Header.MessageID == "slow" {
				started <- struct{}{}
				<-ctx.Done() // held until the stop cuts it off
			}
			return pump.Result{Outcome: pump.Defer}
		})
		<-started // spent came in the same receive (bufferSize 2), and waits behind slow
		if err := e.stop(t); err != nil {
			t.Fatalf("Run = %v", err)
		}
		dl := e.oneDeadLetter(t)
		if dl.Header.MessageID != "spent" {
			t.Fatalf("dead-lettered %s, want spent", dl.Header.MessageID)
		}
		requireFiveKeys(t, dl, "DeliveryError")
		left := e.receiveAll(t, srcQueue)
		if len(left) != 1 || left[0].Header.MessageID != "slow" {
			t.Errorf("source holds %v, want only slow (released by the stop)", left)
		}
		if n := e.calls.Load(); n != 1 {
			t.Errorf("handler runs = %d, want 1 (slow's; spent is routed without one)", n)
		}
	})
}
