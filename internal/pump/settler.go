package pump

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Settle batching (ADR 0004, "Settle batching"). Acknowledgements of both
// variants go to one batcher, which gathers them into batches of up to the
// consumer's AckBatchMax (ackBatchMax on SQS). A batch is sent when it is
// full, by the performer whose acknowledgement filled it (one broker call,
// as a plain receive/delete loop makes), or when the first of its
// acknowledgements reaches its bound, by one of NoOfPerformers senders
// (so those calls overlap as receives do), whichever comes first:
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

// ackBatcher gathers acknowledgements into batches (see the rules above):
// add returns a full batch to its caller, and a batch due on its bound
// goes to a sender on out.
//
// Handing an acknowledgement over is a lock, an append and an unlock on the
// handler's goroutine (add), and a full batch is sent from there: no
// goroutine wakes for either. Goroutines wake only for a batch that leaves
// on its bound (the timer's callback, then a sender). (A batcher goroutine
// fed through a channel, handing every batch to a sender, woke twice per
// acknowledgement or batch, and cost the Reactor with a no-op handler a
// third of its throughput on the memory transport.)
//
// It reads the clock (time.Now, time.Timer) only per batch and per
// acknowledgement whose bound is shorter than its batch's; its tests run it
// in a synctest bubble, whose clock moves only when every goroutine of the
// test waits.
type ackBatcher struct {
	// bound is how long a keyless acknowledgement may wait (ackBound).
	bound time.Duration
	// max is the most acknowledgements one batch carries (the consumer's
	// AckBatchMax, at least 1); room is a new batch's capacity.
	max, room int
	// free holds empty batches for reuse (reuse); out takes batches due on
	// their bound to a sender.
	free chan []ackItem
	out  chan []ackItem
	// ba sends the batches (nil in the batcher's own tests).
	ba broker.BatchAcknowledger

	// open counts the batches filling or taken out and not yet settled
	// (one counted per batch, not per acknowledgement): while it is 0 no
	// acknowledgement is waiting, and waiting needs no lock.
	open atomic.Int32

	mu    sync.Mutex
	batch []ackItem // the batch filling; nil when empty
	// flying lists the batches taken out of the batcher (full, or due on
	// their bound) whose answers are not yet settled: reuse ends them.
	flying   [][]ackItem
	due      time.Time      // when batch must leave; meaningful when batch is not empty
	timer    *time.Timer    // fires at armed (fire), no later than due while batch is not empty
	armed    time.Time      // when timer fires; zero when it is not set
	stopping bool           // the pump is stopping: every acknowledgement waits ackBatchWait at most
	sending  sync.WaitGroup // batches taken from the batcher and not yet on out
	quit     chan struct{}  // closed by close: ends the stop watch
}

// newAckBatcher returns a batcher of batches of up to most acknowledgements
// (first allocated with room for room), each keyless one waiting at most
// bound, whose batches leave on a channel with room for queued batches
// (b.out). Once stop is closed it treats every acknowledgement as the pump's
// stop requires (ackBatchWait at most). Call close when no more will be
// added.
func newAckBatcher(bound time.Duration, most, room, queued int, stop <-chan struct{}) *ackBatcher {
	b := &ackBatcher{bound: bound, max: max(most, 1), room: max(room, 1),
		free: make(chan []ackItem, queued+2), out: make(chan []ackItem, queued), quit: make(chan struct{})}
	b.timer = time.AfterFunc(time.Hour, b.fire)
	b.timer.Stop()
	go func() {
		select {
		case <-stop:
			b.markStopping()
		case <-b.quit:
		}
	}()
	return b
}

// wait is how long a may wait in its batch; stopping: the pump is stopping.
func (b *ackBatcher) wait(a ackItem, stopping bool) time.Duration {
	if stopping || a.done != nil || a.late {
		return ackBatchWait
	}
	return b.bound
}

// add puts a in the batch filling. It returns that batch when a filled it
// (b.max acknowledgements): the caller sends it at once (ackSink.settle), as
// a plain receive/delete loop sends its batch, and gives it back with
// reuse. Otherwise it returns nil, and the batch leaves when the earliest
// bound among its acknowledgements is reached (fire), through a sender.
func (b *ackBatcher) add(a ackItem) []ackItem {
	b.mu.Lock()
	w := b.wait(a, b.stopping)
	if len(b.batch) == 0 {
		select {
		case b.batch = <-b.free:
		default:
			b.batch = make([]ackItem, 0, b.room)
		}
		b.open.Add(1)
		b.due = time.Now().Add(w)
		b.armLocked()
	} else if w < b.bound {
		b.shortenLocked(w)
	}
	b.batch = append(b.batch, a)
	if len(b.batch) < b.max {
		b.mu.Unlock()
		return nil
	}
	// The timer stays set: a batch that fills leaves it to the next batch,
	// whose due time is later (fire sets it again), rather than stop and
	// set it for every batch.
	full := b.batch
	b.batch = nil
	b.flying = append(b.flying, full)
	b.mu.Unlock()
	return full
}

