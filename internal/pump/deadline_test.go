package pump_test

import (
	"context"
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

// holdingConsumer is the memory transport's consumer with chosen calls
// black-holed: a held call waits until its context ends, as a broker that
// accepts the request and never answers, and records how long it was held
// and whether its context had a deadline. Calls not held pass through;
// extension calls are counted either way.
type holdingConsumer struct {
	*memory.Consumer
	hold atomic.Bool // hold the calls named in ops
	ops  map[string]bool

	mu      sync.Mutex
	held    map[string][]heldCall
	entered map[string][]time.Duration // per call (held or not): its deadline left on entry
}

// heldCall is one black-holed call: how long its context allowed from the
// call's start (0: no deadline) and how long it was held.
type heldCall struct {
	deadline, held time.Duration
}

func holding(c *memory.Consumer, ops ...string) *holdingConsumer {
	h := &holdingConsumer{Consumer: c, ops: map[string]bool{}, held: map[string][]heldCall{}, entered: map[string][]time.Duration{}}
	for _, op := range ops {
		h.ops[op] = true
	}
	return h
}

// black records op's call and its deadline, then holds it until ctx ends
// when op is held, and reports whether it did.
func (h *holdingConsumer) black(ctx context.Context, op string) bool {
	left := time.Duration(-1) // no deadline
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	h.mu.Lock()
	h.entered[op] = append(h.entered[op], left)
	h.mu.Unlock()
	if !h.hold.Load() || !h.ops[op] {
		return false
	}
	start := time.Now()
	var d time.Duration
	if dl, ok := ctx.Deadline(); ok {
		d = dl.Sub(start)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // a call with no deadline: give up, the test fails on the record
	}
	h.mu.Lock()
	h.held[op] = append(h.held[op], heldCall{deadline: d, held: time.Since(start)})
	h.mu.Unlock()
	return true
}

// enteredOf returns the deadline left on entry of every call of op (-1: none).
func (h *holdingConsumer) enteredOf(op string) []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.entered[op]...)
}

func (h *holdingConsumer) calls(op string) []heldCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]heldCall(nil), h.held[op]...)
}

func (h *holdingConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	if h.black(ctx, "Acknowledge") {
		return ctx.Err()
	}
	return h.Consumer.Acknowledge(ctx, m)
}

func (h *holdingConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	if h.black(ctx, "AcknowledgeBatch") {
		errs := make([]error, len(ms))
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	return h.Consumer.AcknowledgeBatch(ctx, ms)
}

func (h *holdingConsumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	if h.black(ctx, "Requeue") {
		return ctx.Err()
	}
	return h.Consumer.Requeue(ctx, m, delay)
}

func (h *holdingConsumer) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	if h.black(ctx, "ExtendLeases") {
		errs := make([]error, len(ms))
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	return h.Consumer.ExtendLeases(ctx, ms, d)
}

// assertBound fails unless every held call of op had a deadline of about
// want from its start (the configured bound, not some deadline) and was
// held no longer than that (plus scheduling slack).
func assertBound(t *testing.T, h *holdingConsumer, op string, want time.Duration) {
	t.Helper()
	calls := h.calls(op)
	if len(calls) == 0 {
		t.Fatalf("no %s call was held", op)
	}
	const slack = 500 * time.Millisecond
	for _, c := range calls {
		if c.deadline <= 0 || c.deadline > want || c.deadline < want-slack {
			t.Errorf("%s call: deadline %s from its start, want %s", op, c.deadline, want)
		}
		if c.held > want+slack {
			t.Errorf("%s call held %s, want at most %s", op, c.held, want)
		}
	}
}

// TestSettleCallsHaveCallTimeout: an acknowledge (the Proactor's
// batch form included) and a requeue the broker never answers each end at
// callTimeout, the configured bound, with EventSettleFailed; the message
// stays on the broker and, once the fault is lifted, is handled again and
// acknowledged (nothing lost). Both variants.
func TestSettleCallsHaveCallTimeout(t *testing.T) {
	for _, outcome := range []pump.Outcome{pump.Ack, pump.Defer} {
		t.Run(fmt.Sprint(outcome), func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				const callTimeout = 700 * time.Millisecond
				e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: 1500 * time.Millisecond})
				h := holding(e.c, "Acknowledge", "AcknowledgeBatch", "Requeue")
				h.hold.Store(true)
				e.publish(t, srcQueue, "m0", "")
				opts := fastOptions(v)
				opts.CallTimeout = callTimeout
				opts.RequeueCount = 5
				var n atomic.Int64
				e.startWith(t, h, opts, func(context.Context, *message.Message) pump.Result {
					if n.Add(1) == 1 {
						return pump.Result{Outcome: outcome}
					}
					return pump.Result{Outcome: pump.Ack}
				})
				e.events.Await(t, pump.EventSettleFailed, 20*time.Second, nil)
				h.hold.Store(false)
				op := "Requeue"
				if outcome == pump.Ack {
					op = "Acknowledge"
					if len(h.calls(op)) == 0 {
						op = "AcknowledgeBatch"
					}
				}
				assertBound(t, h, op, callTimeout)
				// The held settle left the message on the broker; its lease
				// lapses and it is delivered again.
				polltest.Until(t, 20*time.Second, "m0 acknowledged", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
				if d := e.b.Depth(srcQueue); d != 0 {
					t.Errorf("source depth %d, want 0", d)
				}
			})
		})
	}
}

