package pump_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// A deferred message holds back the later messages of its
// partition key that arrived with it. One receive brings a1, a2, a3 (key
// a) and b1 (key b); a1 is deferred on its first delivery. a2 and a3 are
// released without a handler run (EventDeferred with ErrHeldBack, no count
// added), b1 is handled at once, and every message is handled exactly once
// in the end, a1 twice. (The memory transport keeps no per-key order on
// redelivery, so the order after the release is the conformance suite's to
// prove on real brokers.)
func TestDeferredMessageHoldsBackItsKey(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, StopWhenEmpty: true})
		for _, m := range [][2]string{{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}} {
			e.publish(t, srcQueue, m[0], m[1])
		}
		var mu sync.Mutex
		calls := map[string]int{}
		var first []string // the handler runs before a1's second delivery
		opts := fastOptions(v)
		opts.BufferSize = 10
		opts.RequeueCount = 3
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			defer mu.Unlock()
			id := m.Header.MessageID
			calls[id]++
			if calls["a1"] < 2 {
				first = append(first, id)
			}
			if id == "a1" && calls[id] == 1 {
				return pump.Result{Outcome: pump.Defer}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range first {
			if id == "a2" || id == "a3" {
				t.Errorf("%s was handled in the receive a1 was deferred from (handler runs %v): it was not held back", id, first)
			}
		}
		checkA1HeldBackItsKey(t, e, calls, 2)
		if n := len(withMsg(e.logs.records(t), pump.LogHeldBack)); n != 2 {
			t.Errorf("%d %q records, want 2", n, pump.LogHeldBack)
		}
	})
}

// A keyless message is never held back, and an acknowledged message holds
// nothing back.
func TestAcknowledgedOrKeylessHoldsNothingBack(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, StopWhenEmpty: true})
		for _, m := range [][2]string{{"n1", ""}, {"n2", ""}, {"k1", "k"}, {"k2", "k"}} {
			e.publish(t, srcQueue, m[0], m[1])
		}
		var mu sync.Mutex
		calls := map[string]int{}
		opts := fastOptions(v)
		opts.BufferSize = 10
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			defer mu.Unlock()
			calls[m.Header.MessageID]++
			if m.Header.MessageID == "n1" && calls["n1"] == 1 {
				return pump.Result{Outcome: pump.Defer}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		for _, ev := range e.events.Of(pump.EventDeferred) {
			if errors.Is(ev.Err, pump.ErrHeldBack) {
				t.Errorf("%s held back: only a key whose message went back unsettled holds anything back", ev.Message.Header.MessageID)
			}
		}
	})
}

// A failed acknowledgement holds back its key as a deferral does,
// in both variants: the Proactor's batched acknowledgement (the settler)
// as the Reactor's single one. a1's first acknowledgement fails; a2 and a3,
// received with it, are released unhandled (ErrHeldBack) rather than handled
// while a1 is still on the broker, and every message is handled once: a1
// comes back when its lease lapses and is acknowledged without a handler
// run (its handler acknowledged it already), before a2 and a3 are handled.
func TestFailedAckHoldsBackItsKey(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, StopWhenEmpty: true, VisibilityTimeout: 300 * time.Millisecond})
		for _, m := range [][2]string{{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}} {
			e.publish(t, srcQueue, m[0], m[1])
		}
		var failed atomic.Bool
		injected := errors.New("injected acknowledge failure")
		e.b.SetAcknowledgeFault(func(_ string, m *message.Message) error {
			if m.Header.MessageID == "a1" && failed.CompareAndSwap(false, true) {
				return injected
			}
			return nil
		})
		var mu sync.Mutex
		calls := map[string]int{}
		opts := fastOptions(v)
		opts.BufferSize = 10
		opts.RequeueCount = 3
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			defer mu.Unlock()
			calls[m.Header.MessageID]++
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if n := len(e.events.Of(pump.EventSettleFailed)); n != 1 {
			t.Errorf("%d settle failures, want 1 (the injected one)", n)
		}
		retried := 0
		for _, ev := range e.events.Of(pump.EventAcknowledged) {
			if ev.Retry {
				retried++
				if ev.MessageID() != "a1" {
					t.Errorf("%s acknowledged as a retry, want only a1", ev.MessageID())
				}
			}
		}
		if retried != 1 {
			t.Errorf("%d acknowledgements retried without a handler run, want 1 (a1's redelivery)", retried)
		}
		checkA1HeldBackItsKey(t, e, calls, 1)
	})
}

// checkA1HeldBackItsKey checks the end of a run over a1, a2, a3 (key a) and
// b1 (key b) where a1 went back unsettled once: every message handled once,
// a1 a1Runs times, and a2 and a3 released unhandled (ErrHeldBack, no count
// added) once each, a1 and b1 never.
func checkA1HeldBackItsKey(t *testing.T, e *env, calls map[string]int, a1Runs int) {
	t.Helper()
	for id, want := range map[string]int{"a1": a1Runs, "a2": 1, "a3": 1, "b1": 1} {
		if calls[id] != want {
			t.Errorf("%s handled %d times, want %d (all: %v)", id, calls[id], want, calls)
		}
	}
	held := map[string]int{}
	for _, ev := range e.events.Of(pump.EventDeferred) {
		if errors.Is(ev.Err, pump.ErrHeldBack) {
			held[ev.Message.Header.MessageID]++
			if ev.DeliveryCount != 0 {
				t.Errorf("held-back %s reported count %d, want 0 (no handler ran, nothing counted)", ev.Message.Header.MessageID, ev.DeliveryCount)
			}
		}
	}
	if held["a2"] != 1 || held["a3"] != 1 || held["b1"] != 0 || held["a1"] != 0 {
		t.Errorf("held back %v, want a2 and a3 once each (the key of a message that went back unsettled is held back)", held)
	}
}
