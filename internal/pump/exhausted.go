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
	// arrivalSpentByHandlers: its count is past the budget by more than the
	// deliveries the budget forgives to stops and kills (a stamped count that
	// reached the budget, or more than twice the budget's deliveries on this
	// channel, whether stops, kills or handlers spent them: the broker does
	// not say); route it without a handler run.
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
//     more than the b deliveries forgiven to stops and kills (so a message
//     whose handler every stop cuts off is routed too, after 2 x b).
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
// counted in a stamped count (the count its sender wrote, taken as
// deferrals by handlers before it reached this channel), and the broker's
// delivery attempts before this one less b of them (each stop or kill that
// caught the message in a buffer or a handler may have wasted one: the
// allowance forgives up to b deliveries that no handler finished). b is the
// budget, at least 1.
func spentByHandlers(m *message.Message, b int) int {
	before := broker.BudgetSpent(m) - 1
	attemptsBefore := max(m.DeliveryAttempt, 1) - 1
	return before - min(attemptsBefore, b)
}

// spentByHandlersReason is the rejection message of m, routed on arrival
// because spentByHandlers reached the budget (requeueCount budget): it says
// which deliveries were counted and which forgiven, as the broker and the
// stamp counted them, and how many handler runs this process made of it.
// A stop or a kill forgives no more than b deliveries, so a message whose
// handler is cut off by every stop reaches the dead-letter destination
// after 2 x b deliveries: the text says so rather than blame handlers.
func spentByHandlersReason(m *message.Message, budget, runs int) string {
	b := max(budget, 1)
	delivered := broker.BudgetSpent(m)
	attemptsBefore := max(m.DeliveryAttempt, 1) - 1
	limit := fmt.Sprintf("requeueCount %d", budget)
	if budget < 1 {
		limit = fmt.Sprintf("requeueCount %d (a budget of %d)", budget, b)
	}
	// arithmetic says of the deliveries before this one how many at most
	// the allowance forgives, and that the rest are counted against the
	// budget as handlers' deferrals would be, though brighter cannot tell
	// them from deliveries no handler ran (a message caught by every stop
	// or crash ends here with none).
	arithmetic := fmt.Sprintf("of the %d deliveries before this one, at most %d are forgiven as deliveries no handler finished (stops and kills of consumers, lapsed leases); the other %d count against %s as handlers' deferrals would, though no handler may have run it (brighter cannot tell them apart)",
		delivered-1, b, delivered-1-b, limit)
	if m.HasRejectionMetadata() {
		return fmt.Sprintf("redelivery budget exhausted: a routed copy (stamped count %d from %s), delivered %s on this channel, handled %s in this process; %s; routed without a handler run",
			m.Header.HandledCount, routedFrom(m), times(delivered), times(runs), arithmetic)
	}
	stamped := max(m.Header.HandledCount-attemptsBefore, 0)
	if stamped == 0 {
		return fmt.Sprintf("redelivery budget exhausted: delivered %s on this channel, handled %s in this process; %s; routed without a handler run",
			times(delivered), times(runs), arithmetic)
	}
	counted := fmt.Sprintf("its stamped count %d (the handled-count its sender wrote, taken as deferrals by handlers before it reached this channel)", stamped)
	switch extra := attemptsBefore - min(attemptsBefore, b); {
	case attemptsBefore == 0:
	case extra == 0:
		counted += fmt.Sprintf(", the %d deliveries before this one on this channel forgiven (up to %d that no handler finished are: stops and kills of consumers, lapsed leases),", attemptsBefore, b)
	default:
		counted += fmt.Sprintf(" plus %d of the %d deliveries before this one on this channel (up to %d that no handler finished are forgiven: stops and kills of consumers, lapsed leases)", extra, attemptsBefore, b)
	}
	return fmt.Sprintf("redelivery budget exhausted: %s reached %s; delivered %s on this channel, handled %s in this process; routed without a handler run",
		counted, limit, times(attemptsBefore+1), times(runs))
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
		desc = fmt.Sprintf("redelivery budget exhausted: delivery count %d reached requeueCount %d (delivered %s, handled %s in this process); routing retried after it failed; not handled again",
			judged, budget, times(delivered), times(runs))
	default:
		p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Spent: delivered, Outcome: Defer})
		desc = spentByHandlersReason(m, budget, runs)
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
