package pump

import (
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Acknowledgement retries. A handler's Ack is final, as its rejection is:
// when the acknowledgement's broker call fails (a connection reset, a
// receipt the broker refuses as stale), the message stays on the broker and
// comes back, and its handler has already done its work. The pump records
// the failure in handledHere (ackFailed), and the message's next delivery
// to this process is acknowledged with its own receipt without a handler
// run (retryAck), whatever its delivery count and the budget
// (arrivalAckRetry comes first in exhausted). A retried acknowledgement
// that fails again keeps the record, and the delivery after tries again;
// the redelivery is the broker's (lease or visibility timeout), so nothing
// loops. The record is forgotten once an acknowledgement succeeds. It is a
// cache (handledHere): lost on restart, or forgotten when full, it costs
// at most one more handler run of the message.
//
// A delivery that arrives while the handler's acknowledgement of an
// earlier delivery still waits in the settle batcher (ackBatcher.waiting:
// its batch filling, or sent and not yet answered) is acknowledged the
// same way (AckWaiting): the handler's Ack is final before its answer too.

// retryAck acknowledges m, a later delivery of a message whose handler
// acknowledged an earlier delivery here and whose acknowledgement failed,
// without a handler run (arrivalAckRetry). st is m's lease tracking (the
// zero leaseRef when none) and now when handle admitted it.
//
// waiting: the earlier acknowledgement had not failed but was still
// waiting in the settle batcher when m arrived (a broker that redelivers a
// message whose lease lapsed, or Pub/Sub redelivering an ordering key's
// later messages with an earlier one, does not wait for it). m was handled
// all the same, and is acknowledged with its own receipt, whatever the
// earlier one's answer; should this acknowledgement fail, it is recorded as
// a failed one (handledHere.ackFailed), so that the next delivery is
// acknowledged in its turn. Its events are marked AckWaiting too, and the
// acknowledgement is logged as LogAckWhileWaiting.
//
// It acknowledges with one call of its own, not through the settle
// batcher: such retries are rare, and the call's answer is at hand for the
// event. A keyed message's acknowledgement is pending for its key while
// the call is under way (keyHolds.ackPending), as a batched one is, so the
// key's next message waits for its outcome, and a failure holds the key
// back, as any failed acknowledgement does.
//
// It emits the acknowledgement's event marked Retry, with no handler
// duration: EventAcknowledged (logged at Info, LogAckRetried, with the
// message id) when the broker took it, EventSettleFailed when the call
// failed (the record stays: the next delivery tries again), or
// EventStaleSettle when the receipt had lapsed by the pump's lease clock
// (the record stays too: the broker may have removed nothing).
func (r *run) retryAck(m *message.Message, st leaseRef, now time.Time, waiting bool) {
	p := r.p
	id := m.Header.MessageID
	f, late, until := r.leases.settling(m, st, now, true)
	if f != nil {
		m.Receipt = f.Receipt
	}
	done := r.holds.ackPending(m)
	before := r.clock() // see run.unsettled
	ctx, cancel := r.callAt(before)
	err := p.consumer.Acknowledge(ctx, m)
	cancel()
	p.settled(err)
	r.holds.ackSettled(m, done, before, err)
	if late {
		r.leases.settledLate(id, err, true)
	} else if err == nil && until > 0 {
		if at := time.Now(); r.leases.answeredLate(until, at) {
			late = true
			r.leases.lateAnswered(id, at)
		}
	}
	if err == nil && !late {
		p.here.forget(id, m.StoredID)
	} else if err != nil && waiting || err == nil && late {
		p.here.ackFailed(id) // the earlier acknowledgement may remove nothing (SQS: an older receipt)
	}
	e := ackEvent(m, 0, late, err)
	e.Retry, e.AckWaiting = true, waiting
	p.emit(e)
}
