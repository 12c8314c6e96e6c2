package pump_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// testLease is the memory transport's visibility timeout in the lease
// tests; handler times are fractions and multiples of it.
const testLease = 500 * time.Millisecond

// perID counts handler invocations per message id.
type perID struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *perID) add(id string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
	c.mu.Unlock()
}

func (c *perID) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// Messages that wait in the buffer behind handlers slower than half the
// lease keep their leases: a deferring handler runs exactly requeueCount
// times per message, each message reaches the dead-letter queue once, and
// the source ends empty (R-4, R-5, ADR 0005).
func TestLeaseExtendedWhileBuffered_R4_R5(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const msgs, budget = 4, 3
		e := newEnv(t, memory.ConsumerOptions{BufferSize: msgs, VisibilityTimeout: testLease, DeadLetter: dlqQueue, StopWhenEmpty: true})
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = msgs
		opts.RequeueCount = budget
		var calls perID
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			pumptest.SleepFor(ctx, testLease*3/5) // longer than half the lease
			return pump.Result{Outcome: pump.Defer}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		for id, n := range calls.get() {
			if n != budget {
				t.Errorf("message %s handled %d times, want %d (requeueCount)", id, n, budget)
			}
		}
		dlq := map[string]int{}
		for _, m := range e.receiveAll(t, dlqQueue) {
			dlq[m.Header.MessageID]++
		}
		for i := range msgs {
			if id := fmt.Sprintf("m%d", i); dlq[id] != 1 {
				t.Errorf("dead-letter copies of %s = %d, want 1", id, dlq[id])
			}
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
		if e.events.Count(pump.EventLeaseExtended) == 0 {
			t.Error("no lease was extended, though messages waited longer than half the lease")
		}
		if n := e.events.Count(pump.EventLeaseLapsed); n != 0 {
			t.Errorf("%d messages lapsed, want none", n)
		}
	})
}

// An acknowledging handler slower than the whole lease handles each message
// once: its lease is extended while it runs (ADR 0005).
func TestAckHandlerSlowerThanLeaseHandlesOnce_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const msgs = 3
		e := newEnv(t, memory.ConsumerOptions{BufferSize: msgs, VisibilityTimeout: testLease, StopWhenEmpty: true})
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = msgs
		var calls perID
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			pumptest.SleepFor(ctx, testLease*3/2)
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		got := calls.get()
		if len(got) != msgs {
			t.Errorf("handled %d distinct messages, want %d", len(got), msgs)
		}
		for id, n := range got {
			if n != 1 {
				t.Errorf("message %s handled %d times, want 1", id, n)
			}
		}
		if n := e.events.Count(pump.EventAcknowledged); n != msgs {
			t.Errorf("acknowledged = %d, want %d", n, msgs)
		}
	})
}

// With handlers much shorter than half the lease and nothing waiting long,
// lease management makes no broker call at all (NFR-1, NFR-3).
func TestNoLeaseCallWhenHandlersShort_NFR3(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const msgs = 200
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, VisibilityTimeout: 5 * time.Second, StopWhenEmpty: true})
		var extendCalls atomic.Int64
		e.b.SetExtendFault(func(string, *message.Message) error { extendCalls.Add(1); return nil })
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%03d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = 10
		opts.NoOfPerformers = 2
		e.start(t, opts, ack)
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != msgs {
			t.Fatalf("acknowledged = %d, want %d", n, msgs)
		}
		if n := extendCalls.Load(); n != 0 {
			t.Errorf("lease extension calls = %d, want 0", n)
		}
	})
}

