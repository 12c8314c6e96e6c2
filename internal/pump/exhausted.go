package pump

import (
	"fmt"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// exhausted reports whether m arrived with its redelivery budget already
// spent: the budget is enforced (RequeueCount != -1) and the deliveries
// before this one (broker.BudgetSpent less this delivery) reached it. The
// handler already had every delivery the budget allows; it must not see m
// again, whatever became of the rejection that should have followed (a
// dead-letter destination that was down, a process killed between the
// handler and the routing, a lease that lapsed while the handler ran).
// Issue 28, docs/adr/0001 §10. A budget below 1 allows one delivery.
func (r *run) exhausted(m *message.Message) bool {
	budget := r.p.opts.RequeueCount
	return budget != -1 && broker.BudgetSpent(m)-1 >= max(budget, 1)
}

// rejectExhausted routes a message that arrived with its budget spent
// (exhausted) without dispatching it: DeliveryError to the dead-letter
// destination, or acknowledged with a Warning when there is none.
// Its count is not raised (no handler ran) and it is not counted again
// towards unacceptableMessageLimit (its exhausting deferral was). A routing
// failure releases it with the Router's back-off, as any rejection. It
// reports what the settle left of m (reject).
func (r *run) rejectExhausted(m *message.Message) settleEnd {
	p := r.p
	budget := p.opts.RequeueCount
	p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer})
	desc := fmt.Sprintf("redelivery budget exhausted: delivery count %d had reached requeueCount %d before this delivery; not handled again", m.Header.HandledCount, budget)
	if m.HasRejectionMetadata() {
		desc = fmt.Sprintf("redelivery budget exhausted: delivery %d on this channel, after requeueCount %d (a routed copy; stamped count %d from %s); not handled again",
			broker.BudgetSpent(m), budget, m.Header.HandledCount, routedFrom(m))
	}
	return r.reject(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, Defer, 0)
}
