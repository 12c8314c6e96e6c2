package pump

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// trackerOf is a lease tracker over a memory consumer with a 30 s lease.
func trackerOf(t *testing.T) *leases {
	t.Helper()
	c := memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", BufferSize: 10, VisibilityTimeout: 30 * time.Second})
	l := newLeases(c, DefaultMaxLeaseExtension, func(Event) {})
	if l == nil {
		t.Fatal("the memory consumer lends no lease")
	}
	return l
}

// batchOf is n messages with receipts, as a Receive returns them.
func batchOf(n int) []*message.Message {
	ms := make([]*message.Message, n)
	for i := range ms {
		ms[i] = &message.Message{Receipt: i + 1}
	}
	return ms
}

// TestLeaseTrackerUnlinksEndedBatches: batches are unlinked by a
// later hold, not by their last message (which would cost every message a
// lock). In order (the Reactor's way) at most the batch being handled and
// the one before it are listed; behind a message held for ever at the
// oldest end, the ended batches are still swept, so the list stays within
// twice the sweep threshold instead of growing with every receive; and the
// held message is still tracked (its lease still lapses).
func TestLeaseTrackerUnlinksEndedBatches(t *testing.T) {
	t.Run("in order", func(t *testing.T) {
		l := trackerOf(t)
		for range 1000 {
			b := l.hold(batchOf(10))
			for i := range b.b.n {
				l.end(b.at(i))
			}
			if l.listed > 2 {
				t.Fatalf("%d batches listed after handling batches in order, want at most 2", l.listed)
			}
		}
	})
	t.Run("behind a held message", func(t *testing.T) {
		l := trackerOf(t)
		stuck := l.hold(batchOf(10))
		for i := 1; i < 10; i++ {
			l.end(stuck.at(i))
		}
		most := 0
		for range 5000 {
			b := l.hold(batchOf(10))
			for i := range b.b.n {
				l.end(b.at(i))
			}
			most = max(most, l.listed)
		}
		if most > 2*minSweepAt {
			t.Fatalf("up to %d batches listed behind one held message, want at most %d", most, 2*minSweepAt)
		}
		if l.oldest != stuck.b {
			t.Fatal("the batch with the held message was unlinked")
		}
		if !l.lapsed(stuck.at(0), time.Now().Add(time.Minute)) {
			t.Fatal("the held message's lease did not lapse a minute after its 30 s lease")
		}
		l.extendDue(t.Context(), time.Now()) // sweeps
		if l.listed != 0 || l.batches != nil || l.oldest != nil {
			t.Fatalf("%d batches listed after every message ended and a tick", l.listed)
		}
	})
	t.Run("more messages than fit inline", func(t *testing.T) {
		l := trackerOf(t)
		b := l.hold(batchOf(leaseInline + 5))
		if b.b.n != leaseInline+5 || len(b.b.extra) != 5 {
			t.Fatalf("%d states (%d beyond the inline ones) for %d messages", b.b.n, len(b.b.extra), leaseInline+5)
		}
		for i := range b.b.n {
			if l.lapsed(b.at(i), time.Now()) {
				t.Fatalf("message %d lapsed on receipt", i)
			}
			l.end(b.at(i))
		}
		if !b.b.done() {
			t.Fatal("the batch is not done after every message ended")
		}
	})
}