// TestExtensionCallHasItsOwnDeadline: a lease-extension call the
// broker never answers ends at its own deadline (lease/4 clamped to
// [1 s, 10 s]: 1 s for a 2 s lease) with EventLeaseExtendFailed, not at the
// end of the run; the handler's message is acknowledged. Both variants.
func TestExtensionCallHasItsOwnDeadline(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const lease = 2 * time.Second
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: lease, StopWhenEmpty: true})
		h := holding(e.c, "ExtendLeases")
		h.hold.Store(true)
		e.publish(t, srcQueue, "m0", "")
		released := make(chan struct{})
		e.startWith(t, h, fastOptions(v), func(ctx context.Context, m *message.Message) pump.Result {
			select {
			case <-released:
			case <-ctx.Done():
			}
			return pump.Result{Outcome: pump.Ack}
		})
		e.events.Await(t, pump.EventLeaseExtendFailed, 20*time.Second, nil)
		h.hold.Store(false)
		close(released)
		assertBound(t, h, "ExtendLeases", time.Second)
		if err := e.wait(t, 30*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		// The handler returns as the lease lapses when no retry of the
		// extension got through in time: its acknowledgement is then
		// reported as stale instead (sent with a lapsed receipt).
		if n, stale := e.events.Count(pump.EventAcknowledged), lapsedAcks(e.events.Of(pump.EventStaleSettle)); n+stale != 1 {
			t.Errorf("acknowledged %d and reported stale %d, want 1 in all", n, stale)
		}
	})
}

// TestExtensionCallsBoundedPerLease (NFR-3): a message held for n
// leases (by its handler, or waiting in the buffer) costs at most 2n+1
// extensions (ADR 0005: one whenever half its lease is left, each to a full
// lease from now), and one ExtendLeases call covers every message due at
// once, so a batch costs about as many calls as one message. An extension
// asking for less than a lease (half: four times the calls) fails it. Both
// variants.
func TestExtensionCallsBoundedPerLease(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const (
			msgs  = 3
			lease = 400 * time.Millisecond
			n     = 5 // leases a handler holds its message
		)
		e := newEnv(t, memory.ConsumerOptions{BufferSize: msgs, VisibilityTimeout: lease, StopWhenEmpty: true})
		var perMessage perID
		e.b.SetExtendFault(func(_ string, m *message.Message) error { perMessage.add(m.Header.MessageID); return nil })
		var (
			mu    sync.Mutex
			held  = map[string]time.Duration{} // receive (about the start) to the handler's end
			start = time.Now()
		)
		h := holding(e.c)
		for i := range msgs {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		opts := fastOptions(v)
		opts.BufferSize = msgs
		opts.NoOfPerformers = msgs
		e.startWith(t, h, opts, func(ctx context.Context, m *message.Message) pump.Result {
			pumptest.SleepFor(ctx, n*lease)
			mu.Lock()
			held[m.Header.MessageID] = time.Since(start)
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if a := e.events.Count(pump.EventAcknowledged); a != msgs {
			t.Fatalf("acknowledged %d, want %d", a, msgs)
		}
		got := perMessage.get()
		if len(got) != msgs {
			t.Fatalf("extensions per message %v, want each of %d messages extended", got, msgs)
		}
		// ADR 0005's schedule: a message with half its lease left is
		// extended to a full lease from now, so a held message costs two
		// extensions a lease (the first at half a lease). The Reactor runs
		// one handler at a time, so the later messages wait in the buffer:
		// each message's bound comes from how long it was held.
		mu.Lock()
		defer mu.Unlock()
		var longest time.Duration
		for id, k := range got {
			leases := float64(held[id]) / float64(lease)
			longest = max(longest, held[id])
			t.Logf("message %s: %d extensions while held for %.2f leases (%.2f a lease)", id, k, leases, float64(k)/leases)
			if want := int(2*leases) + 1; k > want || float64(k) < leases-1 {
				t.Errorf("message %s extended %d times while held for %.1f leases, want about %d (at most %d)", id, k, leases, int(2*leases), want)
			}
		}
		// One ExtendLeases call covers every message due at once: the
		// Reactor receives the three in one batch; the Proactor may receive
		// them in up to three, each on its own schedule.
		batches := 1
		if v == pump.Proactor {
			batches = msgs
		}
		if c, want := len(h.enteredOf("ExtendLeases")), batches*(int(2*float64(longest)/float64(lease))+1); c > want {
			t.Errorf("%d ExtendLeases calls for %d messages held up to %s (lease %s), want at most %d", c, msgs, longest, lease, want)
		}
	})
}

// TestExtensionEconomyAtAnEconomicalLease (NFR-3): at a lease long
// enough for ADR 0005's economical schedule (10 s), messages held for 3.5
// leases cost about one extension a lease each (at most n+1), and one
// ExtendLeases call covers every message due at once. The half-lease
// schedule (about two a lease) fails it. Both variants, on the memory
// transport; the same assertion runs on SQS, Pub/Sub and RocketMQ.
func TestExtensionEconomyAtAnEconomicalLease(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 2, VisibilityTimeout: pumptest.EconomicalLease})
		h := holding(e.c)
		e.publish(t, srcQueue, "m0", "")
		e.publish(t, srcQueue, "m1", "")
		pumptest.ExtensionEconomyLong(t, v, h, func() int64 { return int64(len(h.enteredOf("ExtendLeases"))) }, false)
	})
}

