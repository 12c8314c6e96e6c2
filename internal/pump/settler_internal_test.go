package pump

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// batcherRun is an ackBatcher under test in a synctest bubble: acks are
// added by the test and every batch sent is recorded with the (bubble)
// time it left.
type batcherRun struct {
	mu    sync.Mutex
	b     *ackBatcher
	stop  chan struct{}
	added map[*message.Message]time.Time
	sent  []sentBatch
	done  chan struct{}
}

type sentBatch struct {
	at    time.Time
	items []ackItem
}

func startBatcher(bound time.Duration) *batcherRun {
	br := &batcherRun{stop: make(chan struct{}), added: map[*message.Message]time.Time{}, done: make(chan struct{})}
	br.b = newAckBatcher(bound, ackBatchMax, ackBatchMax, 1, br.stop)
	go func() {
		defer close(br.done)
		for batch := range br.b.out {
			br.record(batch)
		}
	}()
	return br
}

// record notes batch as sent now: from the test's goroutine for a batch an
// acknowledgement filled, from the sender's for one due on its bound.
func (br *batcherRun) record(batch []ackItem) {
	br.mu.Lock()
	defer br.mu.Unlock()
	br.sent = append(br.sent, sentBatch{at: time.Now(), items: append([]ackItem(nil), batch...)})
}

// ack hands the batcher an acknowledgement now; keyed marks one another
// message waits on, late one whose lease lapsed.
func (br *batcherRun) ack(id string, keyed, late bool) {
	m := &message.Message{Header: message.Header{MessageID: id}}
	a := ackItem{m: m, late: late}
	if keyed {
		m.Header.PartitionKey = "k-" + id
		a.done = make(chan struct{})
	}
	br.added[m] = time.Now()
	if full := br.b.add(a); full != nil {
		// Sent by the one whose acknowledgement filled it, at once.
		br.record(full)
		br.b.reuse(full)
	}
	synctest.Wait() // a batch that left through a sender is recorded
}

// check fails t for any acknowledgement that left later than its bound
// (the batcher's bound; ackBatchWait for a keyed or late one, and from the
// stop, at stopped, for every one) and for any acknowledgement never sent.
func (br *batcherRun) check(t *testing.T, stopped time.Time) {
	t.Helper()
	seen := 0
	for _, s := range br.sent {
		if len(s.items) == 0 || len(s.items) > ackBatchMax {
			t.Errorf("a batch of %d acknowledgements, want 1..%d", len(s.items), ackBatchMax)
		}
		for _, a := range s.items {
			seen++
			added := br.added[a.m]
			bound := br.b.bound
			if a.done != nil || a.late {
				bound = ackBatchWait
			}
			latest := added.Add(bound)
			if !stopped.IsZero() {
				from := stopped
				if added.After(from) {
					from = added
				}
				if s := from.Add(ackBatchWait); s.Before(latest) {
					latest = s
				}
			}
			if s.at.After(latest) {
				t.Errorf("acknowledgement %s (keyed %v, late %v) waited %s in its batch, past its bound (%s after it was added)",
					a.m.Header.MessageID, a.done != nil, a.late, s.at.Sub(added), latest.Sub(added))
			}
		}
	}
	if seen != len(br.added) {
		t.Errorf("%d acknowledgements sent, %d added", seen, len(br.added))
	}
}

// The batcher never holds an acknowledgement past its bound: a keyless one
// waits at most the window (bounded by the lease), one another message
// waits on or whose lease lapsed at most ackBatchWait, and once the pump is
// stopping none waits more than ackBatchWait; closing the channel sends
// what is held at once. Random arrivals over simulated time, many seeds.
func TestAckBatchNeverHoldsAnAcknowledgementPastItsBound(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				bounds := []time.Duration{ackBound(0), ackBound(30 * time.Second), ackBound(200 * time.Millisecond), ackBound(10 * time.Millisecond)}
				br := startBatcher(bounds[rng.IntN(len(bounds))])
				n := 50 + rng.IntN(150)
				stopAt := -1
				if rng.IntN(2) == 0 {
					stopAt = rng.IntN(n)
				}
				var stopped time.Time
				for i := range n {
					if i == stopAt {
						close(br.stop)
						stopped = time.Now()
						synctest.Wait()
						time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
					}
					br.ack(fmt.Sprint(i), rng.IntN(10) == 0, rng.IntN(20) == 0)
					time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
				}
				time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
				closed := time.Now()
				br.b.close()
				<-br.done
				if last := br.sent[len(br.sent)-1].at; last.After(closed) {
					t.Errorf("the last batch left %s after the acknowledgements closed, want at once", last.Sub(closed))
				}
				br.check(t, stopped)
			})
		})
	}
}

