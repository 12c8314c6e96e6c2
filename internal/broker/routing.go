package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Settler is what a transport offers the Router to settle the original of a
// rejected message, identified by its Receipt.
type Settler interface {
	// Acknowledge removes the message from the broker.
	Acknowledge(ctx context.Context, m *message.Message) error
	// Release makes the message visible again after delay (0 = at once),
	// with the transport's own requeue call (SQS ChangeMessageVisibility,
	// Pub/Sub ModifyAckDeadline or Nack, RocketMQ ChangeInvisibleDuration),
	// capping delay at what the broker allows.
	Release(ctx context.Context, m *message.Message, delay time.Duration) error
}

// Publisher sends a routed copy to a rejection destination (a queue or topic
// name of the transport) in the transport's wire format.
type Publisher interface {
	Publish(ctx context.Context, destination string, m *message.Message) error
}

// Route names where a rejected message went.
type Route string

// The rejection routes (docs/wire-format.md#rejection).
const (
	// RouteDeadLetter is the dead-letter queue (deadLetterRoutingKey).
	RouteDeadLetter Route = "dead-letter"
	// RouteInvalidMessage is the invalid-message channel
	// (invalidMessageRoutingKey).
	RouteInvalidMessage Route = "invalid-message"
	// RouteNone means no destination was configured: the message was
	// acknowledged and discarded with a Warning.
	RouteNone Route = "none"
)

// RejectResult reports what Reject did. The message is always settled: it
// was routed and acknowledged, released for redelivery, or acknowledged
// without a destination.
type RejectResult struct {
	// Route is the route chosen by the rejection reason.
	Route Route
	// Destination is the queue or topic the copy was published to ("" for
	// RouteNone).
	Destination string
	// Released is true when the publish failed and the original was released
	// for redelivery instead of being acknowledged.
	Released bool
	// ReleaseDelay is the delay the original was released with when
	// Released (RoutingFailureDelay of its delivery attempt).
	ReleaseDelay time.Duration
	// Permanent is true when the publish failed with ErrPermanent (after
	// one try with a shortened rejection message for ErrTooLarge), or
	// when the Router refused to route the message round a cycle
	// (ErrRejectionCycle, nothing published): the message was released
	// with the longest delay.
	Permanent bool
	// Err is the failure already logged at Error (publish, release or
	// acknowledge), nil when everything succeeded.
	Err error
}

// Stable log message texts of the Router (tests match them).
const (
	LogRejected           = "message rejected"
	LogFallbackDeadLetter = "unacceptable message has no invalid-message channel; falling back to dead-letter queue"
	LogDiscarded          = "rejected message discarded: no dead-letter or invalid-message destination"
	LogRoutingFailed      = "rejection routing failed; message released for redelivery"
	LogRoutingPermanent   = "rejection routing can never succeed as it is; message released for redelivery after the longest delay"
	LogRoutingShortened   = "routed copy too large; trying once with the rejection message shortened"
	LogReleaseFailed      = "rejection routing failed and release failed; message will reappear when its lease lapses"
	LogAckAfterRouteFail  = "rejected message routed but acknowledge failed; the routed copy may be duplicated"
	LogDiscardAckFailed   = "rejected message could not be acknowledged; it will be redelivered"
)

// The release delays of a failed rejection routing (without
// them a failing dead-letter destination costs hundreds of redeliveries a
// second).
const (
	// RoutingRetryBase is the release delay after the first failed routing
	// of a message.
	RoutingRetryBase = time.Second
	// RoutingRetryMax is the longest release delay, unless the transport
	// caps it lower (Router.MaxReleaseDelay).
	RoutingRetryMax = 10 * time.Minute
)

