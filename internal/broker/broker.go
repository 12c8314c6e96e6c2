package broker

import (
	"context"
	"errors"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// Consumer reads one channel of one transport. Implementations are safe for
// concurrent use by several performers.
//
// Receive presents each message's delivery count per the contract of
// requirements Group A (see PresentedCount). The settling calls take the
// message Receive returned; its Receipt identifies it to the broker.
type Consumer interface {
	// Receive returns up to the channel's buffer size of messages, waiting at
	// most timeout for the first. An empty slice with a nil error means none
	// arrived. A message that cannot be decoded is returned with
	// MessageType MTUnacceptable (and its Receipt) so the pump can reject it.
	// An error means the channel failed (the pump backs off and retries).
	Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error)
	// Acknowledge removes the message from the broker.
	Acknowledge(ctx context.Context, m *message.Message) error
	// Requeue makes the message visible again after delay (0 = at once) with
	// one broker call, or as few as the broker allows (NFR-3).
	Requeue(ctx context.Context, m *message.Message, delay time.Duration) error
	// Reject routes the message by reason through a Router and always
	// settles it: no error escapes and it never panics (R-16..R-19).
	Reject(ctx context.Context, m *message.Message, r message.Rejection) RejectResult
	// Purge removes every message of the channel.
	Purge(ctx context.Context) error
	// Close releases the consumer's resources; messages still held are left
	// to the broker.
	Close(ctx context.Context) error
}

// BatchAcknowledger is implemented by consumers that can acknowledge several
// messages in one broker call (SQS DeleteMessageBatch, Pub/Sub pull's
// Acknowledge). Both pump variants use it to settle acknowledgements in
// batches (ADR 0004, "Settle batching").
type BatchAcknowledger interface {
	// AcknowledgeBatch acknowledges ms; it returns one error per message,
	// nil for success; len(result) == len(ms). Given more than
	// AckBatchMax messages it makes more than one broker call.
	AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error
	// AckBatchMax is the most messages one broker call of AcknowledgeBatch
	// acknowledges (at least 1): the pump's batches carry no more (SQS 10,
	// Pub/Sub pull 1,000).
	AckBatchMax() int
}

// BatchReleaser is implemented by consumers that can make several received
// messages visible again at once in one broker call (SQS
// ChangeMessageVisibilityBatch with a timeout of 0): what Requeue with delay
// 0 does for one. `brighter dlq` uses it to release what a scan held. It
// returns one error per message, nil for success; len(result) == len(ms).
type BatchReleaser interface {
	ReleaseBatch(ctx context.Context, ms []*message.Message) []error
}

// ConcurrentReceiver is implemented by consumers whose Receive may run in
// several goroutines at once without reordering the messages of one
// ordering key (partition key): the broker either hands an ordering key's
// messages to one receive at a time and holds later ones back while earlier
// ones are unsettled (SQS FIFO message groups), or promises no order at all
// (SQS standard queues). When
// ReceivesConcurrently reports true the Proactor lets its receivers' Receive
// calls (long polls) overlap; otherwise, or when a consumer does not
// implement this interface (the memory transport, wrappers), it serialises
// receive-then-enqueue so the order the broker handed messages out in is the
// order they reach the workers (per-key order of the Proactor; ADR 0004).
type ConcurrentReceiver interface {
	ReceivesConcurrently() bool
}

// InterruptibleReceiver is implemented by consumers whose Receive, while it
// waits for its first message, takes nothing from the broker: it waits on
// messages the client already holds (Pub/Sub's streaming pull, whose stream
// delivers into a buffer Receive reads), and when its context ends it
// returns without any message, leaving what the client holds for the next
// Receive or for Close to release. When ReceiveInterruptible reports true a
// graceful stop of the pump cancels the context of the Receive in flight
// instead of letting it wait out its timeout: no message can be left taken
// and unreturned by it. A long poll on the broker (SQS ReceiveMessage) can
// take messages on the broker's side after its client gave up, so such a
// consumer does not implement this (or reports false).
type InterruptibleReceiver interface {
	ReceiveInterruptible() bool
}

// Producer publishes messages in its transport's Brighter wire format.
type Producer interface {
	// Send publishes m to the topic (or queue) named by m.Header.Topic.
	// An error that wraps ErrNotSent failed before the call that publishes
	// m was under way: the broker cannot have taken m.
	Send(ctx context.Context, m *message.Message) error
	// Close releases the producer's resources.
	Close(ctx context.Context) error
}

// BatchProducer is implemented by producers that can publish several
// messages in one broker call (SQS SendMessageBatch, SNS PublishBatch); the
// replay of `brighter dlq` uses it to cut its round trips. Each
// message goes to the topic (or queue) its Header.Topic names, as with
// Send; messages to one destination keep their order. It returns one error
// per message, nil for success; len(result) == len(ms). A message whose
// error is nil was published; one with an error was not (as far as the
// broker said).
type BatchProducer interface {
	SendBatch(ctx context.Context, ms []*message.Message) []error
}

