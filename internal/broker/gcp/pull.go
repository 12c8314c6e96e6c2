package gcp

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// pullReceipt is a pull delivery's receipt: its ack id.
type pullReceipt struct{ ackID string }

// PullConsumer reads a subscription with unary Pull: each Receive pulls up
// to BufferSize messages; the pump keeps a held message's ack deadline with
// ExtendLeases (ModifyAckDeadline, lease.go). Requeue is
// ModifyAckDeadline (one call); Reject goes through broker.Router, whose
// release of a failed routing is a ModifyAckDeadline to the Router's growing
// delay (broker.RoutingFailureDelay, at most 600 s; R-19). It implements broker.Consumer,
// broker.BatchAcknowledger and broker.LeaseExtender.
// Safe for concurrent use; it does not own the
// client.
type PullConsumer struct {
	client *pubsub.Client
	sub    string
	opts   ConsumerOptions
	router *broker.Router
}

// NewPullConsumer makes a pull consumer on client. pub publishes routed
// copies (normally a *Producer on the same client).
func NewPullConsumer(client *pubsub.Client, pub broker.Publisher, opts ConsumerOptions) *PullConsumer {
	opts.normalise()
	c := &PullConsumer{client: client, sub: SubscriptionName(client.Project(), opts.Subscription), opts: opts}
	c.router = &broker.Router{DeadLetter: opts.DeadLetterTopic, Invalid: opts.InvalidTopic, Publisher: pub,
		Settler: pullSettler{c}, Logger: opts.Logger, Now: opts.Now, MaxReleaseDelay: maxAckDeadline,
		Source: opts.Topic, Resolve: topicResolver(client.Project())}
	return c
}

// PullGrace is added to the receive timeout to make the Pull call's own
// deadline. The service and Google's emulator answer an idle Pull by
// themselves before its deadline (the emulator about 1 s before it, with
// an empty response; the service with an empty response or a
// DeadlineExceeded status of its own); cancelling a Pull the server has
// already answered with messages would leave them leased to nobody until
// their ack deadline lapses, so the client gives the server time to answer
// first.
const PullGrace = 2 * time.Second

// ProbeTimeout is the deadline of the liveness probe (one GetSubscription)
// a pull consumer makes when a Pull was cut off by its own deadline, and a
// stream consumer makes after StreamProbeAfter of silence: 5 s, as the
// start-up probe (Probe). With PullGrace it keeps a black-holed Receive
// within timeOut + 7 s, inside the pump's receive deadline (timeOut + 10 s).
const ProbeTimeout = 5 * time.Second

// Receive pulls up to BufferSize messages in one Pull call, which the server
// answers when messages are available or after its own short wait; the call
// is cut off at timeout + PullGrace. An empty result is (nil, nil): the
// server answered with nothing, or reported DeadlineExceeded itself, or the
// Pull was cut off and a probe (one GetSubscription within ProbeTimeout,
// never more than one per Pull) was answered. A Pull cut off whose probe
// was not answered either is a channel failure: a black-holed or
// unreachable service, never an empty receive. A message that cannot be
// decoded is returned as MT_UNACCEPTABLE with its receipt. Transient
// failures wrap broker.ErrChannelFailure.
func (c *PullConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	return c.receive(ctx, timeout, c.opts.BufferSize)
}

func (c *PullConsumer) receive(ctx context.Context, timeout time.Duration, limit int) ([]*message.Message, error) {
	pctx, cancel := context.WithTimeout(ctx, max(timeout, time.Millisecond)+PullGrace)
	defer cancel()
	// No client-side retry: the gapic default retries Unavailable until
	// the deadline and then reports only DeadlineExceeded, which would read
	// as "nothing arrived" from a broker that cannot be reached (dlq
	// against an unreachable Pub/Sub would say "0 messages" and exit 0).
	// The error now names the host; the pump backs off on it.
	resp, err := c.client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: c.sub, MaxMessages: int32(limit)},
		gax.WithRetry(func() gax.Retryer { return nil }))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if pctx.Err() != nil {
			// Cut off by our own deadline with no answer: an idle Pull the
			// server answers late, or a service that cannot be reached.
			// One cheap call tells them apart; without it a black-holed
			// service read as an idle subscription for ever and the
			// pump's stall clock never started.
			if perr := probeService(ctx, c.client, c.sub); perr != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, unanswered(c.sub, fmt.Sprintf("pull got no answer within %s, and a probe (GetSubscription) %s", max(timeout, time.Millisecond)+PullGrace, probeFailed(perr)), perr)
			}
			return nil, nil
		}
		if status.Code(err) == codes.DeadlineExceeded {
			// the server reported the deadline itself: it answered, with
			// nothing
			return nil, nil
		}
		return nil, channelError(c.sub, err)
	}
	out := make([]*message.Message, 0, len(resp.ReceivedMessages))
	for _, rm := range resp.ReceivedMessages {
		pm := rm.GetMessage()
		var attempt *int
		if rm.DeliveryAttempt > 0 {
			a := int(rm.DeliveryAttempt)
			attempt = &a
		}
		m := decodeDelivery(ctx, c.opts, c.sub, Wire{ID: pm.GetMessageId(), Data: pm.GetData(), Attributes: pm.GetAttributes(), OrderingKey: pm.GetOrderingKey()}, attempt)
		m.Receipt = pullReceipt{ackID: rm.AckId}
		m.StoredID = pm.GetMessageId()
		out = append(out, m)
	}
	return out, nil
}

