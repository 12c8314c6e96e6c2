package pump

import (
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Settle batching (ADR 0004, "Settle batching"). Acknowledgements of both
// variants go to one batcher, which gathers them into batches of up to the
// consumer's AckBatchMax (ackBatchMax on SQS) and hands
// each batch to one of NoOfPerformers senders (one broker call each, so
// calls overlap as receives do). A batch is sent when it is full, or when
// the first of its acknowledgements reaches its bound, whichever comes
// first:
//   - ackBatchWindow for a keyless acknowledgement, no more than
//     lease/ackWindowLeaseDiv of the consumer's lease;
//   - ackBatchWait for one another message waits on (a keyed message: the
//     next message of its key waits for its outcome) or whose lease already
//     lapsed;
//   - ackBatchWait for every acknowledgement once the pump is stopping, so
//     none waits into the stop's drain; when the workers are done the
//     batcher sends what it holds at once.
const (
	// ackBatchMax is how many acknowledgements a batch has room for before
	// it grows (SQS DeleteMessageBatch's limit, Brighter's largest
	// bufferSize); the most one batch carries is the consumer's AckBatchMax.
	ackBatchMax = 10
	// ackBatchWindow is how long a keyless acknowledgement may wait for its
	// batch to fill (25 ms): with a 10 ms handler on 4 performers (400
	// acknowledgements a second) a batch of ten fills in that time. A
	// window of 1 ms sent one DeleteMessageBatch per message with such a
	// handler.
	ackBatchWindow = 25 * time.Millisecond
	// ackWindowLeaseDiv bounds ackBatchWindow by a twentieth of the
	// consumer's lease, so that a batch never spends more than 5% of the
	// lease its acknowledgements are sent under.
	ackWindowLeaseDiv = 20
	// ackBatchWait is how long an acknowledgement that something waits on
	// (see above) waits for its batch (1 ms): flushing whenever none was
	// waiting sent batches of seven on SQS under load (ADR 0005).
	ackBatchWait = time.Millisecond
)

// ackBound returns how long a keyless acknowledgement may wait for its
// batch under a consumer lease of lease (0: none known): ackBatchWindow, no
// more than lease/ackWindowLeaseDiv, and never less than ackBatchWait.
func ackBound(lease time.Duration) time.Duration {
	w := ackBatchWindow
	if lease > 0 {
		w = min(w, lease/ackWindowLeaseDiv)
	}
	return max(w, ackBatchWait)
}

// ackBatcher gathers acknowledgements into batches (see the rules above).
//
// It reads the clock (time.Now, time.Timer) only per batch and per
// acknowledgement added; its tests run it in a synctest bubble, whose clock
// moves only when every goroutine of the test waits.
type ackBatcher struct {
	// bound is how long a keyless acknowledgement may wait (ackBound).
	bound time.Duration
	// max is the most acknowledgements one batch carries (the consumer's
	// AckBatchMax, at least 1).
	max int
	// stop is closed when the pump starts to stop (run.stop).
	stop <-chan struct{}
	// free holds empty batches for reuse; out takes full ones to a sender,
	// which gives them back to free.
	free chan []ackItem
	out  chan []ackItem
}

// wait is how long a may wait in its batch; stopping: the pump is stopping.
func (b *ackBatcher) wait(a ackItem, stopping bool) time.Duration {
	if stopping || a.done != nil || a.late {
		return ackBatchWait
	}
	return b.bound
}

// run gathers the acknowledgements of acks into batches and sends each on
// b.out, until acks is closed; then it sends what it holds and closes
// b.out. A batch is sent when it holds b.max acknowledgements or when
// the earliest bound among them is reached. The clock is read and the
// timer set once per batch, and again only for an acknowledgement whose
// bound is shorter than the batch's.
func (b *ackBatcher) run(acks <-chan ackItem) {
	defer close(b.out)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	stop := b.stop
	stopping := false
	var batch []ackItem
	var due time.Time // when batch must be sent; meaningful when batch is not empty
	// shorten makes the batch due no later than w from now.
	shorten := func(w time.Duration) {
		now := time.Now()
		if d := now.Add(w); d.Before(due) {
			due = d
			timer.Reset(w)
		}
	}
	add := func(a ackItem) {
		w := b.wait(a, stopping)
		if len(batch) == 0 {
			batch = <-b.free
			due = time.Now().Add(w)
			timer.Reset(w)
		} else if w < b.bound {
			shorten(w)
		}
		batch = append(batch, a)
	}
	send := func() {
		timer.Stop()
		b.out <- batch
		batch = nil
	}
	for {
		if len(batch) == 0 {
			select {
			case a, ok := <-acks:
				if !ok {
					return
				}
				add(a)
			case <-stop:
				stop, stopping = nil, true
			}
			continue
		}
		if len(batch) >= b.max {
			send()
			continue
		}
		select {
		case a, ok := <-acks:
			if !ok {
				send()
				return
			}
			add(a)
		case <-timer.C:
			send()
		case <-stop:
			stop, stopping = nil, true
			// What the batch holds waits no longer than a stopping pump's
			// acknowledgements do.
			shorten(ackBatchWait)
		}
	}
}

// startSettler starts the settle batcher when the consumer offers
// broker.BatchAcknowledger: both variants hand their acknowledgements to
// the channel it returns (nil when the consumer acknowledges one message
// per call), and call the func it returns once no more will be handed
// over; that func returns when every acknowledgement handed over has been
// sent and settled (a stop's flush: Run returns after it).
func (r *run) startSettler() (chan<- ackItem, func()) {
	ba, ok := r.p.consumer.(broker.BatchAcknowledger)
	if !ok {
		return nil, func() {}
	}
	n := r.p.opts.NoOfPerformers
	acks := make(chan ackItem, n*r.p.opts.BufferSize*2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.settleBatches(ba, acks, n)
	}()
	return acks, func() {
		close(acks)
		<-done
	}
}

// settleBatches starts the batcher and n senders over acks and returns
// when acks is closed and every batch has been sent.
func (r *run) settleBatches(ba broker.BatchAcknowledger, acks <-chan ackItem, n int) {
	var lease time.Duration
	if r.leases != nil {
		lease = r.leases.lease
	}
	most := max(ba.AckBatchMax(), 1)
	room := min(most, ackBatchMax) // a batch grows past this only when the flow fills it
	b := &ackBatcher{bound: ackBound(lease), max: most, stop: r.stop,
		free: make(chan []ackItem, n+2), out: make(chan []ackItem)}
	for range n + 2 {
		b.free <- make([]ackItem, 0, room)
	}
	done := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			ms := make([]*message.Message, 0, room)
			for batch := range b.out {
				ms = r.settleBatch(ba, batch, ms)
				clear(batch)
				b.free <- batch[:0]
			}
		}()
	}
	b.run(acks)
	for range n {
		<-done
	}
}

