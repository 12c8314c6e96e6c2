package pump

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// EventKind says what happened.
type EventKind int

// The pump's events.
const (
	// EventReceived: a message was received; DeliveryCount is its presented
	// count.
	EventReceived EventKind = iota
	// EventAcknowledged: the handler acked and the message was removed.
	// Marked Retry, no handler ran for this delivery: the handler
	// acknowledged an earlier delivery here whose acknowledgement failed
	// or was still waiting for its answer (AckWaiting), and this delivery
	// was acknowledged in its place.
	EventAcknowledged
	// EventDeferred: the message was requeued with Delay.
	EventDeferred
	// EventBudgetExhausted: the redelivery budget judged the message
	// exhausted, once per message: a Defer reached the budget, or a delivery
	// arrived with its count past the budget by more than the deliveries it
	// forgives to stops and kills. A DeliveryError rejection follows. A retried routing
	// of a message judged before emits none (Event.Retry).
	EventBudgetExhausted
	// EventRejected: the message was rejected; Reason, Route and Destination
	// say how; Err is set when routing failed and it was released,
	// Delay then being the release delay.
	EventRejected
	// EventSettleFailed: an acknowledge or requeue failed; the message stays
	// on the broker and will be redelivered.
	EventSettleFailed
	// EventChannelFailure: Receive failed; the pump backs off.
	EventChannelFailure
	// EventStarted: the pump started.
	EventStarted
	// EventStopped: the pump stopped; Err says why when it was not asked to.
	EventStopped
	// EventStalled: the channel's broker calls have failed for StallAfter
	// with no success between (no successful broker call for that long);
	// Since is when the failures began, Err the last one. Emitted once per
	// failure episode.
	EventStalled
	// EventChannelRecovered: a broker call succeeded after Failures failed
	// in a row since Since.
	EventChannelRecovered
	// EventLeaseExtended: a held message's lease was extended; Delay is the
	// new lease from the call, Since when the call was sent, Duration how
	// long it took to be answered and Left how much of the message's lease
	// the pump's clock had left when it was sent.
	EventLeaseExtended
	// EventLeaseExtendFailed: extending a held message's lease failed (Err;
	// Since, Duration and Left as for EventLeaseExtended);
	// the pump tries again while the lease lasts, and a message whose lease
	// lapses before dispatch is dropped for the broker to redeliver.
	EventLeaseExtendFailed
	// EventLeaseLapsed: a received message's lease ran out before it was
	// dispatched; it was dropped without a handler or a broker call (the
	// broker redelivers it).
	EventLeaseLapsed
	// EventLeaseCapped: a held message reached maxLeaseExtension; its lease
	// is extended no more and the broker will redeliver it when it lapses.
	// Delay is how long it had been held.
	EventLeaseCapped
	// EventStaleSettle: a settle of the message used a stale receipt,
	// and the broker answered it with success. Either:
	//   - Err is ErrLapsedReceipt: the settle (Outcome) was sent with a
	//     receipt whose lease had lapsed by the pump's lease clock, the
	//     first delivery's or a later one's. An acknowledgement is reported
	//     so instead of EventAcknowledged (EndsFlight; Duration is the
	//     handler's), never counted as acknowledged; a requeue or a
	//     rejection's acknowledgement is reported so after its own
	//     EventDeferred or EventRejected (Delay: the requeue's delay);
	//   - Err wraps ErrSupersededReceipt: the settle was made after its
	//     lease lapsed, and this run had received the message again before
	//     that settle ended; the later delivery, Message, was acknowledged
	//     without the handler. Err also holds the later acknowledgement's
	//     failure when it failed (the message then stays on the broker).
	// A settle the broker refused as stale is EventSettleFailed with an
	// Err wrapping broker.ErrStaleReceipt.
	EventStaleSettle
	// EventReleased: a message received but never handed to its handler
	// (waiting in the receive-ahead buffer or a received batch, or taken by
	// the receive in flight) was released to the broker at a stop, visible
	// again at once: no handler ran, no count was stamped and no budget
	// applied, but the broker counts the delivery (DeliveryCount is the
	// presented count). One per message, after its release call succeeded
	// (a failed one is EventSettleFailed); the stop's EventStopped lists
	// their ids (Event.Released).
	EventReleased
)

var eventNames = [...]string{"received", "acknowledged", "deferred", "budget-exhausted", "rejected", "settle-failed", "channel-failure", "started", "stopped", "stalled", "channel-recovered",
	"lease-extended", "lease-extend-failed", "lease-lapsed", "lease-capped", "stale-settle", "released"}