// TestLeaseTrackerReusesBatches: a batch whose messages all ended
// is reused by a later hold, so a steady run allocates nothing for
// tracking; a reference of the earlier use (an end called again, as a
// handler cut off by a stop does) touches nothing of the later one; and a
// reused batch starts on a first lease even if its earlier use was
// extended.
func TestLeaseTrackerReusesBatches(t *testing.T) {
	t.Run("a receive allocates nothing", func(t *testing.T) {
		l := trackerOf(t)
		ms := batchOf(10)
		allocs := testing.AllocsPerRun(1000, func() {
			b := l.hold(ms)
			for i := range b.b.n {
				l.end(b.at(i))
			}
		})
		if allocs != 0 {
			t.Fatalf("%v allocations per receive of 10, want 0", allocs)
		}
	})
	t.Run("an earlier use's end touches nothing", func(t *testing.T) {
		l := trackerOf(t)
		first := l.hold(batchOf(10))
		old := first.at(3)
		for i := range first.b.n {
			l.end(first.at(i))
		}
		second := l.hold(batchOf(10))
		if second.b != first.b {
			t.Fatal("the ended batch was not reused")
		}
		l.end(old)
		// A reference taken from the earlier use after the reuse (the
		// Reactor releasing the rest of a batch at a stop) is the earlier
		// use's too.
		late := first.at(5)
		l.end(late)
		if l.lapsed(old, time.Now().Add(time.Minute)) || l.lapsed(late, time.Now().Add(time.Minute)) {
			t.Fatal("a reference of the earlier use lapsed")
		}
		for _, i := range []int{3, 5} {
			if !l.lapsed(second.at(i), time.Now().Add(time.Minute)) {
				t.Fatalf("the later use's message %d is no longer tracked after an earlier use's end", i)
			}
		}
		if second.b.done() {
			t.Fatal("the reused batch is done with 8 of its messages held")
		}
		// Ended in the later use, its states stay ended whatever an
		// earlier use's references do.
		for i := range second.b.n {
			l.end(second.at(i))
		}
		l.end(old)
		l.end(late)
		if !second.b.done() {
			t.Fatal("an earlier use's end made an ended message of the later use tracked again")
		}
	})
	t.Run("a reused batch starts on its first lease", func(t *testing.T) {
		br := memory.NewBroker(false)
		c := br.NewConsumer(memory.ConsumerOptions{Queue: "q", BufferSize: 10, VisibilityTimeout: 30 * time.Second})
		for i := range 20 {
			if err := br.Publish(context.Background(), "q", message.New("m"+string(rune('a'+i)), "q", message.MTCommand, []byte(`{}`))); err != nil {
				t.Fatal(err)
			}
		}
		var events []Event
		l := newLeases(c, DefaultMaxLeaseExtension, func(e Event) { events = append(events, e) })
		ms, err := c.Receive(t.Context(), time.Second)
		if err != nil || len(ms) != 10 {
			t.Fatalf("receive: %d messages, %v", len(ms), err)
		}
		first := l.hold(ms)
		l.extendDue(t.Context(), time.Now().Add(25*time.Second)) // 5 s left of 30: due (grace 6 s)
		extended := 0
		for _, e := range events {
			if e.Kind == EventLeaseExtended {
				extended++
			}
		}
		if extended != 10 {
			t.Fatalf("%d of 10 leases extended", extended)
		}
		if !first.b.extended {
			t.Fatal("the batch is not marked extended after its leases were")
		}
		// An extension lasts a lease from its call; move the first's end a
		// minute on, as a longer run of extensions would.
		l.mu.Lock()
		l.setExpires(first.b, first.b.state(0), first.b.received+l.lease+time.Minute)
		l.mu.Unlock()
		if l.lapsed(first.at(0), time.Now().Add(29*time.Second)) {
			t.Fatal("a lease extended by a minute lapsed at its first lease's end")
		}
		for i := range first.b.n {
			l.end(first.at(i))
		}
		ms, err = c.Receive(t.Context(), time.Second)
		if err != nil || len(ms) != 10 {
			t.Fatalf("receive: %d messages, %v", len(ms), err)
		}
		second := l.hold(ms)
		if second.b != first.b {
			t.Fatal("the ended batch was not reused")
		}
		if !l.lapsed(second.at(0), time.Now().Add(29*time.Second)) {
			t.Fatal("a reused batch kept its earlier use's extension: not lapsed at its first lease's end")
		}
	})
}

// TestLeaseTrackerReuseUnderConcurrency: two receivers hold
// batches while four workers end each message twice (as a cut-off handler
// does), and the receivers end each batch's last message themselves
// through a reference taken late, when the batch may already be reused
// (as the Reactor's stop does): no other message is found ended before
// its own worker ends it. Run with -race.
func TestLeaseTrackerReuseUnderConcurrency(t *testing.T) {
	l := trackerOf(t)
	refs := make(chan leaseRef, 64)
	errs := make(chan string, 8)
	var receivers, workers sync.WaitGroup
	var reused atomic.Int64 // holds given a batch an earlier hold used
	for range 2 {
		receivers.Add(1)
		go func() {
			defer receivers.Done()
			for range 2000 {
				h := l.hold(batchOf(10))
				if h.gen > 1 {
					reused.Add(1)
				}
				for i := range 10 {
					refs <- h.at(i)
				}
				l.end(h.at(9)) // late: its worker may have ended it and the batch be reused
			}
		}()
	}
	for range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for ref := range refs {
				// Message 9 is the receivers' to end late, so its worker's
				// reference may be stale by now; every other one is its
				// worker's alone.
				if ref.i != 9 && !ref.held(ref.state().word.Load()) {
					select {
					case errs <- "a message was ended before its worker ended it":
					default:
					}
				}
				if ref.i != 9 && l.lapsed(ref, time.Now()) {
					select {
					case errs <- "a fresh message lapsed":
					default:
					}
				}
				l.end(ref)
				l.end(ref)
			}
		}()
	}
	receivers.Wait()
	close(refs)
	workers.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// The free list may be empty at the end (the last holds took what
	// it had), so reuse is counted as it happens.
	if reused.Load() == 0 {
		t.Fatal("no batch was reused")
	}
}
