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

// The ordered-key rules of docs/adr/0006-ordered-channels-under-deferral.md
// on the ways a message goes back unsettled that the deferral tests do not
// take: a lease that lapsed before dispatch, a held-back release (which
// marks its key again), and a routed rejection whose acknowledgement
// failed. Each run has three or more messages of one key.

// firstRuns records, per message id, the broker delivery attempts its
// handler runs saw.
type firstRuns struct {
	mu   sync.Mutex
	runs map[string][]int
}

func (f *firstRuns) add(m *message.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string][]int{}
	}
	f.runs[m.Header.MessageID] = append(f.runs[m.Header.MessageID], m.DeliveryAttempt)
}

// get returns a copy of the runs so far.
func (f *firstRuns) get() map[string][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]int{}
	for id, r := range f.runs {
		out[id] = append([]int(nil), r...)
	}
	return out
}

// heldBackOf counts the held-back releases (EventDeferred with ErrHeldBack)
// per message id.
func heldBackOf(e *env) map[string]int {
	held := map[string]int{}
	for _, ev := range e.events.Of(pump.EventDeferred) {
		if errors.Is(ev.Err, pump.ErrHeldBack) {
			held[ev.Message.Header.MessageID]++
		}
	}
	return held
}

// checkOnceEach checks that each of ids was handled exactly once and never
// on its first delivery when it is in notFirst (it was held back then).
func checkOnceEach(t *testing.T, runs map[string][]int, ids []string, notFirst ...string) {
	t.Helper()
	for _, id := range ids {
		if len(runs[id]) != 1 {
			t.Errorf("%s handled %d times (delivery attempts %v), want once (all: %v)", id, len(runs[id]), runs[id], runs)
		}
	}
	for _, id := range notFirst {
		for _, a := range runs[id] {
			if a == 1 {
				t.Errorf("%s was handled on its first delivery, received before an earlier message of its key went back unsettled: it overtook that message (all runs: %v)", id, runs)
			}
		}
	}
}

// A keyed message whose lease lapses before dispatch goes back to the
// broker unsettled (the broker hands it out again), so it holds back the
// later messages of its key received with it. One receive brings a0, a1
// and a2 (key a); a0's handler outlives the lease while a1's lease
// extensions fail, so a1 lapses waiting behind it and is dropped; a2,
// whose lease was extended, must be released unhandled (ErrHeldBack), not
// handled before a1's redelivery; each is handled once in the end. Both
// variants.
func TestLapsedLeaseHoldsBackItsKey(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const lease = time.Second
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, StopWhenEmpty: true, VisibilityTimeout: lease})
		ids := []string{"a0", "a1", "a2"}
		for _, id := range ids {
			e.publish(t, srcQueue, id, "a")
		}
		e.b.SetExtendFault(func(_ string, m *message.Message) error {
			if m.Header.MessageID == "a1" && m.DeliveryAttempt == 1 {
				return errors.New("injected lease extension failure")
			}
			return nil
		})
		var runs firstRuns
		opts := fastOptions(v)
		opts.BufferSize = 10
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			runs.add(m)
			if m.Header.MessageID == "a0" {
				time.Sleep(lease * 8 / 5) // a1's lease lapses meanwhile
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 20*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		lapsed := 0
		for _, ev := range e.events.Of(pump.EventLeaseLapsed) {
			if ev.Message.Header.MessageID == "a1" {
				lapsed++
			}
		}
		if lapsed == 0 {
			t.Fatal("a1's lease never lapsed before dispatch: the run did not take the path under test")
		}
		checkOnceEach(t, runs.get(), ids, "a2")
		if held := heldBackOf(e); held["a2"] == 0 || held["a0"] != 0 {
			t.Errorf("held back %v, want a2 at least once and a0 never (a1 lapsed unsettled behind a0)", held)
		}
	})
}

