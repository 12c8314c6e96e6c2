package pump

import (
	"fmt"
	"time"
)

// Variant is the pump variant (messagePumpType).
type Variant string

// The two variants.
const (
	// Reactor handles one message at a time per performer, in order.
	Reactor Variant = "reactor"
	// Proactor receives ahead and dispatches concurrently, keeping
	// per-partition-key order.
	Proactor Variant = "proactor"
)

// Defaults of Options, Brighter's where Brighter has one
// (docs/configuration.md#subscription-settings).
const (
	DefaultTimeOut             = 300 * time.Millisecond
	DefaultEmptyChannelDelay   = 500 * time.Millisecond
	DefaultChannelFailureDelay = 1000 * time.Millisecond
	DefaultDrainTimeout        = 10 * time.Second
	// DefaultMaxChannelFailureDelay caps the exponential back-off of
	// repeated channel failures.
	DefaultMaxChannelFailureDelay = 30 * time.Second
	// DefaultCallTimeout bounds each settle call (acknowledge, requeue,
	// reject's publish and acknowledge or release).
	DefaultCallTimeout = 30 * time.Second
	// DefaultReceiveMargin is how much longer than TimeOut a receive may
	// take before it is abandoned as a channel failure.
	DefaultReceiveMargin = 10 * time.Second
	// DefaultStallAfter is how long without a successful broker call makes
	// a subscription stalled (EventStalled; /readyz 503).
	DefaultStallAfter = 60 * time.Second
)

// Options are a subscription's pump settings, with Brighter's names.
type Options struct {
	// Subscription names the subscription in events and logs.
	Subscription string
	// Variant is Reactor or Proactor (required).
	Variant Variant
	// NoOfPerformers is how many performers run (Reactor) or how many
	// receivers and workers run (Proactor); values below 1 mean 1.
	NoOfPerformers int
	// BufferSize is the batch size the consumer asks for (1..10); the
	// Proactor bounds each lane to it.
	BufferSize int
	// TimeOut is how long one Receive waits.
	TimeOut time.Duration
	// RequeueCount is the redelivery budget: -1 = unlimited; any
	// other value rejects a deferred message once its delivery count reaches
	// it, so 1, 0 and anything below -1 reject on the first deferral
	//
	RequeueCount int
	// RequeueDelay is the delay of a Defer that asks for none.
	RequeueDelay time.Duration
	// UnacceptableMessageLimit stops the pump after that many rejections
	// (0 or less = never stop). Every rejection counts, as in .NET
	// Brighter's pump: a handler's Reject (DeliveryError) or Unacceptable,
	// an MT_UNACCEPTABLE message rejected at admission, and a Defer that
	// spent the redelivery budget (countUnacceptable, settle.go). A message
	// that arrives with its budget already spent is not counted again.
	UnacceptableMessageLimit int
	// UnacceptableMessageLimitWindow resets the rejection count when more
	// than this much time passed since the count started (0 = never).
	UnacceptableMessageLimitWindow time.Duration
	// EmptyChannelDelay is the pause after an empty Receive.
	EmptyChannelDelay time.Duration
	// ChannelFailureDelay is the pause after a failed Receive (both
	// variants; Brighter's Reactor ignores it, a quirk not copied). Repeated
	// failures double it, with jitter, up to MaxChannelFailureDelay; a
	// successful receive resets it.
	ChannelFailureDelay time.Duration
	// MaxChannelFailureDelay caps the back-off of repeated channel failures
	// (0 = DefaultMaxChannelFailureDelay; never below ChannelFailureDelay).
	MaxChannelFailureDelay time.Duration
	// CallTimeout is the deadline of each settle call: acknowledge,
	// requeue, and each broker call of a rejection (publish, then
	// acknowledge or release). 0 = DefaultCallTimeout. A call that times out
	// fails like any other (EventSettleFailed; the message stays on the
	// broker). Acknowledge and requeue calls starting within CallTimeout/16
	// of each other share one deadline, so each gets between 15/16 of
	// CallTimeout and CallTimeout (no allocation per message).
	CallTimeout time.Duration
	// ReceiveMargin is added to TimeOut to make each Receive's deadline: a
	// receive still unanswered then is abandoned and counted as a channel
	// failure (0 = DefaultReceiveMargin). Receives starting within an
	// eighth of ReceiveMargin of each other share one deadline, so a
	// receive's deadline is between TimeOut plus seven eighths of
	// ReceiveMargin and TimeOut + ReceiveMargin from its start
	// (run.receiveCtx).
	ReceiveMargin time.Duration
	// StallAfter is how long the channel may go without a successful broker
	// call, while its calls fail, before the pump reports EventStalled
	// (0 = DefaultStallAfter).
	StallAfter time.Duration
	// DrainTimeout bounds a graceful stop: in-flight handlers get this long
	// to finish; after it their context is cancelled and Run returns,
	// leaving unsettled messages to the broker.
	DrainTimeout time.Duration
	// CutOffGrace is how long, at least, Run waits after cutting handlers
	// off (DrainTimeout expired, or CutOff) for them to return so that
	// their messages are released: an exec handler ends its process group
	// first (SIGTERM, SIGKILL after its kill grace). The wait is also at
	// least a second and at least TimeOut plus 3s (a receive in flight);
	// 0 or less adds nothing.
	CutOffGrace time.Duration
	// MaxLeaseExtension caps lease extension: a held message's lease is
	// extended (when the consumer implements broker.LeaseExtender) until it
	// is settled, but never past its first lease plus this much; at the cap
	// the pump stops extending, the lease lapses and the broker redelivers
	// the message (EventLeaseCapped). 0 means DefaultMaxLeaseExtension;
	// negative turns extension off (lapsed messages are still dropped
	// before dispatch). docs/adr/0005-leases.md.
	MaxLeaseExtension time.Duration
}

func (o *Options) normalise() error {
	if o.Variant != Reactor && o.Variant != Proactor {
		return fmt.Errorf("messagePumpType %q: valid values are reactor, proactor", o.Variant)
	}
	o.NoOfPerformers = max(o.NoOfPerformers, 1)
	o.BufferSize = max(o.BufferSize, 1)
	if o.TimeOut <= 0 {
		o.TimeOut = DefaultTimeOut
	}
	if o.EmptyChannelDelay < 0 {
		o.EmptyChannelDelay = 0
	}
	if o.ChannelFailureDelay < 0 {
		o.ChannelFailureDelay = 0
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.MaxChannelFailureDelay <= 0 {
		o.MaxChannelFailureDelay = DefaultMaxChannelFailureDelay
	}
	o.MaxChannelFailureDelay = max(o.MaxChannelFailureDelay, o.ChannelFailureDelay)
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.ReceiveMargin <= 0 {
		o.ReceiveMargin = DefaultReceiveMargin
	}
	if o.StallAfter <= 0 {
		o.StallAfter = DefaultStallAfter
	}
	if o.MaxLeaseExtension == 0 {
		o.MaxLeaseExtension = DefaultMaxLeaseExtension
	}
	return nil
}
