package pump

import (
	"fmt"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// arrival is what the redelivery budget makes of a delivery before its
// handler runs.
type arrival int

const (
	// arrivalHandle: hand the message to its handler. Its budget has room,
	// or it reached the budget with no evidence that handlers spent it
	// (deliveries that stops and kills may have wasted): the handler has
	// its chance, and a Defer then routes the message (requeue).
	arrivalHandle arrival = iota
	// arrivalRoutingRetry: this process judged the message exhausted and
	// its routing failed; route it again without a handler run.
	arrivalRoutingRetry
	// arrivalRejectionRetry: this process's handler rejected the message
	// (Reject or Unacceptable) and its routing failed; route it again with
	// the same rejection, without a handler run.
	arrivalRejectionRetry
	// arrivalSpentByHandlers: its count is past the budget by more than
	// stops and kills can explain (a stamped count that reached the budget,
	// or more than twice the budget's deliveries on this channel); route it
	// without a handler run.
	arrivalSpentByHandlers
	// arrivalAckRetry: this process's handler acknowledged the message and
	// the acknowledgement failed, or was still waiting in the settle
	// batcher when this delivery arrived (ackWaiting); acknowledge this
	// delivery without a handler run (retryAck).
	arrivalAckRetry
)

// exhausted judges m on arrival (R-4, AC-3; docs/adr/0001 §10). A handler's
// verdict on an earlier delivery here whose settle failed is carried out
// first, whatever the count and the budget: an acknowledgement
// (arrivalAckRetry: the handler said Ack, so the budget has no say), then a
// rejection (arrivalRejectionRetry). ackWaiting: the handler acknowledged
// an earlier delivery here and that acknowledgement was still waiting in
// the settle batcher when m arrived (ackSink.waiting); m is acknowledged as
// after a failed one. Otherwise a delivery whose deliveries
// before it reached the budget (broker.BudgetSpent less this one, at least
// max(requeueCount, 1)) is routed without a handler run only on evidence
// that handlers spent the budget:
//
//   - this process routed it at the budget and the routing failed
//     (handledHere): the handler had every run the budget allows, and a
//     dead-letter destination that is down must not make it run again;
//   - or spentByHandlers reaches the budget: the count is past the budget by
//     more than stops and kills can explain.
//
// Anything else reached the budget through deliveries no handler may have
// seen (a graceful stop's releases, a kill, a lapsed lease): the handler
// runs, and a Defer then routes it at once.
func (r *run) exhausted(m *message.Message, ackWaiting bool) arrival {
	if ackWaiting {
		return arrivalAckRetry // its acknowledgement waits in the settle batcher
	}
	if r.p.here.ackRetry(m.Header.MessageID) {
		return arrivalAckRetry
	}
	if r.p.here.rejection(m.Header.MessageID) != nil {
		return arrivalRejectionRetry
	}
	budget := r.p.opts.RequeueCount
	if budget == -1 {
		return arrivalHandle
	}
	b := max(budget, 1)
	spent := broker.BudgetSpent(m)
	if spent-1 < b {
		return arrivalHandle
	}
	if _, judged := r.p.here.lookup(m.Header.MessageID, ""); judged > 0 {
		return arrivalRoutingRetry
	}
	if spentByHandlers(m, b) >= b {
		return arrivalSpentByHandlers
	}
	return arrivalHandle
}

// spentByHandlers is how many of the deliveries before m's (broker.BudgetSpent
// less one) are beyond what stops and kills can explain: every delivery
// counted in a stamped count (the publisher counted a handler's deferral),
// and the broker's delivery attempts before this one less b of them (each
// stop or kill that caught the message in a buffer or a handler may have
// wasted one). b is the budget, at least 1.
func spentByHandlers(m *message.Message, b int) int {
	before := broker.BudgetSpent(m) - 1
	attemptsBefore := max(m.DeliveryAttempt, 1) - 1
	return before - min(attemptsBefore, b)
}

// rejectExhausted routes a message that arrived with its budget spent
// (exhausted) without dispatching it: DeliveryError to the dead-letter
// destination, or acknowledged with a Warning when there is none.
// It is not counted again towards unacceptableMessageLimit (its exhausting
// deferral was). A routing failure releases it with the Router's back-off,
// as any rejection. It reports what the settle left of m (reject).
//
// A routing retry (why is arrivalRoutingRetry) carries the count the budget
// judged when the first routing failed, emits no second budget-exhausted
// event (the message was judged once) and marks its rejected event Retry.
func (r *run) rejectExhausted(m *message.Message, why arrival) settleEnd {
	p := r.p
	if why == arrivalRejectionRetry {
		return r.retryRejection(m)
	}
	budget := p.opts.RequeueCount
	id := m.Header.MessageID
	runs, judged := p.here.lookup(id, m.StoredID)
	delivered := broker.BudgetSpent(m)
	var desc string
	switch {
	case why == arrivalRoutingRetry:
		if !m.HasRejectionMetadata() {
			// The copy carries the count the budget judged, not the count
			// the deliveries of the failed routings raised it to.
			m.Header.HandledCount = judged
		}
		desc = fmt.Sprintf("redelivery budget exhausted: delivery count %d reached requeueCount %d (delivered %s, handled %s here); routing retried after it failed; not handled again",
			judged, budget, times(delivered), times(runs))
	case m.HasRejectionMetadata():
		p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Spent: delivered, Outcome: Defer})
		desc = fmt.Sprintf("redelivery budget exhausted: delivery %d on this channel, after requeueCount %d, more than stops and kills of consumers explain (a routed copy; stamped count %d from %s; handled %s here); not handled again",
			delivered, budget, m.Header.HandledCount, routedFrom(m), times(runs))
	default:
		p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Spent: delivered, Outcome: Defer})
		desc = fmt.Sprintf("redelivery budget exhausted: delivery count %d had reached requeueCount %d before this delivery, by more than stops and kills of consumers explain (delivered %s, handled %s here); not handled again",
			m.Header.HandledCount, budget, times(delivered), times(runs))
	}
	end := r.reject(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, Defer, 0, why == arrivalRoutingRetry)
	r.budgetRouted(m, end)
	return end
}