// TestBlackHoledExtensionAtAnEconomicalLeaseIsRetriedInTime (R-4,
// ADR 0005): at a 10 s lease the first extension call is black-holed to its
// economical deadline (1 s); the retry, made at once with the half-lease
// schedule's longer deadline (a quarter lease), still reaches the broker
// before the lease ends, so a handler slower than the lease handles its
// message once, nothing lapses and the queue is empty at the end. Both
// variants.
func TestBlackHoledExtensionAtAnEconomicalLeaseIsRetriedInTime(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		lease := pumptest.EconomicalLease
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: lease})
		h := holding(e.c, "ExtendLeases")
		h.hold.Store(true)
		e.publish(t, srcQueue, "m0", "")
		handled := atomic.Int32{}
		e.startWith(t, h, fastOptions(v), func(ctx context.Context, m *message.Message) pump.Result {
			handled.Add(1)
			pumptest.SleepFor(ctx, lease*6/5)
			return pump.Result{Outcome: pump.Ack}
		})
		// Only the first call is held: black decides on entry.
		pumptest.WaitUntil(t, 2*lease, "the first extension call", func() bool { return len(h.enteredOf("ExtendLeases")) >= 1 })
		h.hold.Store(false)
		e.events.Await(t, pump.EventAcknowledged, 2*lease, nil)
		if err := e.stop(t); err != nil {
			t.Fatalf("Run = %v", err)
		}
		assertBound(t, h, "ExtendLeases", time.Second)
		entered := h.enteredOf("ExtendLeases")
		if len(entered) < 2 || entered[1] < lease/4-time.Second/2 {
			t.Errorf("extension calls entered with deadlines %v left, want a retry with about %s (the half-lease schedule's, after a failure)", entered, lease/4)
		}
		if n := handled.Load(); n != 1 {
			t.Errorf("handled %d times, want once: the retry did not keep the lease", n)
		}
		if n := e.events.Count(pump.EventLeaseLapsed); n != 0 {
			t.Errorf("%d lapses, want none", n)
		}
		if n := e.events.Count(pump.EventLeaseExtendFailed); n != 1 {
			t.Errorf("%d failed extensions, want the one black-holed", n)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth %d, want 0", d)
		}
	})
}

// TestSettleDeadlineIsFreshAfterAPause: settle calls share a
// deadline only while they start within callTimeout/16 of each other
// (the pump allocates no context per message): an acknowledge after a pause
// longer than callTimeout gets a fresh deadline, at least 15/16 of
// callTimeout, never the expired one of an earlier call. Both variants.
func TestSettleDeadlineIsFreshAfterAPause(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const callTimeout = 400 * time.Millisecond
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1})
		h := holding(e.c)
		opts := fastOptions(v)
		opts.CallTimeout = callTimeout
		e.startWith(t, h, opts, ack)
		e.publish(t, srcQueue, "m0", "")
		polltest.Until(t, 10*time.Second, "m0 acknowledged", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
		// The condition under test is time passing: wait until the first
		// acknowledge's deadline is over.
		acked := time.Now()
		polltest.Until(t, 10*time.Second, "callTimeout passed", func() bool { return time.Since(acked) > 2*callTimeout })
		e.publish(t, srcQueue, "m1", "")
		polltest.Until(t, 10*time.Second, "m1 acknowledged", func() bool { return e.events.Count(pump.EventAcknowledged) == 2 })
		left := append(h.enteredOf("Acknowledge"), h.enteredOf("AcknowledgeBatch")...)
		if len(left) != 2 {
			t.Fatalf("%d acknowledge calls, want 2", len(left))
		}
		for i, l := range left {
			if l < callTimeout*15/16-100*time.Millisecond || l > callTimeout {
				t.Errorf("acknowledge %d: %s left of its deadline on entry, want about %s", i, l, callTimeout)
			}
		}
	})
}