// Keyless acknowledgements 2.5 ms apart (a 10 ms handler on 4 performers)
// go in full batches of ten, each sent when its tenth arrives; at 6 ms
// apart the window sends batches of five, 25 ms after their first. (At 5 ms
// apart the sixth arrives at the very instant the window ends, and may
// join the batch leaving then.)
func TestAckBatchFillsWithinTheWindow(t *testing.T) {
	for _, tc := range []struct {
		gap  time.Duration
		size int
	}{{2500 * time.Microsecond, 10}, {6 * time.Millisecond, 5}} {
		t.Run(tc.gap.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				br := startBatcher(ackBound(30 * time.Second))
				for i := range 40 {
					br.ack(fmt.Sprint(i), false, false)
					time.Sleep(tc.gap)
				}
				br.b.close()
				<-br.done
				for i, s := range br.sent[:len(br.sent)-1] {
					if len(s.items) != tc.size {
						t.Errorf("batch %d carried %d acknowledgements, want %d", i, len(s.items), tc.size)
					}
				}
				br.check(t, time.Time{})
			})
		})
	}
}

// The window is ackBatchWindow, no more than a twentieth of the lease and
// no less than ackBatchWait.
func TestAckBoundIsAFractionOfTheLease(t *testing.T) {
	for _, tc := range []struct{ lease, want time.Duration }{
		{0, ackBatchWindow},
		{30 * time.Second, ackBatchWindow},
		{200 * time.Millisecond, 10 * time.Millisecond},
		{10 * time.Millisecond, ackBatchWait},
	} {
		if got := ackBound(tc.lease); got != tc.want {
			t.Errorf("ackBound(%s) = %s, want %s", tc.lease, got, tc.want)
		}
	}
}

// The settle batcher knows the acknowledgements it holds, from the batch
// filling until the batch sent has been settled (reuse), and no longer: a
// later delivery of such a message (broker delivery attempt not 1, or
// unknown: 0) is acknowledged without a handler run (ackSink.waiting); a
// first delivery never asks.
func TestBatcherKnowsTheAcknowledgementsItHolds(t *testing.T) {
	stop := make(chan struct{})
	b := newAckBatcher(time.Hour, 2, 2, 1, stop)
	defer func() {
		close(stop)
		b.close()
	}()
	delivery := func(id string, attempt int) *message.Message {
		return &message.Message{Header: message.Header{MessageID: id}, DeliveryAttempt: attempt}
	}
	s := ackSink{to: b}
	if s.waiting(delivery("m1", 2)) || b.open.Load() != 0 {
		t.Fatal("an empty batcher holds an acknowledgement")
	}
	if full := b.add(ackItem{m: delivery("m1", 1)}); full != nil {
		t.Fatal("a batch of 2 left with one acknowledgement")
	}
	if !s.waiting(delivery("m1", 2)) || !s.waiting(delivery("m1", 0)) {
		t.Error("m1's acknowledgement, filling a batch, is not known to a later delivery of m1")
	}
	if s.waiting(delivery("m1", 1)) {
		t.Error("a first delivery asked the batcher (it can be no later delivery)")
	}
	if s.waiting(delivery("m2", 2)) {
		t.Error("m2 reported waiting: only m1's acknowledgement was handed over")
	}
	full := b.add(ackItem{m: delivery("m2", 1)})
	if len(full) != 2 {
		t.Fatalf("the batch filled by m2 = %d acknowledgements, want 2", len(full))
	}
	if !s.waiting(delivery("m1", 3)) || !s.waiting(delivery("m2", 2)) {
		t.Error("acknowledgements sent and not yet settled are not known to later deliveries")
	}
	b.reuse(full) // settled
	if s.waiting(delivery("m1", 3)) || s.waiting(delivery("m2", 2)) || b.open.Load() != 0 {
		t.Errorf("acknowledgements settled are still reported waiting (open batches %d)", b.open.Load())
	}
	if (ackSink{}).waiting(delivery("m1", 2)) {
		t.Error("a sink with no batcher (one acknowledgement per call) reported one waiting")
	}
}
