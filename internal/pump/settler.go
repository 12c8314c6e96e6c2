package pump

import (
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ackBatchWait is how long a settler waits for a batch of acknowledgements
// to fill (1 ms) before it sends what it has: flushing whenever none was
// waiting sent batches of seven on SQS under load, a third more
// DeleteMessageBatch calls than the plain SDK loop (ADR 0005).
const ackBatchWait = time.Millisecond

// settler acknowledges in batches of up to 10, sending a batch when it is
// full or ackBatchWait after its first acknowledgement, and what is left
// when acks closes.
func (r *run) settler(ba broker.BatchAcknowledger, acks <-chan ackItem) {
	batch := make([]ackItem, 0, 10)
	ms := make([]*message.Message, 0, 10)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		for _, a := range batch {
			ms = append(ms, a.m)
		}
		before := time.Now() // see run.unsettled
		ctx, cancel := r.call()
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
			batch[i], ms[i] = ackItem{}, nil
		}
		batch, ms = batch[:0], ms[:0]
	}
	wait := time.NewTimer(ackBatchWait)
	wait.Stop()
	for a := range acks {
		batch = append(batch, a)
		wait.Reset(ackBatchWait)
	fill:
		for len(batch) < cap(batch) {
			select {
			case a2, ok := <-acks:
				if !ok {
					wait.Stop()
					flush()
					return
				}
				batch = append(batch, a2)
			case <-wait.C:
				break fill
			}
		}
		wait.Stop()
		flush()
	}
	flush()
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
}
