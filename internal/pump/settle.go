package pump

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ErrCutOff is the Err of the EventDeferred emitted for a message whose
// handler was still running when a stop's DrainTimeout expired: the
// handler was cancelled and did not get to decide, so the message is
// released (requeue 0) unjudged: the pump stamps no count and applies no
// budget (R-4 judges handler outcomes, not our shutdown). The broker still
// counts the delivery; the budget forgives at most max(requeueCount, 1)
// deliveries that no handler finished (exhausted, spentByHandlers), so a
// message cut off by every stop is routed on its delivery after twice that
// many.
var ErrCutOff = errors.New("handler cut off by the stop's drain timeout; message released unjudged: the broker counts the delivery, and the budget forgives at most requeueCount deliveries that no handler finished")

// ErrUnacceptableLimit is returned by Run when unacceptableMessageLimit
// rejections were counted (Brighter's MP_LIMIT_EXCEEDED): every rejection
// counts, not only Unacceptable ones (countUnacceptable).
var ErrUnacceptableLimit = errors.New("unacceptable message limit reached")

// handle dispatches one message and settles it. With acks.to not nil,
// acknowledgements are handed to the settle batcher; it reports whether it
// handed over one counted in acks.sent (one whose lease had lapsed).
//
// A message whose lease lapsed while it waited is not dispatched: it is
// dropped without a broker call (the broker redelivers it) and reported as
// EventLeaseLapsed. A dispatched message's lease tracking ends
// before it is settled. A message that arrives with its redelivery budget
// spent by handlers (its routing failed here, or more deliveries than stops
// and kills explain), or whose handler's rejection failed to route here, is
// routed without dispatch (exhausted). A message whose handler acknowledged
// it here and whose acknowledgement failed, or is still waiting in the
// settle batcher, is acknowledged without dispatch (retryAck).
//
// st is m's lease tracking (the zero leaseRef when none is tracked).
//
// The caller counts itself in r.handling while it holds the batch or run m
// came in (per batch, not per message: see run.handling).
func (r *run) handle(m *message.Message, st leaseRef, acks ackSink) (handed bool) {
	handed, _ = r.handleAt(m, st, acks, time.Time{})
	return handed
}