// A message whose lease lapsed while it waited in the buffer (extension
// turned off) is dropped without reaching the handler, logged at Debug with
// its id, reported as EventLeaseLapsed, and handled once when the broker
// delivers it again (ADR 0005).
func TestLapsedLeaseDroppedBeforeDispatch_R4(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const msgs = 3
		e := newEnv(t, memory.ConsumerOptions{BufferSize: msgs, VisibilityTimeout: testLease, StopWhenEmpty: true})
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = msgs
		opts.MaxLeaseExtension = -1 // off
		var calls perID
		var first atomic.Bool
		var firstID atomic.Value
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			if first.CompareAndSwap(false, true) {
				firstID.Store(m.Header.MessageID)
				// The others' leases lapse meanwhile (and this one's: the
				// Proactor may receive it again and handle that copy).
				pumptest.SleepFor(ctx, testLease*6/5)
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		lapsed := e.events.Of(pump.EventLeaseLapsed)
		if len(lapsed) == 0 {
			t.Fatal("no message was dropped for a lapsed lease")
		}
		for id, n := range calls.get() {
			if id != firstID.Load() && n != 1 {
				t.Errorf("message %s handled %d times, want 1 (a lapsed copy must not reach the handler)", id, n)
			}
		}
		if n := len(calls.get()); n != msgs {
			t.Errorf("handled %d distinct messages, want %d", n, msgs)
		}
		recs := withMsg(e.logs.records(t), pump.LogLeaseLapsed)
		if len(recs) != len(lapsed) {
			t.Errorf("%d %q records, want %d", len(recs), pump.LogLeaseLapsed, len(lapsed))
		}
		for _, r := range recs {
			if r["level"] != "DEBUG" || attr(r, "message_id") == "" {
				t.Errorf("lapsed record %v: want level DEBUG and a message_id", r)
			}
		}
		if e.events.Count(pump.EventLeaseExtended) != 0 {
			t.Error("a lease was extended with maxLeaseExtension off")
		}
	})
}

// An extension call that fails is logged at Error with the message id; the
// message is never lost: it stays on the broker, is redelivered once its
// lease lapses, and is in the end acknowledged (ADR 0005).
func TestLeaseExtensionFailureLoggedNotLost(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const msgs = 3
		e := newEnv(t, memory.ConsumerOptions{BufferSize: msgs, VisibilityTimeout: testLease, StopWhenEmpty: true})
		var failing atomic.Bool
		failing.Store(true)
		e.b.SetExtendFault(func(string, *message.Message) error {
			if failing.Load() {
				return errors.New("injected extension failure")
			}
			return nil
		})
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = msgs
		var calls perID
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			pumptest.SleepFor(ctx, testLease*3/5)
			return pump.Result{Outcome: pump.Ack}
		})
		polltest.Until(t, 30*time.Second, "a failed extension", func() bool { return e.events.Count(pump.EventLeaseExtendFailed) > 0 })
		failing.Store(false)
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0: every message acknowledged in the end", d)
		}
		if n := len(calls.get()); n != msgs {
			t.Errorf("handled %d distinct messages, want %d", n, msgs)
		}
		recs := withMsg(e.logs.records(t), pump.LogLeaseExtendFailed)
		if len(recs) == 0 {
			t.Fatalf("no %q record", pump.LogLeaseExtendFailed)
		}
		for _, r := range recs {
			if r["level"] != "ERROR" || attr(r, "message_id") == "" {
				t.Errorf("extension failure record %v: want level ERROR and a message_id", r)
			}
		}
	})
}

// At maxLeaseExtension the pump stops extending, says so at Warn with the
// message id, and leaves the message to the broker (ADR 0005).
func TestLeaseExtensionCapped(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, StopWhenEmpty: true})
		e.publish(t, srcQueue, "m0", "")
		opts := fastOptions(v)
		opts.MaxLeaseExtension = testLease / 2
		var calls atomic.Int64
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			if calls.Add(1) == 1 {
				pumptest.SleepFor(ctx, testLease*3) // past the lease plus the cap
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		// The Proactor may receive m0 again once the capped lease lapsed
		// and hold that copy behind the running handler, so it may reach
		// the cap too.
		capped := e.events.Of(pump.EventLeaseCapped)
		if len(capped) == 0 {
			t.Fatal("no lease-capped event")
		}
		for _, c := range capped {
			if c.MessageID() != "m0" || c.Delay < testLease/2 {
				t.Errorf("lease-capped event for %s after %v, want m0 after at least %v", c.MessageID(), c.Delay, testLease/2)
			}
		}
		if e.events.Count(pump.EventLeaseExtended) == 0 {
			t.Error("no extension before the cap")
		}
		recs := withMsg(e.logs.records(t), pump.LogLeaseCapped)
		if len(recs) != len(capped) {
			t.Errorf("%d capped records, want %d", len(recs), len(capped))
		}
		for _, r := range recs {
			if r["level"] != "WARN" || attr(r, "message_id") != "m0" {
				t.Errorf("capped record %v, want WARN for m0", r)
			}
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
	})
}