// budgetRouted records what a rejection by the budget left of m: gone, it
// is forgotten; still on the broker (its routing failed and it was
// released), its next delivery here retries the routing without a handler
// run, at the count the budget judged.
func (r *run) budgetRouted(m *message.Message, end settleEnd) {
	if end.gone {
		r.p.here.forget(m.Header.MessageID, m.StoredID)
		return
	}
	_, judged := r.p.here.lookup(m.Header.MessageID, "")
	if judged == 0 {
		judged = m.Header.HandledCount
	}
	r.p.here.routingFailed(m.Header.MessageID, judged)
}

// times says n as a count of times: "1 time", "3 times".
func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}

// retryRejection routes again, without a handler run, a message whose
// handler rejected it here and whose routing failed: the same reason and
// description, the rejected event marked Retry. A handler's rejection is
// final, as a budget's is: a dead-letter destination that is down must not
// make a handler run again (AC-3). A record lost with a restart costs one
// more handler run.
func (r *run) retryRejection(m *message.Message) settleEnd {
	hr := r.p.here.rejection(m.Header.MessageID)
	if hr == nil { // forgotten since handle looked (the record was full)
		hr = &handlerRejection{outcome: Reject, rejection: message.Rejection{Reason: message.ReasonDeliveryError,
			Description: "rejected by its handler here; routing retried after it failed; not handled again"}}
	}
	end := r.reject(m, hr.rejection, hr.outcome, 0, true)
	if end.gone {
		r.p.here.forget(m.Header.MessageID, m.StoredID)
	}
	return end
}