// ChannelMaker provisions a subscription's infrastructure according to its
// makeChannels setting: create makes what is missing, validate returns an
// error naming what is missing, assume makes no call at all.
type ChannelMaker interface {
	EnsureChannels(ctx context.Context) error
}

// MakeChannels is Brighter's OnMissingChannel setting.
type MakeChannels string

// The makeChannels values.
const (
	// MakeCreate creates missing infrastructure (the default).
	MakeCreate MakeChannels = "create"
	// MakeValidate fails when infrastructure is missing.
	MakeValidate MakeChannels = "validate"
	// MakeAssume makes no infrastructure call.
	MakeAssume MakeChannels = "assume"
)

// ErrChannelFailure wraps a transient failure of a channel (a broker that
// cannot be reached, a throttled call). The pump backs off by
// channelFailureDelay and tries again.
var ErrChannelFailure = errors.New("channel failure")

// ErrNotSent is wrapped (NotSent) by a Producer's Send error when the
// send failed before its publish call was under way (the look-up or
// creation of the destination, say, cut off by a cancelled context):
// the broker cannot have taken the message. An error without it may come
// from a publish call that the broker took before its answer was lost.
var ErrNotSent = errors.New("the message was not sent")

// NotSent returns err marked with ErrNotSent, its text unchanged; nil
// stays nil.
func NotSent(err error) error {
	if err == nil {
		return nil
	}
	return notSentError{err}
}

// notSentError is an error marked with ErrNotSent (NotSent).
type notSentError struct{ err error }

func (e notSentError) Error() string   { return e.err.Error() }
func (e notSentError) Unwrap() []error { return []error{e.err, ErrNotSent} }

// ErrNotAuthorized is wrapped by a transport's error when the broker
// refused the client's credentials or their permissions (SQS ExpiredToken,
// InvalidClientTokenId, AccessDenied; Pub/Sub Unauthenticated,
// PermissionDenied; RocketMQ UNAUTHORIZED, FORBIDDEN). At start-up a
// command exits 1 with one error naming the endpoint and the credential
// source; during consumption Pub/Sub and RocketMQ wrap it with
// ErrChannelFailure too (the pump backs off and readiness turns 503 after
// stallAfter), while SQS halts the pump.
var ErrNotAuthorized = errors.New("refused the credentials")

// PresentedCount is the delivery-count rule of the contract (R-1..R-3, R-28):
// the count stamped in the stored message plus the broker's delivery attempt
// minus one. A nil, zero or negative attempt counts as the first delivery
// (AC-33): the result is never below the stamped count, never negative (a
// negative stamp counts as 0), and saturates at math.MaxInt instead of
// wrapping (decoders refuse a stamp at or above
// message.HandledCountLimit, but the broker's attempt is not theirs to
// bound). A routed copy (one carrying rejection metadata) presents its
// stamped count only.
func PresentedCount(stamped, attempt int, routedCopy bool) int {
	if stamped < 0 {
		stamped = 0
	}
	if routedCopy || attempt <= 1 {
		return stamped
	}
	return message.SaturatingAdd(stamped, attempt-1)
}

// BudgetSpent is how many deliveries of m, this one included, count against
// the redelivery budget of the channel m was received from (R-4, R-11, R-28;
// docs/adr/0001 §9). For a source message it is the presented count plus one
// (the count the pump stamps after a deferral). For a routed copy (R-28's
// discriminator: rejection metadata in the bag) it is the broker's delivery
// attempt on this channel (at least 1): the copy presents the stamped count of
// the channel that rejected it, which never advances here, so judging the
// budget on it would make the budget inert (and forging the two metadata keys
// onto a source message would make any budget inert). It saturates, never
// wraps.
func BudgetSpent(m *message.Message) int {
	if m.HasRejectionMetadata() {
		return max(m.DeliveryAttempt, 1)
	}
	return message.SaturatingAdd(max(m.Header.HandledCount, 0), 1)
}

// callTimeoutKey keys the per-call timeout WithCallTimeout stores.
type callTimeoutKey struct{}

// WithCallTimeout returns ctx carrying d, the deadline CallContext gives
// each broker call made under it (every broker call has a
// deadline). The pump uses it for Reject, whose Router makes several calls
// (publish, then acknowledge or release): each gets d of its own, so a
// publish that timed out still leaves the release its time.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// CallContext returns the context of one broker call: ctx with the timeout
// WithCallTimeout stored, or ctx unchanged (and a no-op cancel) when none
// was stored.
func CallContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok && d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// ErrStaleReceipt is wrapped by a transport's settling or lease-extending
// call when the broker says the receipt no longer holds the message: it was
// settled already, or its lease lapsed and the broker handed it out again
// (SQS ReceiptHandleIsInvalid / MessageNotInflight, a RocketMQ invalid
// receipt handle). Such a settle did nothing; the pump logs it at Warn with
// the message id and counts it. Brokers that settle a stale
// receipt silently (SQS DeleteMessage) cannot report it; lease extension
// keeps that from happening.
var ErrStaleReceipt = errors.New("stale receipt: the broker no longer holds the message for it")

