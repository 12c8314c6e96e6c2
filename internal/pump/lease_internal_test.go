package pump

import (
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

// TestLeaseTrackerUnlinksEndedBatches_Issue12: batches are unlinked by a
// later hold, not by their last message (which would cost every message a
// lock). In order (the Reactor's way) at most the batch being handled and
// the one before it are listed; behind a message held for ever at the
// oldest end, the ended batches are still swept, so the list stays within
// twice the sweep threshold instead of growing with every receive; and the
// held message is still tracked (its lease still lapses).
func TestLeaseTrackerUnlinksEndedBatches_Issue12(t *testing.T) {
	t.Run("in order", func(t *testing.T) {
		l := trackerOf(t)
		for range 1000 {
			b := l.hold(batchOf(10))
			for i := range b.states {
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
			for i := range b.states {
				l.end(b.at(i))
			}
			most = max(most, l.listed)
		}
		if most > 2*minSweepAt {
			t.Fatalf("up to %d batches listed behind one held message, want at most %d", most, 2*minSweepAt)
		}
		if l.oldest != stuck {
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
		if len(b.states) != leaseInline+5 {
			t.Fatalf("%d states for %d messages", len(b.states), leaseInline+5)
		}
		for i := range b.states {
			if l.lapsed(b.at(i), time.Now()) {
				t.Fatalf("message %d lapsed on receipt", i)
			}
			l.end(b.at(i))
		}
		if !b.done() {
			t.Fatal("the batch is not done after every message ended")
		}
	})
}