// A held-back release marks its key again: a message of the key that
// arrived after the earlier message went back, but before the held-back
// one was released, is behind the held-back one on the broker and is held
// back too. One receive brings a1 and a2 (key a); a1 is deferred, and a3
// is published and received while a1's requeue is under way; a2 is held
// back, then a3 must be too (without the second mark it is handled at
// once, before a2). Each is handled in the end, a1 twice.
//
// Proactor only: a lane goes on receiving while its worker settles, so a3
// can arrive between a1's deferral and a2's release. A Reactor's performer
// receives again only once its whole batch is settled, so nothing of the
// key arrives in between.
func TestHeldBackReleaseMarksItsKeyAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory.ConsumerOptions{BufferSize: 2, StopWhenEmpty: true})
	e.publish(t, srcQueue, "a1", "a")
	e.publish(t, srcQueue, "a2", "a")
	var once atomic.Bool
	e.b.SetReleaseFault(func(_ string, m *message.Message) error {
		if m.Header.MessageID != "a1" || !once.CompareAndSwap(false, true) {
			return nil
		}
		// While a1's requeue is under way: a3 is published and the
		// Proactor's receiver takes it into a1's lane, behind a2.
		a3 := message.New("a3", srcQueue, message.MTCommand, []byte(`{"id":"a3"}`))
		a3.Header.PartitionKey = "a"
		if err := e.b.Publish(context.Background(), srcQueue, a3); err != nil {
			t.Errorf("publish a3: %v", err)
			return nil
		}
		deadline := time.Now().Add(5 * time.Second)
		for !delivered(e, "a3") {
			if time.Now().After(deadline) {
				t.Error("a3 was not received within 5 s of its publish")
				break
			}
			time.Sleep(time.Millisecond) // poll interval
		}
		return nil
	})
	var runs firstRuns
	opts := fastOptions(pump.Proactor)
	// Two performers: the receive-ahead buffer has a free receive's worth
	// of slots while a2 waits in the lane.
	opts.BufferSize, opts.NoOfPerformers = 2, 2
	e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
		runs.add(m)
		if m.Header.MessageID == "a1" && m.DeliveryAttempt == 1 {
			return pump.Result{Outcome: pump.Defer, Delay: 300 * time.Millisecond}
		}
		return pump.Result{Outcome: pump.Ack}
	})
	if err := e.wait(t, 20*time.Second); err != nil {
		t.Fatalf("Run = %v", err)
	}
	got := runs.get()
	if len(got["a1"]) != 2 {
		t.Errorf("a1 handled %d times, want twice (deferred once)", len(got["a1"]))
	}
	checkOnceEach(t, got, []string{"a2", "a3"}, "a2", "a3")
	if held := heldBackOf(e); held["a2"] == 0 || held["a3"] == 0 {
		t.Errorf("held back %v, want a2 and a3 (a3 arrived before a2's held-back release)", held)
	}
}

// delivered reports whether the memory broker has handed id out.
func delivered(e *env, id string) bool {
	for _, m := range e.b.Snapshot(srcQueue) {
		if m.Header.MessageID == id && m.DeliveryAttempt > 0 {
			return true
		}
	}
	return false
}

// A rejection that was routed but whose acknowledgement failed leaves the
// message on the broker (it comes back when its lease lapses, and its
// routing is retried), so it holds back the later messages of its key
// received with it, as a failed acknowledgement does. One receive brings
// a1, a2, a3 (key a) and b1; a1 is rejected, its copy reaches the
// dead-letter queue and the acknowledgement of the original fails; a2 and
// a3 are released unhandled, b1 is handled at once, and each is handled
// once in the end (a1's return is routed again without a handler run).
// Both variants.
func TestRoutedRejectionWhoseAcknowledgementFailedHoldsBackItsKey(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 10, StopWhenEmpty: true, DeadLetter: dlqQueue, VisibilityTimeout: 300 * time.Millisecond})
		ids := []string{"a1", "a2", "a3", "b1"}
		for _, id := range ids {
			e.publish(t, srcQueue, id, id[:1])
		}
		var failed atomic.Bool
		e.b.SetAcknowledgeFault(func(_ string, m *message.Message) error {
			if m.Header.MessageID == "a1" && failed.CompareAndSwap(false, true) {
				return errors.New("injected acknowledge failure")
			}
			return nil
		})
		var runs firstRuns
		opts := fastOptions(v)
		opts.BufferSize = 10
		opts.RequeueCount = 3
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			runs.add(m)
			if m.Header.MessageID == "a1" {
				return pump.Result{Outcome: pump.Reject, Reason: "rejected by the test"}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 20*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if !failed.Load() {
			t.Fatal("a1's acknowledgement was never attempted: the run did not take the path under test")
		}
		checkOnceEach(t, runs.get(), ids, "a2", "a3")
		if held := heldBackOf(e); held["a2"] != 1 || held["a3"] != 1 || held["b1"] != 0 {
			t.Errorf("held back %v, want a2 and a3 once each and b1 never", held)
		}
		if n := e.b.Depth(dlqQueue); n < 1 {
			t.Errorf("dead-letter queue holds %d messages, want a1's copy", n)
		}
	})
}