// armLocked makes the timer fire no later than b.due (b.mu held): a timer
// already set to fire sooner is left as it is, and fire sets it again if
// the batch filling is not due yet.
func (b *ackBatcher) armLocked() {
	if b.armed.IsZero() || b.due.Before(b.armed) {
		b.armed = b.due
		b.timer.Reset(time.Until(b.due))
	}
}

// reuse gives back a batch once it has been sent and its messages settled,
// for a later batch: its acknowledgements are no longer waiting.
func (b *ackBatcher) reuse(batch []ackItem) {
	b.mu.Lock()
	for i, f := range b.flying {
		if len(f) > 0 && len(batch) > 0 && &f[0] == &batch[0] {
			last := len(b.flying) - 1
			b.flying[i] = b.flying[last]
			b.flying[last] = nil
			b.flying = b.flying[:last]
			b.open.Add(-1)
			break
		}
	}
	b.mu.Unlock()
	clear(batch)
	select {
	case b.free <- batch[:0]:
	default: // enough kept for reuse
	}
}

// shortenLocked makes the batch filling due no later than w from now
// (b.mu held, the batch not empty).
func (b *ackBatcher) shortenLocked(w time.Duration) {
	if d := time.Now().Add(w); d.Before(b.due) {
		b.due = d
		b.armLocked()
	}
}

// takeLocked takes the batch filling out of the batcher to be sent by a
// sender (b.mu held, the batch not empty); the caller hands it over with
// send.
func (b *ackBatcher) takeLocked() []ackItem {
	full := b.batch
	b.batch = nil
	b.flying = append(b.flying, full)
	b.sending.Add(1)
	return full
}

// waiting reports whether an acknowledgement of the message id is in the
// batcher, filling a batch or in a batch whose answer is not yet settled:
// the handler acknowledged a delivery of it here and the broker's answer is
// not known. A nil batcher, or one holding nothing (open), answers false
// without a lock; otherwise it scans what it holds (at most a batch per
// sender and performer), so only deliveries that may be redeliveries ask
// (ackSink.waiting).
func (b *ackBatcher) waiting(id string) bool {
	if b == nil || id == "" || b.open.Load() == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range b.batch {
		if a.m.Header.MessageID == id {
			return true
		}
	}
	for _, f := range b.flying {
		for _, a := range f {
			if a.m.Header.MessageID == id {
				return true
			}
		}
	}
	return false
}

// send hands a batch taken by takeLocked to the senders.
func (b *ackBatcher) send(full []ackItem) {
	b.out <- full
	b.sending.Done()
}

// fire is the timer's callback: the batch filling leaves if it is due. A
// callback that finds no batch filling (it left full) leaves the timer
// unset; one that finds a batch not yet due (a batch begun after the one
// the timer was set for left full) sets it again for that batch's due time.
func (b *ackBatcher) fire() {
	b.mu.Lock()
	b.armed = time.Time{}
	if len(b.batch) == 0 {
		b.mu.Unlock()
		return
	}
	if time.Now().Before(b.due) {
		b.armLocked()
		b.mu.Unlock()
		return
	}
	full := b.takeLocked()
	b.mu.Unlock()
	b.send(full)
}

// markStopping records that the pump is stopping: what the batch filling
// holds, and every acknowledgement added from now, waits no longer than a
// stopping pump's acknowledgements do (ackBatchWait), so none waits into
// the stop's drain.
func (b *ackBatcher) markStopping() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopping = true
	if len(b.batch) > 0 {
		b.shortenLocked(ackBatchWait)
	}
}

// close sends what the batcher holds at once and closes b.out once every
// batch is on it. Nothing may be added after it is called.
func (b *ackBatcher) close() {
	b.mu.Lock()
	var full []ackItem
	if len(b.batch) > 0 {
		full = b.takeLocked()
	}
	b.timer.Stop()
	b.armed = time.Time{}
	b.mu.Unlock()
	close(b.quit)
	if full != nil {
		b.send(full)
	}
	b.sending.Wait()
	close(b.out)
}