// settleBatch sends one batch acknowledgement for batch and settles each of
// its messages by the answer; ms is scratch space, returned emptied.
func (r *run) settleBatch(ba broker.BatchAcknowledger, batch []ackItem, ms []*message.Message) []*message.Message {
	for _, a := range batch {
		ms = append(ms, a.m)
	}
	before := time.Now() // see run.unsettled
	ctx, cancel := r.callAt(before)
	errs := ba.AcknowledgeBatch(ctx, ms)
	cancel()
	for i, a := range batch {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		r.p.settled(err)
		// A failed acknowledgement leaves the message on the broker:
		// its key's later messages wait for it.
		r.holds.ackSettled(a.m, a.done, before, err)
		if a.late {
			r.leases.settledLate(a.m.Header.MessageID, err, true)
		}
		if err == nil {
			// Answered success: its deferrals here are forgotten, even
			// when the receipt had lapsed (a stale settle must never
			// make its return look spent).
			r.acknowledged(a.m)
		}
		r.p.emit(ackEvent(a.m, a.took, a.late, err))
		if a.sent != nil {
			a.sent.Done()
		}
	}
	clear(ms)
	return ms[:0]
}

// ackSink is where handle hands an acknowledgement: to, the settle
// batcher's channel (nil: handle acknowledges the message itself), and
// sent, when not nil, a count of the late acknowledgements (lease lapsed)
// handed over and not yet sent: a Reactor performer's, which waits for it
// before its next receive.
type ackSink struct {
	to   chan<- ackItem
	sent *sync.WaitGroup
}

// ackItem is an acknowledgement waiting for a settler: the message and how
// long its handler took (for the acknowledged event).
type ackItem struct {
	m    *message.Message
	took time.Duration
	late bool // settled after its lease lapsed (leases.settledLate)
	// done is closed when the acknowledgement has been sent (keyed
	// messages only: keyHolds.ackPending; nil otherwise).
	done chan struct{}
	// sent, when not nil, is counted down once the acknowledgement has
	// been sent and settled (ackSink).
	sent *sync.WaitGroup
}