// handleAt is handle for a caller that has a fresh clock reading: last,
// what the previous message of its batch or run returned as next (zero:
// none). A keyless message takes it as its start (the lease check and the
// handler's start) instead of reading the clock; a keyed one reads the
// clock, as it may have waited in awaitAck. next is the reading taken
// when m's handler returned, when all that followed it was handing m's
// acknowledgement to the settle batcher without a broker call (a lock and
// an append), so that it is as fresh as a new reading for the next
// message; zero otherwise (a settle call, a batch sent, a release). Two
// clock readings a message were a quarter of the no-op Proactor's work
// per message outside the transport.
func (r *run) handleAt(m *message.Message, st leaseRef, acks ackSink, last time.Time) (handed bool, next time.Time) {
	p := r.p
	// A later delivery of a message whose handler acknowledged an earlier
	// delivery here, that acknowledgement still waiting in the settle
	// batcher, is acknowledged without a handler run (exhausted): it was
	// handled. Asked on arrival, before it waits for its key's pending
	// acknowledgement (its own, maybe), whose success ends the record.
	ackWaiting := acks.waiting(m)
	if !ackWaiting {
		// An earlier message of m's key whose batched acknowledgement is
		// not sent yet decides whether m is held back: wait for it.
		r.holds.awaitAck(m)
	}
	now := last
	if now.IsZero() || m.Header.PartitionKey != "" {
		now = r.clock() // one clock reading for the lease check and the handler's start
	}
	switch adm := r.leases.admit(m, st, now); adm.kind {
	case admitLapsed:
		r.holds.hold(m, now, 0) // it comes back: the later messages of its key wait for it
		p.emit(Event{Kind: EventLeaseLapsed, Message: m, DeliveryCount: m.Header.HandledCount})
		return
	case admitAbsorbed:
		return // an earlier delivery of it settles with its receipt
	case admitSuperseded:
		r.settleSuperseded(m, adm.refused, adm.again, adm.stale)
		return
	default:
		if adm.lapsed != nil {
			// It lapsed; a later delivery of it, absorbed while it waited,
			// is handled in its place.
			p.emit(Event{Kind: EventLeaseLapsed, Message: m, DeliveryCount: m.Header.HandledCount})
			m, st = adm.m, adm.ref
		}
	}
	if len(p.observers) > 0 { // an Event is built only for someone to tell
		p.emit(Event{Kind: EventReceived, Message: m, DeliveryCount: m.Header.HandledCount})
	}
	if m.Header.MessageType == message.MTUnacceptable {
		// Just admitted: its lease has not lapsed.
		if f, _, _ := r.leases.settling(m, st, now, false); f != nil {
			m.Receipt = f.Receipt
		}
		p.countUnacceptable(r)
		// The consumer names the field and the problem when it could not
		// decode the message; without that, the message itself arrived
		// typed MT_UNACCEPTABLE (say so, not a bare "failed to
		// parse").
		desc := "message type: the message arrived as MT_UNACCEPTABLE"
		if m.Undecodable != "" {
			desc = m.Undecodable
		} else if s, ok := m.Header.Bag.String(message.KeyRejectionMessage); ok && s != "" {
			desc = s
		}
		r.unsettled(m, time.Now(), r.reject(m, message.Rejection{Reason: message.ReasonUnacceptable, Description: desc}, Unacceptable, 0, false))
		return
	}
	if held, delay := r.holds.heldBack(m, now); held {
		r.holdBack(m, st, delay)
		return
	}
	if why := r.exhausted(m, ackWaiting); why != arrivalHandle {
		if why == arrivalAckRetry {
			r.retryAck(m, st, now, ackWaiting)
			return
		}
		// Final, as a handler's Reject is: the settle uses the freshest
		// receipt.
		f, late, until := r.leases.settling(m, st, now, true)
		if f != nil {
			m.Receipt = f.Receipt
		}
		end := r.rejectExhausted(m, why)
		ended := time.Now()
		r.unsettled(m, ended, end)
		r.settledFinal(m, Reject, end.gone, late, until, ended)
		return
	}
	start := now
	res := r.dispatch(m)
	settling := r.clock() // before any settle call: see unsettled
	took := settling.Sub(start)
	// The settle uses the freshest receipt of the message this run holds:
	// a later delivery received while the handler ran.
	cut := res.Outcome != Ack && r.handlerCtx.Err() != nil
	final := !cut && (res.Outcome == Ack || res.Outcome == Reject || res.Outcome == Unacceptable)
	f, late, until := r.leases.settling(m, st, settling, final)
	if f != nil {
		m.Receipt = f.Receipt
	}
	if cut {
		// Cut off by the stop: the handler's verdict is the cancellation's,
		// not the message's. Release it, uncounted and unjudged.
		p.emit(Event{Kind: EventDeferred, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Duration: took, Err: ErrCutOff})
		r.keep(m)
		return
	}
	switch res.Outcome {
	case Ack:
		if acks.to != nil {
			var sent *sync.WaitGroup
			if late && acks.sent != nil {
				// Its lease lapsed: the broker may be handing it out
				// again; the Reactor's next receive waits for it.
				sent = acks.sent
				sent.Add(1)
			}
			if acks.hand(r, ackItem{m: m, took: took, late: late, until: until, done: r.holds.ackPending(m), sent: sent}) {
				return sent != nil, time.Time{} // it sent a batch: a broker call
			}
			return sent != nil, settling
		}
		ctx, cancel := r.callAt(settling)
		err := p.consumer.Acknowledge(ctx, m)
		cancel()
		p.settled(err)
		if late {
			r.leases.settledLate(m.Header.MessageID, err, true)
		} else if err == nil && until > 0 {
			if at := time.Now(); r.leases.answeredLate(until, at) { // a clock reading only where a lease was tracked
				late = true
				r.leases.lateAnswered(m.Header.MessageID, at)
			}
		}
		if err != nil {
			r.holds.hold(m, settling, 0)
			r.p.here.ackFailed(m.Header.MessageID) // its next delivery here: retryAck
		} else {
			r.acknowledged(m, late) // as in the settler: a lapsed receipt included
		}
		p.emit(ackEvent(m, took, late, err))
	case Reject:
		p.countUnacceptable(r)
		end := r.rejectHandled(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: res.Reason}, Reject, took)
		r.unsettled(m, settling, end)
		r.settledFinal(m, Reject, end.gone, late, until, time.Now())
	case Unacceptable:
		p.countUnacceptable(r)
		end := r.rejectHandled(m, message.Rejection{Reason: message.ReasonUnacceptable, Description: res.Reason}, Unacceptable, took)
		r.unsettled(m, settling, end)
		r.settledFinal(m, Unacceptable, end.gone, late, until, time.Now())
	default: // Defer, and anything unknown: never lose the message.
		end := r.requeue(m, res, took)
		r.unsettled(m, settling, end)
		if late || r.leases.answeredLate(until, time.Now()) {
			r.staleSettle(m, Defer, end.requeued, end.delay)
		}
	}
	return false, time.Time{}
}