// startSettler starts the settle batcher when the consumer offers
// broker.BatchAcknowledger: both variants hand their acknowledgements to
// the batcher it returns (nil when the consumer acknowledges one message
// per call), and call the func it returns once no more will be handed
// over; that func returns when every acknowledgement handed over has been
// sent and settled (a stop's flush: Run returns after it).
func (r *run) startSettler() (*ackBatcher, func()) {
	ba, ok := r.p.consumer.(broker.BatchAcknowledger)
	if !ok {
		return nil, func() {}
	}
	n := r.p.opts.NoOfPerformers
	var lease time.Duration
	if r.leases != nil {
		lease = r.leases.lease
	}
	most := max(ba.AckBatchMax(), 1)
	room := min(most, ackBatchMax) // a batch grows past this only when the flow fills it
	b := newAckBatcher(ackBound(lease), most, room, n, r.stop)
	b.ba = ba
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.settleBatches(ba, b, n)
	}()
	return b, func() {
		b.close()
		<-done
	}
}

// settleBatches runs n senders of b's batches and returns when b is closed
// and every batch has been sent and settled.
func (r *run) settleBatches(ba broker.BatchAcknowledger, b *ackBatcher, n int) {
	var senders sync.WaitGroup
	for range n {
		senders.Add(1)
		go func() {
			defer senders.Done()
			ms := make([]*message.Message, 0, b.room)
			for batch := range b.out {
				ms = r.settleBatch(ba, batch, ms)
				b.reuse(batch)
			}
		}()
	}
	senders.Wait()
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
	var answered time.Time // read once a batch, when one of it may be late
	for i, a := range batch {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		r.p.settled(err)
		// A failed acknowledgement leaves the message on the broker:
		// its key's later messages wait for it.
		r.holds.ackSettled(a.m, a.done, before, err)
		late := a.late
		if late {
			r.leases.settledLate(a.m.Header.MessageID, err, true)
		} else if err == nil && a.until > 0 {
			if answered.IsZero() {
				answered = time.Now()
			}
			if r.leases.answeredLate(a.until, answered) {
				late = true
				r.leases.lateAnswered(a.m.Header.MessageID, answered)
			}
		}
		if err == nil {
			// Answered success: its deferrals here are forgotten, even
			// when the receipt had lapsed (a stale settle must never
			// make its return look spent), and a stale one is recorded so
			// that the message's return is acknowledged, not handled or
			// judged again.
			r.acknowledged(a.m, late)
		} else {
			r.p.here.ackFailed(a.m.Header.MessageID) // its next delivery here: retryAck
		}
		if len(r.p.observers) > 0 { // an Event is built only for someone to tell
			r.p.emit(ackEvent(a.m, a.took, late, err))
		}
		if a.sent != nil {
			a.sent.Done()
		}
	}
	clear(ms)
	return ms[:0]
}

// ackSink is where handle hands an acknowledgement: to, the settle
// batcher (nil: handle acknowledges the message itself); sent, when not
// nil, a count of the late acknowledgements (lease lapsed) handed over and
// not yet sent: a Reactor performer's, which waits for it before its next
// receive; and ms, the performer's scratch space for the batches it sends
// itself (newAckSink).
type ackSink struct {
	to   *ackBatcher
	sent *sync.WaitGroup
	ms   *[]*message.Message
}

// newAckSink returns a performer's ackSink to b (nil: none), with its own
// scratch space; sent as in ackSink.
func newAckSink(b *ackBatcher, sent *sync.WaitGroup) ackSink {
	s := ackSink{to: b, sent: sent}
	if b != nil {
		ms := make([]*message.Message, 0, b.room)
		s.ms = &ms
	}
	return s
}

// hand gives a to the batcher and, when a filled its batch, sends that
// batch and settles its messages before returning; it reports whether it
// sent one.
func (s ackSink) hand(r *run, a ackItem) (sent bool) {
	full := s.to.add(a)
	if full == nil {
		return false
	}
	*s.ms = r.settleBatch(s.to.ba, full, *s.ms)
	s.to.reuse(full)
	return true
}

// waiting reports whether m is a later delivery of a message whose
// handler acknowledged an earlier delivery here, with that acknowledgement
// still in the settle batcher (ackBatcher.waiting). A first delivery
// (broker delivery attempt 1) is never one, and costs nothing.
func (s ackSink) waiting(m *message.Message) bool {
	return s.to != nil && m.DeliveryAttempt != 1 && s.to.waiting(m.Header.MessageID)
}

// ackItem is an acknowledgement waiting for a settler: the message and how
// long its handler took (for the acknowledged event).
type ackItem struct {
	m    *message.Message
	took time.Duration
	late bool // settled after its lease lapsed (leases.settledLate)
	// until is when the receipt it uses lapses by the pump's lease clock
	// (leases.settling): answered at or after it, the acknowledgement is
	// as late (leases.answeredLate).
	until time.Duration
	// done is closed when the acknowledgement has been sent (keyed
	// messages only: keyHolds.ackPending; nil otherwise).
	done chan struct{}
	// sent, when not nil, is counted down once the acknowledgement has
	// been sent and settled (ackSink).
	sent *sync.WaitGroup
}