// LeaseExtender is implemented by consumers whose broker lends a received
// message for a lease (SQS visibility timeout, Pub/Sub ack deadline,
// RocketMQ invisible duration) and lets the client extend it. The pump
// keeps the lease of every message it holds (buffered or in a handler)
// until the message is settled, extending it when a grace of its lease is
// left (about one call a lease; half its lease for a short one), and drops a message whose lease lapsed before it was
// dispatched (R-4, R-5; docs/adr/0005-leases.md). A consumer whose client
// manages leases itself (the Pub/Sub streaming client) does not implement
// it: it implements ClientLeaser.
type LeaseExtender interface {
	// Lease returns how long the broker holds a message for this consumer
	// from the moment it is received (or its lease last extended); 0 when
	// unknown, and then the pump neither extends nor drops.
	Lease() time.Duration
	// ExtendLeases makes each message's lease d from now, in as few broker
	// calls as the broker allows (NFR-3), each with ctx's deadline. It
	// returns one error per message, nil for success; len(result) ==
	// len(ms). An error wrapping ErrStaleReceipt means the broker no longer
	// holds that message for its receipt.
	ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error
}

// LeaseFromReceiveStart is implemented by a LeaseExtender whose leases are
// counted from the start of the receive call that returned the message, not
// from its return (RocketMQ: the consumer's receipt deadline runs from the
// ReceiveMessage call's start, and it refuses an extension it knows is too
// late). The pump then starts its own lease clock there too, so that no
// extension is decided after the consumer's deadline. Other consumers'
// brokers hand a message out when the long poll returns it (SQS, Pub/Sub
// pull), and the pump counts from the return: counting from the call's
// start there would cost a lease no longer than the poll a message handed
// out late in it (docs/adr/0005-leases.md, "Where each lease clock
// starts").
type LeaseFromReceiveStart interface {
	// LeaseFromReceiveStart reports whether leases run from the receive
	// call's start.
	LeaseFromReceiveStart() bool
}

// LeaseCeiling is implemented by a LeaseExtender whose broker keeps a
// received message from other consumers no longer than a fixed time counted
// from its receive, however often its lease is extended (SQS: 12 hours,
// limits.SQS.MaxHold). The pump stops extending short of the ceiling, with
// one Warning per message, instead of making calls the broker refuses
// (docs/adr/0005-leases.md, "Ceilings").
type LeaseCeiling interface {
	// MaxHold returns the ceiling; 0 for none.
	MaxHold() time.Duration
}

// ClientLeaser is implemented by consumers whose client keeps the leases of
// what it delivers itself, extending each up to a cap from its delivery,
// and buffers deliveries before the pump receives them (the Pub/Sub
// streaming client and its MaxExtension). The pump extends nothing for
// such a consumer, but tracks each message it holds against the client's
// lease, so that it knows a later delivery of a message it still holds,
// handed out again once that cap passed, as the same message: the later
// delivery is absorbed or settled with the earlier outcome, and a settle
// made with the superseded receipt is counted (R-4,
// docs/adr/0005-leases.md decision 9). A consumer implements either this or
// LeaseExtender, not both.
type ClientLeaser interface {
	// ClientLease returns how long after its delivery to the client a
	// message's lease may lapse (the client extends it no longer, and the
	// broker may hand it out again); 0 when unknown, and then the pump
	// tracks nothing.
	ClientLease() time.Duration
	// DeliveredAt returns when the client received m from the broker (its
	// lease's start); the zero time when m did not come from this
	// consumer.
	DeliveredAt(m *message.Message) time.Time
}

// DelayApplier is implemented by a consumer whose Requeue does not apply
// every delay as given: its broker bounds a requeue (SQS's visibility
// timeout at 12 h, Pub/Sub's ack deadline at 600 s, RocketMQ's invisible
// duration at 12 h) or counts it in whole seconds. The pump asks it for the
// delay a requeue applies, so that its log and events carry that delay,
// not the one the handler asked for.
type DelayApplier interface {
	// AppliedDelay returns the delay Requeue(ctx, m, d) applies: d bounded
	// to the broker's range and rounded as the broker counts it.
	AppliedDelay(d time.Duration) time.Duration
}

// AppliedDelay returns the delay c's Requeue applies for d: c's own answer
// when it implements DelayApplier, else d (0 for a negative d).
func AppliedDelay(c Consumer, d time.Duration) time.Duration {
	if da, ok := c.(DelayApplier); ok {
		return da.AppliedDelay(d)
	}
	return max(d, 0)
}