// settledFinal reports the end, at ended, of a final settle of m (a
// rejection: outcome o) that removed it from the source (gone) or not:
// begun after its lease lapsed (late), it ends the late record settling
// began; begun in time but ended at or after until (the lapse of the
// receipt it used, as settling returned it), it is reported as stale too
// and remembered (leases.lateAnswered), since the broker may have taken
// the source's removal after handing the message out again.
func (r *run) settledFinal(m *message.Message, o Outcome, gone, late bool, until time.Duration, ended time.Time) {
	switch {
	case late:
		r.leases.settledLate(m.Header.MessageID, nil, r.staleSettle(m, o, gone, 0))
	case gone && r.leases.answeredLate(until, ended):
		r.staleSettle(m, o, true, 0)
		r.leases.lateAnswered(m.Header.MessageID, ended)
	}
}

// dispatch calls the handler, turning a panic into a Defer with an error.
func (r *run) dispatch(m *message.Message) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = Result{Outcome: Defer, Err: fmt.Errorf("handler panicked: %v", v)}
		}
	}()
	return r.p.handler(r.handlerCtx, m)
}

// requeue applies the redelivery budget (R-4..R-7;
// docs/adr/0004-pump-semantics-and-nothing-lost.md): the count goes up by one
// (saturating, never wrapping); with a budget (RequeueCount != -1) reached by
// broker.BudgetSpent, the message is rejected with DeliveryError; otherwise it
// is requeued. A routed copy's budget is judged on this channel's own delivery
// attempt while its HandledCount stays the stamped evidence of the source
// channel (R-11, R-28; docs/adr/0001 §9). It reports what the settle left of m
// (settleEnd).
func (r *run) requeue(m *message.Message, res Result, took time.Duration) settleEnd {
	p := r.p
	spent, presented := broker.BudgetSpent(m), m.Header.HandledCount
	m.Header.HandledCount = message.SaturatingAdd(max(presented, 0), 1)
	budget := p.opts.RequeueCount
	runs := 1
	if budget != -1 {
		runs = p.here.ran(m.Header.MessageID, m.StoredID)
	}
	if budget != -1 && spent >= budget {
		p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Spent: spent, Outcome: Defer, Duration: took, Err: res.Err})
		p.countUnacceptable(r)
		desc := fmt.Sprintf("redelivery budget exhausted: delivery count %d reached requeueCount %d (delivered %s, handled %s in this process)", m.Header.HandledCount, budget, times(spent), times(runs))
		if m.HasRejectionMetadata() {
			desc = fmt.Sprintf("redelivery budget exhausted: delivery %d on this channel reached requeueCount %d (a routed copy; stamped count %d from %s; handled %s in this process)",
				spent, budget, presented, routedFrom(m), times(runs))
		}
		// The last failure's cause, so the dead-letter copy says why.
		if res.Reason != "" {
			desc += ": " + res.Reason
		} else if res.Err != nil {
			desc += ": " + res.Err.Error()
		}
		end := r.reject(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, Defer, took, false)
		r.budgetRouted(m, end)
		return end
	}
	delay := res.Delay
	if delay <= 0 {
		delay = p.opts.RequeueDelay
	}
	delay = broker.AppliedDelay(p.consumer, delay) // as the broker bounds it: what is logged
	ctx, cancel := r.call()
	err := p.consumer.Requeue(ctx, m, delay)
	cancel()
	p.settled(err)
	if err != nil {
		p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Err: err})
		return settleEnd{}
	}
	// A routed copy's count is the stamped evidence of the channel that
	// rejected it, which its requeue does not change: the event shows it
	// as received, and Spent shows the budget's own count (it
	// said delivery_count=4 budget=3 for a copy stamped 3 on its first
	// delivery here).
	count := m.Header.HandledCount
	if m.HasRejectionMetadata() {
		count = presented
	}
	p.emit(Event{Kind: EventDeferred, Message: m, DeliveryCount: count, Spent: spent, Outcome: Defer, Delay: delay, Duration: took, Err: res.Err})
	return settleEnd{delay: delay, requeued: true}
}

