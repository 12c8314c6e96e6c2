package conformance

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Setup describes the channel a behaviour needs. A Fixture makes a fresh,
// isolated channel for it (its own queue or topic names).
type Setup struct {
	// RequeueCount is the subscription's budget (informational for the
	// fixture: the pump enforces it; Pub/Sub fixtures use it for R-11).
	RequeueCount int
	// DeadLetter and Invalid ask for those rejection destinations to be
	// configured AND created.
	DeadLetter, Invalid bool
	// MissingDeadLetter configures a dead-letter destination that does not
	// exist (makeChannels assume): routing must fail and release.
	MissingDeadLetter bool
	// FIFOBatches asks that a receive from a FIFO channel can return
	// several messages of one group, as AWS does (SQS: through
	// sqstest.FIFOBatcher in front of fauxqs, which returns one per group;
	// docs/emulators.md). Other fixtures ignore it.
	FIFOBatches bool
	// DeadLetterDown configures a dead-letter destination whose routing
	// fails until the channel's HealDeadLetter is called: the
	// destination does not exist yet (SQS, RocketMQ) or its publishes are
	// refused by a fault-injecting publisher (Pub/Sub, see pubsubChannel).
	// The channel implements HealableChannel.
	DeadLetterDown bool
	// NativeMaxDeliveries configures the broker's own redrive limit (SQS
	// maxReceiveCount, Pub/Sub maxDeliveryAttempts, RocketMQ consumer group's maximum delivery attempts);
	// 0 means none, or the transport's test default where one is required
	// for the count to advance.
	NativeMaxDeliveries int
	// Lease is the visibility timeout / ack deadline / invisible duration to
	// use; 0 means the fixture's default (long enough that no lease lapses
	// during a test). A fixture raises a Lease below its broker's minimum to
	// that minimum (Pub/Sub: 10 s); RedeliveryBound reports the result.
	Lease time.Duration
	// MaxExtension is how long a client library that extends leases on its
	// own (the Pub/Sub stream client) may hold a message; 0 means the lease
	// itself, so that a lease lapse is seen (AC-42). Other fixtures ignore
	// it: their leases are extended by the pump or not at all.
	MaxExtension time.Duration
	// LongPoll is how long one receive of the channel's consumer waits
	// for a message where the consumer, not the pump's timeOut, fixes it
	// (RocketMQ's AwaitDuration); 0 means the fixture's default. SQS waits
	// the pump's timeOut, Pub/Sub pull as long as the service (or its
	// emulator) holds a pull.
	LongPoll time.Duration
	// Logger receives the consumer's records (rejection routing logs).
	Logger *slog.Logger
	// HoldCeiling, when positive, shortens the broker's ceiling on holding
	// a received message (broker.LeaseCeiling: SQS's 12 hours from the
	// receive) to this, so that a row reaches it in seconds.
	// Fixtures of brokers with no ceiling ignore it.
	HoldCeiling time.Duration
}

// Channel is one fresh channel of a transport under test.
type Channel interface {
	// Consumer returns the consumer the pump reads (buffer size 1..10 as
	// given).
	Consumer(t testing.TB, bufferSize int) broker.Consumer
	// Send publishes m to the channel's topic in the transport's wire format.
	Send(t testing.TB, m *message.Message)
	// DeadLetter returns a consumer over the dead-letter destination built
	// with the transport's ordinary consumer code, or nil if none.
	DeadLetter(t testing.TB) broker.Consumer
	// Invalid returns a consumer over the invalid-message destination.
	Invalid(t testing.TB) broker.Consumer
	// Native returns a consumer over the broker's own redrive target, or
	// nil if the transport has none configured.
	Native(t testing.TB) broker.Consumer
	// SourceTopic is the topic (or queue) name Send publishes to, as a
	// routed copy's originalTopic must name it.
	SourceTopic() string
	// RedeliveryBound is the longest a message received from the channel
	// and never settled stays away before the broker delivers it again: the
	// channel's lease plus any extension the transport's client makes on its
	// own. Negative checks watch for longer than this.
	RedeliveryBound() time.Duration
}

// SeverableChannel is implemented by a Channel whose consumers keep broker
// activity of their own in the background (a Pub/Sub stream's client
// receives ahead and extends leases by itself): SeverableConsumer returns
// a consumer on a broker connection of its own, sever, which closes that
// connection at once, as the death of the consumer's process does (R-4/replica-killed),
// and whether the consumer's Acknowledge returns before the broker has the
// acknowledgement (the stream client sends acknowledgements later, so the
// last ones before a kill may be lost). Channels whose consumers do nothing between calls need not
// implement it: cutting their calls off (RecordingConsumer.Kill) is the
// whole of a kill.
type SeverableChannel interface {
	SeverableConsumer(t testing.TB, bufferSize int) (c broker.Consumer, sever func(), localAcks bool)
}

// HealableChannel is implemented by every transport's Channel: opened with
// Setup.DeadLetterDown, its dead-letter routing fails until HealDeadLetter,
// which creates (or mends) the destination; DeadLetter then reads it.
type HealableChannel interface {
	HealDeadLetter(t testing.TB)
}

// Fixture is one configuration of one transport (for example SQS /
// SqsFifo).
type Fixture interface {
	// Transport is the transport's name, e.g. "SQS", "Pub/Sub", "RocketMQ".
	Transport() string
	// Configuration is the configuration's name, e.g. "SqsStandard".
	Configuration() string
	// Open makes a fresh channel per s; the fixture cleans it up with
	// t.Cleanup.
	Open(t *testing.T, s Setup) Channel
	// Ordered reports whether messages carry a partition key in this
	// configuration (FIFO, ordering keys, message groups).
	Ordered() bool
}

// Drain reads everything currently on c (up to max messages, waiting at
// most wait for each batch), acknowledging nothing and releasing every
// message at once so a second Drain sees the same messages. It returns the
// messages as received (with presented counts).
func Drain(t testing.TB, c broker.Consumer, wait time.Duration, max int) []*message.Message {
	t.Helper()
	ctx := context.Background()
	var out []*message.Message
	seen := map[string]bool{}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && len(out) < max {
		ms, err := c.Receive(ctx, time.Second)
		if errors.Is(err, broker.ErrChannelFailure) {
			// Transient, as the pump treats it: retry within the deadline.
			t.Logf("drain receive (retried): %v", err)
			continue
		}
		if err != nil {
			t.Fatalf("drain receive: %v", err)
		}
		for _, m := range ms {
			if seen[m.Header.MessageID] {
				continue
			}
			seen[m.Header.MessageID] = true
			out = append(out, m)
		}
		// Messages stay in flight while draining; they are released together.
		if len(ms) == 0 && len(out) > 0 {
			break
		}
	}
	for _, m := range out {
		if err := c.Requeue(ctx, m, 0); err != nil {
			t.Logf("release after drain: %v", err)
		}
	}
	return out
}