// RoutingFailureDelay is how long a message whose rejection routing failed
// is released for before the broker redelivers it: RoutingRetryBase doubled
// for each delivery attempt after the first (the broker's own delivery
// count, so it needs no local state and holds across replicas and restarts;
// ARCHITECTURE.md#scale), at most limit (RoutingRetryMax when limit <= 0). An
// unknown attempt (0, Pub/Sub without a dead-letter policy) counts as the
// first. With the 1 s base a message costs about 1, 2, 4, ... s and then one
// routing attempt per limit: a few broker calls a minute, not hundreds a
// second.
func RoutingFailureDelay(attempt int, limit time.Duration) time.Duration {
	if limit <= 0 {
		limit = RoutingRetryMax
	}
	d := RoutingRetryBase
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// ErrPermanent is wrapped by a Publisher's error when the publish can never
// succeed as it is: the broker refused the request itself (too large, an
// invalid destination name), not its own state. The Router does not retry
// such a routing promptly: it releases the message with the longest delay
// and reports it.
var ErrPermanent = errors.New("the broker refused the request as it is")

// ErrTooLarge is wrapped by a Publisher's error when the routed copy is over
// the broker's size limit (it wraps ErrPermanent). The Router tries once
// more with the rejection message shortened to ShortRejectionMessage bytes.
var ErrTooLarge = fmt.Errorf("message too large: %w", ErrPermanent)

// ShortRejectionMessage is the length in bytes the Router cuts a
// rejectionMessage to when the routed copy was too large.
const ShortRejectionMessage = 64

// Router is the one rejection-routing implementation every transport uses
// (R-15..R-19, docs/wire-format.md#rejection). The zero value is not usable:
// set Publisher and Settler. Destinations are the subscription's
// deadLetterRoutingKey and invalidMessageRoutingKey.
type Router struct {
	// DeadLetter is the dead-letter destination, "" for none.
	DeadLetter string
	// Invalid is the invalid-message destination, "" for none.
	Invalid string
	// Publisher sends routed copies.
	Publisher Publisher
	// Settler acknowledges or releases the original.
	Settler Settler
	// Logger receives the Router's records; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock for rejectionTimestamp; nil means time.Now.
	Now func() time.Time
	// MaxReleaseDelay caps the release delay of a failed routing at what
	// the transport's requeue call allows; 0 means RoutingRetryMax.
	MaxReleaseDelay time.Duration
	// Source is the channel the consumer reads, named as DeadLetter and
	// Invalid are: the SQS queue (after '.' became '_'), the Pub/Sub
	// topic the subscription is attached to, the RocketMQ topic, the
	// memory queue. With it the Router tells a redriven copy from a cycle
	// (redriven); "" holds every message whose destination is already on
	// its rejectionPath.
	Source string
	// Resolve returns the channel a name of Source, DeadLetter, Invalid or
	// a rejectionPath entry names on the broker, for a transport whose
	// Router holds names with more than one spelling of one channel
	// (Pub/Sub: a topic id and its full name); nil compares names as
	// written (SQS queue names are already resolved).
	Resolve func(name string) string
}

// MaxRedrives is how many times in a row the Router routes a redriven copy
// back to the destination it was moved from (redriven): a copy moved back
// a fourth time from the same destination is held as a cycle. Within it
// an operator may redrive a message, see it fail and redrive it again;
// past it a cycle the Router cannot tell from redrives (a destination
// whose own native dead-letter policy moves messages back to the source)
// ends as every cycle does (docs/adr/0004 decision 12).
const MaxRedrives = 3

// Select returns the route and destination for a reason (docs/wire-format.md#rejection):
// Unacceptable goes to the invalid-message destination, falling back to the
// dead-letter destination; every other reason goes to the dead-letter
// destination; with no destination the route is RouteNone. fellBack reports
// the fallback.
func (r *Router) Select(reason message.RejectionReason) (route Route, destination string, fellBack bool) {
	if reason == message.ReasonUnacceptable {
		if r.Invalid != "" {
			return RouteInvalidMessage, r.Invalid, false
		}
		if r.DeadLetter != "" {
			return RouteDeadLetter, r.DeadLetter, true
		}
		return RouteNone, "", false
	}
	if r.DeadLetter != "" {
		return RouteDeadLetter, r.DeadLetter, false
	}
	return RouteNone, "", false
}

// Reject routes m by rej.Reason, publishing the stamped copy BEFORE
// acknowledging the original. With no destination it acknowledges and
// logs a Warning naming the message id and reason. When the publish
// fails it does not acknowledge: it releases the original with the receipt m
// still holds, logs an Error naming the message id and reason, and reports
// the message settled; the release is delayed by
// RoutingFailureDelay of the message's delivery attempt, so a destination
// that keeps failing costs a few calls a minute per message. A message a
// rejection has already routed to the same destination (message.RoutedTo:
// the destinations form a cycle) is not published again: it is released
// with the longest delay and reported Permanent, with ErrRejectionCycle
// and an Error (LogRoutingCycle), unless it is a redriven copy (redriven),
// which is routed to the destination again, as the first time, with an
// Info (LogRedriven). When the acknowledge fails after a successful
// publish it logs an Error and reports settled. No error or panic escapes.
func (r *Router) Reject(ctx context.Context, m *message.Message, rej message.Rejection) (res RejectResult) {
	log := r.Logger
	if log == nil {
		log = slog.Default()
	}
	id := m.Header.MessageID
	defer func() {
		if p := recover(); p != nil {
			res.Err = fmt.Errorf("panic in rejection routing: %v", p)
			log.ErrorContext(ctx, LogRoutingFailed, "message_id", id, "reason", rej.Reason.String(), "error", res.Err)
		}
	}()
	route, dest, fellBack := r.Select(rej.Reason)
	res.Route, res.Destination = route, dest
	if route == RouteNone {
		log.WarnContext(ctx, LogDiscarded, "message_id", id, "reason", rej.Reason.String(), "description", rej.Description)
		if err := r.acknowledge(ctx, m); err != nil {
			res.Err = fmt.Errorf("acknowledge rejected message %s: %w", id, err)
			log.ErrorContext(ctx, LogDiscardAckFailed, "message_id", id, "reason", rej.Reason.String(), "error", err)
		}
		return res
	}
	if fellBack {
		log.InfoContext(ctx, LogFallbackDeadLetter, "message_id", id, "destination", dest)
	}
	stamped := m
	if message.RoutedTo(m, dest) {
		if !r.redriven(m, dest) {
			return r.refuseCycle(ctx, log, m, rej, res)
		}
		log.InfoContext(ctx, LogRedriven, "message_id", id, "route", string(route), "destination", dest, "rejection_path", message.RejectionPath(m))
		stamped = r.redrivenFrom(m, dest)
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	// The rejection message is stored on the broker and shown by dlq peek:
	// it passes the redaction rule before anything cuts it.
	rej.Description = redact.Text(rej.Description)
	routed := message.Stamp(stamped, dest, rej, now())
	err := r.publish(ctx, dest, routed)
	if errors.Is(err, ErrTooLarge) && len(rej.Description) > ShortRejectionMessage {
		log.WarnContext(ctx, LogRoutingShortened, "message_id", id, "destination", dest, "error", err)
		short := rej
		short.Description = message.TruncateBytes(rej.Description, ShortRejectionMessage)
		err = r.publish(ctx, dest, message.Stamp(stamped, dest, short, now()))
	}
	if err != nil {
		res.Released = true
		res.ReleaseDelay = RoutingFailureDelay(m.DeliveryAttempt, r.MaxReleaseDelay)
		if errors.Is(err, ErrPermanent) {
			res.Permanent = true
			res.ReleaseDelay = RoutingFailureDelay(math.MaxInt, r.MaxReleaseDelay)
		}
		res.Err = fmt.Errorf("publish message %s to %s: %w", id, dest, err)
		if rerr := r.release(ctx, m, res.ReleaseDelay); rerr != nil {
			res.Err = errors.Join(res.Err, fmt.Errorf("release message %s: %w", id, rerr))
			log.ErrorContext(ctx, LogReleaseFailed, "message_id", id, "reason", rej.Reason.String(), "route", string(route), "destination", dest, "error", res.Err)
			return res
		}
		msg := LogRoutingFailed
		if res.Permanent {
			msg = LogRoutingPermanent
		}
		log.ErrorContext(ctx, msg, "message_id", id, "reason", rej.Reason.String(), "route", string(route), "destination", dest, "delivery_attempt", m.DeliveryAttempt, "release_delay", res.ReleaseDelay, "error", err)
		return res
	}
	if err := r.acknowledge(ctx, m); err != nil {
		res.Err = fmt.Errorf("acknowledge message %s after routing to %s: %w", id, dest, err)
		log.ErrorContext(ctx, LogAckAfterRouteFail, "message_id", id, "reason", rej.Reason.String(), "route", string(route), "destination", dest, "error", err)
		return res
	}
	log.InfoContext(ctx, LogRejected, "message_id", id, "reason", rej.Reason.String(), "route", string(route), "destination", dest, "delivery_count", m.Header.HandledCount)
	return res
}

// publish calls the Publisher, turning a panic into an error so that a
// panicking publisher is a failed publish: the original is released
// not left leased.
func (r *Router) publish(ctx context.Context, dest string, m *message.Message) (err error) {
	ctx, cancel := CallContext(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("publisher panicked: %v", p)
		}
	}()
	return r.Publisher.Publish(ctx, dest, m)
}

// acknowledge and release make one Settler call each, within the call
// timeout ctx carries (CallContext).
func (r *Router) acknowledge(ctx context.Context, m *message.Message) error {
	ctx, cancel := CallContext(ctx)
	defer cancel()
	return r.Settler.Acknowledge(ctx, m)
}

func (r *Router) release(ctx context.Context, m *message.Message, delay time.Duration) error {
	ctx, cancel := CallContext(ctx)
	defer cancel()
	return r.Settler.Release(ctx, m, delay)
}