// routedFrom names the topic a routed copy was rejected from, for a
// rejection description.
func routedFrom(m *message.Message) string {
	if s, _ := m.Header.Bag.String(message.KeyOriginalTopic); s != "" {
		return s
	}
	return "an unnamed topic"
}

// rejectHandled routes m after its handler rejected it (Reject or
// Unacceptable): reject, and a message gone from the broker is forgotten by
// the record of messages handled here.
func (r *run) rejectHandled(m *message.Message, rej message.Rejection, o Outcome, took time.Duration) settleEnd {
	end := r.reject(m, rej, o, took, false)
	if end.gone {
		r.acknowledged(m, false)
	} else {
		r.p.here.rejectionFailed(m.Header.MessageID, rej, o)
	}
	return end
}

// acknowledged forgets m in the record of messages handled here: it is gone
// from the broker. A first delivery was never recorded (only deferrals are),
// so it costs no look-up. stale: the acknowledgement was reported as a
// stale settle (its receipt's lease had lapsed by the pump's clock when it
// began or was answered), so it may have removed nothing: the record then
// notes the handler's acknowledgement (handledHere.ackFailed), and the
// message's next delivery here is acknowledged without a handler run and
// without judging its budget (retryAck), whatever its delivery count.
func (r *run) acknowledged(m *message.Message, stale bool) {
	if m.Header.HandledCount > 0 || m.DeliveryAttempt > 1 {
		r.p.here.forget(m.Header.MessageID, m.StoredID)
	}
	if stale {
		r.p.here.ackFailed(m.Header.MessageID)
	}
}

// reject routes m; took is how long its handler ran (0 when none ran);
// retry marks a routing retried after this process's earlier routing of m
// failed (Event.Retry). It reports what it left of m: gone when routed and
// acknowledged, or acknowledged with no destination; else still on the
// broker (released after a failed routing, with its delay, or a settle call
// failed).
func (r *run) reject(m *message.Message, rej message.Rejection, o Outcome, took time.Duration, retry bool) settleEnd {
	// The Router bounds each of its broker calls by the call timeout.
	res := r.p.consumer.Reject(broker.WithCallTimeout(r.settleCtx, r.p.opts.CallTimeout), m, rej)
	r.p.settled(res.Err)
	r.p.emit(Event{Kind: EventRejected, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: o,
		Reason: rej.Reason, Description: rej.Description, Route: res.Route, Destination: res.Destination, Err: res.Err, Duration: took,
		Delay: res.ReleaseDelay, Permanent: res.Permanent, Retry: retry})
	return settleEnd{gone: res.Err == nil && !res.Released, delay: res.ReleaseDelay}
}

// countUnacceptable implements Brighter's unacceptable-message window
// (docs/wire-format.md#pump: the count starts again once its first message
// is older than the window) and stops the pump at the limit. Despite its
// name it counts every rejection, as .NET Brighter's pump does: it is
// called for a handler's Reject and Unacceptable, an MT_UNACCEPTABLE
// message and a spent budget.
func (p *Pump) countUnacceptable(r *run) {
	if p.opts.UnacceptableMessageLimit <= 0 {
		return
	}
	p.unaccMu.Lock()
	now := time.Now()
	if p.unaccCount == 0 || (p.opts.UnacceptableMessageLimitWindow > 0 && now.Sub(p.unaccStart) > p.opts.UnacceptableMessageLimitWindow) {
		p.unaccCount, p.unaccStart = 0, now
	}
	p.unaccCount++
	n := p.unaccCount
	p.unaccMu.Unlock()
	if n >= p.opts.UnacceptableMessageLimit && p.limitHit.CompareAndSwap(false, true) {
		r.halt(fmt.Errorf("subscription %s: %w: %d unacceptable messages (unacceptableMessageLimit %d)", p.opts.Subscription, ErrUnacceptableLimit, n, p.opts.UnacceptableMessageLimit))
	}
}
