package pump

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// The hot path's shortcuts keep the rules they replace: the Proactor's
// receive-ahead slots wake a waiting receiver once a receive's worth is
// free, and a message's lease check reuses the previous message's clock
// reading only when nothing that could wait came between.

// A receiver waiting for a receive's worth of slots is woken once that
// many are free, not before, and a stop ends its wait with none taken.
func TestReceiveSlotsWakeAWaiterOnceABatchIsFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newReceiveSlots(2, 3)
		done := make(chan struct{})
		for i := range 2 {
			if !s.take(done) {
				t.Fatalf("receiver %d could not take its 3 of the 2 x 3 slots", i+1)
			}
		}
		var took atomic.Bool
		go func() {
			took.Store(s.take(done))
		}()
		synctest.Wait()
		if took.Load() {
			t.Fatal("a third receiver took slots none of which were free")
		}
		s.put(1)
		s.put(1)
		synctest.Wait()
		if took.Load() {
			t.Fatal("a receiver took a batch of 3 with 2 slots free")
		}
		s.put(1)
		synctest.Wait()
		if !took.Load() {
			t.Fatal("a receiver waiting for 3 slots was not woken when the third came back")
		}
		if f := s.free.Load(); f != 0 {
			t.Fatalf("free slots = %d after the third batch was taken, want 0", f)
		}

		stopped := make(chan bool)
		go func() { stopped <- s.take(done) }()
		synctest.Wait()
		close(done)
		if <-stopped {
			t.Fatal("a waiting receiver took slots after the stop")
		}
		if f := s.free.Load(); f != 0 {
			t.Fatalf("free slots = %d after a stopped wait, want 0 (none taken)", f)
		}
	})
}

// Receivers and workers taking and giving back slots at once never hold
// more than the buffer, never lose a slot, and never leave a receiver
// waiting while a receive's worth is free.
func TestReceiveSlotsUnderContentionKeepTheirCount(t *testing.T) {
	const n, b, rounds = 4, 5, 2000
	s := newReceiveSlots(n, b)
	done := make(chan struct{})
	var inUse atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				if !s.take(done) {
					t.Error("take reported a stop that never came")
					return
				}
				if u := inUse.Add(b); u > n*b {
					t.Errorf("%d slots in use, more than the buffer's %d", u, n*b)
				}
				inUse.Add(-b)
				// Given back as workers do: one by one, or some at once
				// as a receive that brought fewer does.
				s.put(2)
				for range b - 2 {
					s.put(1)
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("receivers still waiting with every slot given back: a wake-up was lost")
	}
	if f := s.free.Load(); f != n*b {
		t.Fatalf("free slots = %d at the end, want all %d", f, n*b)
	}
}

// hotPathRun is a bare run (bareRun) with a handler that counts its calls
// and a message (partition key key) received under the consumer's lease,
// tracked.
func hotPathRun(t *testing.T, key string) (*run, *eventList, []*message.Message, heldBatch, *atomic.Int32) {
	t.Helper()
	b := memory.NewBroker(false)
	c := pumpConsumer(b)
	m := message.New("m1", receiptsQueue, message.MTEvent, []byte("{}"))
	m.Header.PartitionKey = key
	if err := b.Publish(t.Context(), receiptsQueue, m); err != nil {
		t.Fatalf("publish: %v", err)
	}
	var ran atomic.Int32
	r, evs := bareRun(t, c, func(context.Context, *message.Message) Result {
		ran.Add(1)
		return Result{Outcome: Ack}
	}, -1)
	started := time.Now()
	ms, err := c.Receive(t.Context(), time.Second)
	if err != nil || len(ms) != 1 {
		t.Fatalf("receive: %v, %d messages; want 1", err, len(ms))
	}
	for _, m := range ms {
		m.ReceivedAt = started
	}
	return r, evs, ms, r.leases.holdSince(ms, started), &ran
}

// A keyed message reads the clock for its lease check rather than take
// the previous message's reading: it may have waited for its
// predecessor's batched acknowledgement (awaitAck) since. Here the reading
// passed in lies past its lease; a fresh one does not.
func TestKeyedMessageReadsTheClockForItsLeaseCheck(t *testing.T) {
	r, evs, ms, lb, ran := hotPathRun(t, "k")
	stale := time.Now().Add(time.Hour) // as if read long after its lease ended
	r.handleAt(ms[0], lb.at(0), ackSink{}, stale)
	if n := len(evs.of(EventLeaseLapsed)); n != 0 || ran.Load() != 1 {
		t.Fatalf("a keyed message with its lease held was judged by the reading passed in: %d lapsed, handler ran %d times; want it dispatched on a fresh reading", n, ran.Load())
	}
}

// A keyless message's lease check takes the reading the previous message
// of its batch returned (the clock is not read again): a reading past its
// lease finds it lapsed.
func TestKeylessMessageTakesThePreviousReading(t *testing.T) {
	r, evs, ms, lb, ran := hotPathRun(t, "")
	r.handleAt(ms[0], lb.at(0), ackSink{}, time.Now().Add(time.Hour))
	if n := len(evs.of(EventLeaseLapsed)); n != 1 || ran.Load() != 0 {
		t.Fatalf("%d lapsed, handler ran %d times; want the reading passed in used: lapsed, not dispatched", n, ran.Load())
	}
}

// handleAt returns its reading for the next message only when handing the
// acknowledgement to the settle batcher made no broker call: after a
// batch it sent (here every acknowledgement fills one), the next message
// reads the clock again.
func TestReadingIsNotPassedOnAcrossABatchSent(t *testing.T) {
	for _, c := range []struct {
		name  string
		most  int
		fresh bool
	}{
		{"batch-not-full", 10, true},
		{"batch-sent", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _, ms, lb, ran := hotPathRun(t, "")
			stop := make(chan struct{})
			defer close(stop)
			ab := newAckBatcher(ackBatchWait, c.most, c.most, 1, stop)
			ab.ba = r.p.consumer.(*memory.Consumer)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for batch := range ab.out {
					r.settleBatch(ab.ba, batch, nil)
				}
			}()
			sink := newAckSink(ab, nil)
			_, next := r.handleAt(ms[0], lb.at(0), sink, time.Time{})
			ab.close()
			<-done
			if ran.Load() != 1 {
				t.Fatalf("handler ran %d times, want 1", ran.Load())
			}
			if got := !next.IsZero(); got != c.fresh {
				t.Fatalf("reading passed on = %v (%v), want %v", got, next, c.fresh)
			}
		})
	}
}