func ackID(m *message.Message) (string, error) {
	r, ok := m.Receipt.(pullReceipt)
	if !ok || r.ackID == "" {
		return "", fmt.Errorf("message %s: %w", m.Header.MessageID, ErrNoReceipt)
	}
	return r.ackID, nil
}

// Acknowledge acknowledges m. It returns ErrNoReceipt for a message not
// received by a pull consumer, or the service's error.
func (c *PullConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	id, err := ackID(m)
	if err != nil {
		return err
	}
	if err := c.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: c.sub, AckIds: []string{id}}); err != nil {
		return ackCallErr(fmt.Sprintf("acknowledge message %s on %s", m.Header.MessageID, c.sub), id, err)
	}
	return nil
}

// PullAckBatchMax is the most ack ids one AcknowledgeRequest of
// PullConsumer.AcknowledgeBatch carries (1,000). Pub/Sub limits a request to
// 512 KB, and Google's client libraries send up to 2,500 ack ids in one;
// 1,000 keeps a request under a fifth of the limit with ack ids of up to
// 100 bytes, and one failed call fails no more than 1,000 acknowledgements
// (each left to its ack deadline). SQS's DeleteMessageBatch takes 10.
const PullAckBatchMax = 1000

// AckBatchMax is PullAckBatchMax (broker.BatchAcknowledger).
func (c *PullConsumer) AckBatchMax() int { return PullAckBatchMax }

// AcknowledgeBatch acknowledges ms with one Acknowledge call per
// PullAckBatchMax of them; each call's one error (or nil) is reported for
// every message of it that had a receipt.
func (c *PullConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	for start := 0; start < len(ms); start += PullAckBatchMax {
		end := min(start+PullAckBatchMax, len(ms))
		c.acknowledgeBatch(ctx, ms[start:end], errs[start:end])
	}
	return errs
}

// acknowledgeBatch acknowledges ms (at most PullAckBatchMax) in one
// Acknowledge call, writing each message's error to errs (len(ms)).
func (c *PullConsumer) acknowledgeBatch(ctx context.Context, ms []*message.Message, errs []error) {
	ids := make([]string, 0, len(ms))
	idx := make([]int, 0, len(ms))
	for i, m := range ms {
		id, err := ackID(m)
		if err != nil {
			errs[i] = err
			continue
		}
		ids, idx = append(ids, id), append(idx, i)
	}
	if len(ids) == 0 {
		return
	}
	if err := c.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: c.sub, AckIds: ids}); err != nil {
		for k, i := range idx {
			errs[i] = ackCallErr(fmt.Sprintf("acknowledge message %s on %s", ms[i].Header.MessageID, c.sub), ids[k], err)
		}
	}
}

// Requeue makes m visible again after delay with one ModifyAckDeadline call
// (delay rounded up to whole seconds, at most 600 s; 0 = at once). The
// deadline's lapse is an ack-deadline expiry, so on a subscription with a
// RetryPolicy the policy's back-off follows it: the gap between
// deliveries is the delay plus the back-off
// (docs/commands/consume.md#pubsub-redelivery-gaps).
func (c *PullConsumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	id, err := ackID(m)
	if err != nil {
		return err
	}
	secs := int32(c.AppliedDelay(delay) / time.Second)
	if err := c.client.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: c.sub, AckIds: []string{id}, AckDeadlineSeconds: secs}); err != nil {
		return ackCallErr(fmt.Sprintf("requeue message %s on %s", m.Header.MessageID, c.sub), id, err)
	}
	return nil
}

// AppliedDelay returns the ack deadline a Requeue with delay sets
// (broker.DelayApplier): delay rounded up to whole seconds, 0..600 s
// (Pub/Sub's longest ack deadline); a longer delay is applied as 600 s.
func (c *PullConsumer) AppliedDelay(delay time.Duration) time.Duration {
	return (min(max(delay, 0), maxAckDeadline) + time.Second - 1) / time.Second * time.Second
}

// Reject routes m by reason through broker.Router (R-16..R-19): it publishes
// the stamped copy (which carries no receipt) to the destination topic and
// then acknowledges; on a failed publish it releases m with a
// ModifyAckDeadline to the Router's growing delay
// (broker.RoutingFailureDelay, at most 600 s). It always settles and never
// returns an error.
func (c *PullConsumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, r)
}

// Purge acknowledges every message of the subscription by seeking it to now.
func (c *PullConsumer) Purge(ctx context.Context) error {
	return seekNow(ctx, c.client, c.sub)
}

// Close does nothing: a pull consumer holds no stream, and messages it
// returned are left to their ack deadline.
func (c *PullConsumer) Close(ctx context.Context) error { return nil }

type pullSettler struct{ c *PullConsumer }

func (s pullSettler) Acknowledge(ctx context.Context, m *message.Message) error {
	return s.c.Acknowledge(ctx, m)
}

// Release is ModifyAckDeadline delay (at most 600 s).
func (s pullSettler) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return s.c.Requeue(ctx, m, delay)
}