// String returns the event's kebab-case name, e.g. "budget-exhausted".
func (k EventKind) String() string {
	if int(k) >= 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one thing the pump did. Fields not relevant to a kind are zero.
type Event struct {
	Kind         EventKind
	Time         time.Time
	Subscription string
	// Message is the message concerned (nil for pump-level events). Observers
	// must not modify it. They may read its header (but for HandledCount,
	// which the pump increments on a Defer: use DeliveryCount), bag and body
	// after the call: neither the pump nor a transport modifies those once
	// the message has been received.
	Message *message.Message
	// DeliveryCount is the message's count: presented on receive, incremented
	// by a Defer.
	DeliveryCount int
	// Budget is the subscription's requeueCount (-1 = unlimited).
	Budget int
	// Outcome is the handler's outcome, where one was given.
	Outcome Outcome
	// Reason, Route and Destination describe a rejection.
	Reason      message.RejectionReason
	Description string
	Route       broker.Route
	Destination string
	// Retry is set on a rejected event that retries the routing of a
	// message this process judged exhausted and whose earlier routing
	// failed: no handler ran, no second budget-exhausted event was emitted,
	// and the message was counted as exhausted once (brighter's metrics
	// count such attempts as routing retries, not as more rejections).
	// It is set too on the event of an acknowledgement retried without a
	// handler run (acknowledged, settle-failed or stale-settle, Duration
	// 0): the handler acknowledged an earlier delivery of the message here
	// and that acknowledgement failed, or was still waiting for the
	// broker's answer (AckWaiting).
	Retry bool
	// AckWaiting is set with Retry on the event of a delivery acknowledged
	// without a handler run because the handler acknowledged an earlier
	// delivery of the message here and that acknowledgement was still
	// waiting in the settle batcher when this delivery arrived.
	AckWaiting bool
	// Permanent is set on a rejected event whose routing can never succeed
	// as it is (broker.ErrPermanent: too large, an invalid destination;
	// broker.ErrRejectionCycle: a destination it was already routed to);
	// the message was released with the longest delay.
	Permanent bool
	// Delay is the requeue delay of a Defer.
	Delay time.Duration
	// Duration is how long the handler took, on the events that end a
	// handler run (acknowledged, deferred, rejected, settle-failed); 0 on a
	// rejection no handler ran for (a message that could not be decoded).
	// On the lease-extended and lease-extend-failed events it is how long
	// the extension call took.
	Duration time.Duration
	// Err is the failure, if any.
	Err error
	// Since is when the channel began failing (channel-failure, stalled,
	// channel-recovered); Failures is how many broker calls in a row have
	// failed since then. On the lease-extended and lease-extend-failed
	// events Since is when the extension call was sent.
	Since    time.Time
	Failures int
	// Left is, on the lease-extended and lease-extend-failed events, how
	// much of the message's lease the pump's clock had left when the
	// extension call was sent (negative: it had already lapsed by that
	// clock).
	Left time.Duration
	// Spent is how many deliveries count against the redelivery budget,
	// this one included (broker.BudgetSpent), on deferred and
	// budget-exhausted events: the delivery count for a source message;
	// for a routed copy, this channel's own delivery attempt, while
	// DeliveryCount is the count it was stamped with.
	Spent int
	// EndsFlight is set on a stale-settle event that ends the message's
	// handling in place of EventAcknowledged (an acknowledgement sent with
	// a lapsed receipt): the handler's run ends here, Duration its length.
	EndsFlight bool
	// Released is, on a stopped event, the ids of the messages the stop
	// released unstarted (one EventReleased each), in release order; nil
	// when it released none.
	Released []string
	// Ceiling is the broker's ceiling on holding a message
	// (broker.LeaseCeiling, SQS's 12 h) on a lease-capped event when that
	// ceiling, not maxLeaseExtension, stopped the extension; 0 otherwise.
	Ceiling time.Duration
}

// MessageID returns the id of the event's message, or "".
func (e *Event) MessageID() string {
	if e.Message == nil {
		return ""
	}
	return e.Message.Header.MessageID
}

// Observer receives every event. Observe is called on the pump's goroutines,
// concurrently; it must be quick and must not block (metrics, a bounded
// channel, a log line).
type Observer interface {
	Observe(e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Stable log message texts of the pump (tests match them).
const (
	LogReceived        = "message received"
	LogAcknowledged    = "message acknowledged"
	LogDeferred        = "message deferred"
	LogBudgetExhausted = "redelivery budget exhausted; rejecting message"
	LogHandlerFailed   = "handler failed; message deferred"
	// LogCutOff is logged (Warn) for a handler cut off by a stop's drain
	// timeout: its message was released unjudged (ErrCutOff), with budget,
	// the requeueCount whose deliveries that no handler finished are forgiven.
	LogCutOff       = "handler cut off by the stop; message released unjudged: the broker counts this delivery, and the budget forgives at most requeueCount deliveries that no handler finished"
	LogSettleFailed = "settle failed; message stays on the broker for redelivery"
	// LogAckRetried is logged (Info) for a delivery acknowledged without a
	// handler run because the handler acknowledged an earlier delivery of
	// the message here and that acknowledgement failed, or was sent with a
	// receipt whose lease had lapsed and may have removed nothing (reported
	// as a stale settle) (EventAcknowledged marked Retry).
	LogAckRetried = "acknowledgement retried without a handler run: the handler acknowledged an earlier delivery here and that acknowledgement failed or may have removed nothing (its lease had lapsed)"
	// LogAckWhileWaiting is logged (Info) for a delivery acknowledged
	// without a handler run because the handler acknowledged an earlier
	// delivery of the message here and that acknowledgement was still
	// waiting for the broker's answer (EventAcknowledged marked Retry and
	// AckWaiting).
	LogAckWhileWaiting = "redelivery acknowledged without a handler run: the handler acknowledged an earlier delivery here and that acknowledgement was still waiting for its answer"
	// LogHeldBack is logged (Info) for a message released unhandled because
	// an earlier message of its partition key went back to the broker
	// unsettled after it arrived (ErrHeldBack).
	LogHeldBack = "message held back behind an earlier message of its partition key; released unhandled"
	// LogStaleSettle is logged (Warn) for a settle the broker refused
	// because its receipt was stale (broker.ErrStaleReceipt): the message's
	// lease had lapsed and the broker handed it out again.
	// EventStaleSettle logs it too, once per superseded settle.
	LogStaleSettle = "settle used a stale receipt; the broker had already handed the message out again"
	// LogLapsedSettle is logged (Warn) for a settle the broker answered
	// with success although its receipt's lease had lapsed by the pump's
	// clock (EventStaleSettle with ErrLapsedReceipt): an acknowledgement
	// so sent is not counted as acknowledged.
	LogLapsedSettle = "settle used a receipt whose lease had lapsed; the broker may have handed the message out again, so it is reported as stale, not acknowledged"
	// LogLeaseExtended is logged (Debug) for each lease extension.
	LogLeaseExtended = "message lease extended"
	// LogLeaseExtendFailed is logged (Error) for a failed extension.
	LogLeaseExtendFailed = "lease extension failed; the message stays on the broker and is redelivered if its lease lapses"
	// LogLeaseLapsed is logged (Debug) for a message dropped before
	// dispatch because its lease had lapsed.
	LogLeaseLapsed = "message lease lapsed before dispatch; dropped for the broker to redeliver"
	// LogLeaseCapped is logged (Warn) when a message reaches
	// maxLeaseExtension.
	LogLeaseCapped = "message held past maxLeaseExtension; its lease is extended no more and the broker will redeliver it"
	// LogLeaseCeiling is logged (Warn), once per message, when a message
	// reaches its broker's ceiling (SQS: 12 h from the receive) before
	// maxLeaseExtension.
	LogLeaseCeiling   = "message held to the broker's ceiling on a lease; its lease is extended no more and the broker will redeliver it"
	LogChannelFailure = "channel failure; backing off"
	LogStalled        = "channel stalled: no successful broker call"
	LogRecovered      = "channel recovered"
	// LogReleased is logged (Info) once per stop that released messages
	// unstarted (EventStopped with Released): how many and their ids.
	// Each cost its message a delivery the broker counts, with no handler
	// run.
	LogReleased = "stop released messages no handler had started; the broker counts each a delivery"
	// LogReleasedOne is logged (Debug) for each message a stop released
	// unstarted (EventReleased).
	LogReleasedOne = "message released unstarted by the stop"
	LogStarted     = "message pump started"
	LogStopped     = "message pump stopped"
)

// LogObserver writes events to a slog.Logger: receives and
// acknowledgements at Debug (so the happy path costs nothing at Info), each
// deferral at Info (a message going round again is what an operator watches
// for: the redelivery budget running down), budget exhaustion at Warning,
// failures at Error, start and stop at Info. Rejections are logged by
// broker.Router itself.
type LogObserver struct {
	Logger *slog.Logger
	// StopErrorReported says the caller reports Run's error itself (brighter
	// consume prints it as its last line): a failed stop is then logged at
	// Info with failed=true, so the error is said once.
	StopErrorReported bool
}

// Observe logs e.
func (o LogObserver) Observe(e Event) {
	l := o.Logger
	ctx := context.Background()
	switch e.Kind {
	case EventReceived, EventAcknowledged, EventDeferred:
		if errors.Is(e.Err, ErrCutOff) {
			l.Warn(LogCutOff, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount, "budget", e.Budget)
			return
		}
		if errors.Is(e.Err, ErrHeldBack) {
			l.Info(LogHeldBack, "subscription", e.Subscription, "message_id", e.MessageID(), "partition_key", e.Message.Header.PartitionKey, "delivery_count", e.DeliveryCount)
			return
		}
		if e.Err != nil {
			// The budget as LogDeferred says it: a failure is a deferral.
			l.Error(LogHandlerFailed, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount, "budget", e.Budget, "budget_spent", e.Spent, "delay", e.Delay, "error", e.Err)
			return
		}
		if e.Kind == EventAcknowledged && e.Retry && e.AckWaiting {
			l.Info(LogAckWhileWaiting, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount)
			return
		}
		if e.Kind == EventAcknowledged && e.Retry {
			l.Info(LogAckRetried, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount)
			return
		}
		if e.Kind == EventDeferred {
			l.Info(LogDeferred, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount, "budget", e.Budget, "budget_spent", e.Spent, "delay", e.Delay)
			return
		}
		if !l.Enabled(ctx, slog.LevelDebug) {
			return
		}
		msg := LogReceived
		if e.Kind == EventAcknowledged {
			msg = LogAcknowledged
		}
		l.Debug(msg, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount, "budget", e.Budget)
	case EventBudgetExhausted:
		l.Warn(LogBudgetExhausted, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount, "budget", e.Budget, "budget_spent", e.Spent)
	case EventSettleFailed:
		if errors.Is(e.Err, broker.ErrStaleReceipt) {
			l.Warn(LogStaleSettle, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", e.Outcome.String(), "error", e.Err)
			return
		}
		if e.Retry {
			l.Error(LogSettleFailed, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", e.Outcome.String(), "ack_retry", true, "error", e.Err)
			return
		}
		l.Error(LogSettleFailed, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", e.Outcome.String(), "error", e.Err)
	case EventStaleSettle:
		if errors.Is(e.Err, ErrLapsedReceipt) {
			l.Warn(LogLapsedSettle, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", e.Outcome.String(), "delivery_count", e.DeliveryCount)
			return
		}
		l.Warn(LogStaleSettle, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", e.Outcome.String(), "error", e.Err)
		if e.Err != nil && e.Err != ErrSupersededReceipt { // the later delivery's acknowledgement failed too
			l.Error(LogSettleFailed, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", Ack.String(), "error", e.Err)
		}
	case EventLeaseExtended:
		l.Debug(LogLeaseExtended, "subscription", e.Subscription, "message_id", e.MessageID(), "lease", e.Delay,
			"sent", e.Since, "call", e.Duration, "left", e.Left)
	case EventLeaseExtendFailed:
		if errors.Is(e.Err, broker.ErrStaleReceipt) {
			l.Warn(LogStaleSettle, "subscription", e.Subscription, "message_id", e.MessageID(), "outcome", "extend", "error", e.Err)
			return
		}
		l.Error(LogLeaseExtendFailed, "subscription", e.Subscription, "message_id", e.MessageID(), "error", e.Err,
			"sent", e.Since, "call", e.Duration, "left", e.Left)
	case EventLeaseLapsed:
		l.Debug(LogLeaseLapsed, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount)
	case EventLeaseCapped:
		if e.Ceiling > 0 {
			l.Warn(LogLeaseCeiling, "subscription", e.Subscription, "message_id", e.MessageID(), "held", e.Delay, "ceiling", e.Ceiling)
		} else {
			l.Warn(LogLeaseCapped, "subscription", e.Subscription, "message_id", e.MessageID(), "held", e.Delay)
		}
	case EventChannelFailure:
		l.Error(LogChannelFailure, "subscription", e.Subscription, "error", e.Err, "delay", e.Delay, "failures", e.Failures)
	case EventStalled:
		l.Error(LogStalled, "subscription", e.Subscription, "since", e.Since, "for", time.Since(e.Since).Round(time.Second), "error", e.Err)
	case EventChannelRecovered:
		l.Info(LogRecovered, "subscription", e.Subscription, "failed_for", time.Since(e.Since).Round(time.Millisecond), "failures", e.Failures)
	case EventStarted:
		l.Info(LogStarted, "subscription", e.Subscription)
	case EventReleased:
		l.Debug(LogReleasedOne, "subscription", e.Subscription, "message_id", e.MessageID(), "delivery_count", e.DeliveryCount)
	case EventStopped:
		if len(e.Released) > 0 {
			l.Info(LogReleased, "subscription", e.Subscription, "released", len(e.Released), "message_ids", e.Released)
		}
		if e.Err != nil && o.StopErrorReported {
			l.Info(LogStopped, "subscription", e.Subscription, "failed", true)
			return
		}
		if e.Err != nil {
			l.Error(LogStopped, "subscription", e.Subscription, "error", e.Err)
			return
		}
		l.Info(LogStopped, "subscription", e.Subscription)
	}
}
