package pump

import (
	"context"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Outcome is what a handler decided about a message.
type Outcome int

// The handler outcomes (docs/wire-format.md#pump,
// ARCHITECTURE.md#a-messages-path-through-the-pump).
const (
	// Ack: handled; the message is acknowledged and removed.
	Ack Outcome = iota
	// Defer: try again later; the pump counts the delivery against the
	// redelivery budget and requeues (or rejects when the budget is spent,
	//
	Defer
	// Reject: the message cannot be delivered; rejected with DeliveryError
	// and routed to the dead-letter queue.
	Reject
	// Unacceptable: the message is invalid; rejected with Unacceptable and
	// routed to the invalid-message channel (or the dead-letter queue).
	Unacceptable
)

// String returns the outcome's lower-case name: ack, defer, reject,
// unacceptable.
func (o Outcome) String() string {
	switch o {
	case Ack:
		return "ack"
	case Defer:
		return "defer"
	case Reject:
		return "reject"
	case Unacceptable:
		return "unacceptable"
	}
	return "unknown"
}

// ParseOutcome reads "ack", "defer", "reject" or "unacceptable".
func ParseOutcome(s string) (Outcome, bool) {
	for _, o := range [...]Outcome{Ack, Defer, Reject, Unacceptable} {
		if o.String() == s {
			return o, true
		}
	}
	return Ack, false
}

// Result is a handler's answer.
type Result struct {
	// Outcome is the decision.
	Outcome Outcome
	// Delay is the requeue delay asked for with Defer; 0 or less means the
	// subscription's requeueDelay.
	Delay time.Duration
	// Reason is the handler's explanation; for Reject and Unacceptable it
	// becomes the rejectionMessage of the routed copy.
	Reason string
	// Err is a handler failure (an error, a crash, a timeout). With Defer it
	// is logged at Error; it never loses the message.
	Err error
}

// Handler handles one message. ctx is cancelled when the drain timeout of a
// shutdown runs out. A Handler must be safe for concurrent use; it should
// not retain m after it returns.
type Handler func(ctx context.Context, m *message.Message) Result

// Middleware wraps a Handler (logging, timing, tracing), as Watermill's
// router middleware does.
type Middleware func(Handler) Handler