// limitRecorder checks every receive the Proactor makes: the messages it
// holds in its buffer (received, not yet in a handler) plus the batch a
// receive may bring (batch messages) never exceed its buffer, give or take
// the n messages a worker has taken from the buffer but not yet handed to
// the handler. It counts the receives that brought fewer than batch
// messages while at least batch of the total published had not been
// received (the memory Proactor receives one batch at a time).
type limitRecorder struct {
	*memory.Consumer
	received, dispatched atomic.Int64
	mu                   sync.Mutex
	exceeds              []string
	partial              int
	bound                int64
	batch                int
	total                int64
}

func (c *limitRecorder) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	held := c.received.Load() - c.dispatched.Load()
	if held+int64(c.batch) > c.bound {
		c.mu.Lock()
		c.exceeds = append(c.exceeds, fmt.Sprintf("received a batch of up to %d while holding %d", c.batch, held))
		c.mu.Unlock()
	}
	left := c.total - c.received.Load()
	ms, err := c.Consumer.Receive(ctx, d)
	n := 0
	for _, m := range ms {
		if m.Header.MessageType != message.MTQuit {
			n++
		}
	}
	c.received.Add(int64(n))
	if n < c.batch && left >= int64(c.batch) {
		c.mu.Lock()
		c.partial++
		c.mu.Unlock()
	}
	return ms, err
}

// The Proactor's receive-ahead receives only when its free buffer slots can
// take a whole batch (NoOfPerformers x BufferSize slots, one per message
// from its receive until a worker takes it): no more messages wait than the
// buffer holds (ADR 0005), and every receive asks for a full batch
// (BufferSize), as the plain SDK loop does: receives sized to the free
// slots made a quarter more SQS calls.
func TestProactorReceivesOnlyFreeSlots(t *testing.T) {
	for _, c := range []struct{ n, b int }{{1, 1}, {1, 4}, {2, 3}} {
		t.Run(fmt.Sprintf("performers%d-buffer%d", c.n, c.b), func(t *testing.T) {
			t.Parallel()
			const msgs = 40
			e := newEnv(t, memory.ConsumerOptions{BufferSize: c.b, StopWhenEmpty: true})
			for i := range msgs {
				e.publish(t, srcQueue, fmt.Sprintf("m%02d", i), "")
			}
			lr := &limitRecorder{Consumer: e.c, bound: int64(c.n*c.b + c.n), batch: c.b, total: msgs}
			opts := fastOptions(pump.Proactor)
			opts.NoOfPerformers, opts.BufferSize = c.n, c.b
			e.startWith(t, lr, opts, func(ctx context.Context, m *message.Message) pump.Result {
				lr.dispatched.Add(1)
				pumptest.SleepFor(ctx, 5*time.Millisecond) // workers busy: the buffer fills
				return pump.Result{Outcome: pump.Ack}
			})
			if err := e.wait(t, 60*time.Second); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if n := e.events.Count(pump.EventAcknowledged); n != msgs {
				t.Fatalf("acknowledged = %d, want %d", n, msgs)
			}
			lr.mu.Lock()
			defer lr.mu.Unlock()
			if len(lr.exceeds) > 0 {
				t.Errorf("receives beyond the free buffer slots (%d performers x bufferSize %d): %v", c.n, c.b, lr.exceeds)
			}
			if lr.partial > 0 {
				t.Errorf("%d receives brought less than a batch of %d from a queue that held one", lr.partial, c.b)
			}
		})
	}
}
