package gcp

import (
	"context"
	"errors"
	"fmt"
	gax "github.com/googleapis/gax-go/v2"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
	"golang.org/x/sync/singleflight"
)

// Stable log message texts of the consumers (tests match them).
const (
	LogUndecodable = "Pub/Sub message could not be decoded; presenting it as unacceptable"
)

// maxAckDeadline is the longest ack deadline Pub/Sub accepts (600 s).
const maxAckDeadline = limits.PubSubMaxAckDeadline

// ConsumerOptions configures a PullConsumer or a StreamConsumer.
type ConsumerOptions struct {
	// Subscription is the subscription id in the client's project, or a full
	// projects/<p>/subscriptions/<s> name. Required.
	Subscription string
	// BufferSize is the most messages one Receive returns (pull: the Pull's
	// MaxMessages); values below 1 mean 1.
	BufferSize int
	// NoOfPerformers multiplies BufferSize into the stream consumer's flow
	// control (MaxOutstandingMessages); values below 1 mean 1.
	NoOfPerformers int
	// AckDeadline is the subscription's ack deadline, the lease of a pulled
	// message (makeChannels gives the subscription this value); 0 means
	// DefaultAckDeadline. The pull consumer reports it as its Lease and the
	// pump extends it with ModifyAckDeadline (lease.go); the stream consumer
	// bounds each of its client's extensions by it, so the stream's deadline
	// is the subscription's (MaxDurationPerAckExtension, 10..600 s).
	AckDeadline time.Duration
	// MaxExtension is how long the stream consumer's client keeps extending
	// a held message's lease (0 means the library's 60 min; a short value
	// lets a lease lapse in a test, AC-42). Ignored by the pull consumer,
	// whose deadlines the pump extends (AckDeadline).
	MaxExtension time.Duration
	// DeadLetterTopic is deadLetterRoutingKey: the topic a rejected message
	// is published to ("" for none).
	DeadLetterTopic string
	// InvalidTopic is invalidMessageRoutingKey: the topic an unacceptable
	// message is published to ("" falls back to DeadLetterTopic).
	InvalidTopic string
	// Logger receives the consumer's and the Router's records; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock used for rejection timestamps and for a missing
	// ce-time; nil means time.Now.
	Now func() time.Time
	// CloseTimeout bounds the stream consumer's Close: how long it waits
	// for its client to send the last acknowledgements and Nacks and end
	// the stream; 0 means DefaultCloseTimeout. Ignored by the pull
	// consumer, whose settlements are calls made before Close.
	CloseTimeout time.Duration
}

// DefaultCloseTimeout is the stream consumer's CloseTimeout when none is
// given (10 s: the client's final acknowledgements take milliseconds; the
// rest is for a loaded machine).
const DefaultCloseTimeout = 10 * time.Second

func (o *ConsumerOptions) normalise() {
	o.BufferSize = max(o.BufferSize, 1)
	o.NoOfPerformers = max(o.NoOfPerformers, 1)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
}

// SubscriptionName returns the full resource name of a subscription:
// projects/P/subscriptions/S for an id S of project P, a full name as it
// is.
func SubscriptionName(project, sub string) string {
	if strings.HasPrefix(sub, "projects/") {
		return sub
	}
	return "projects/" + project + "/subscriptions/" + sub
}

// topicName returns the full resource name of a topic.
func topicName(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// transient reports whether a gRPC status is worth retrying after the
// pump's channelFailureDelay.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// channelError wraps a receive failure: transient ones in
// broker.ErrChannelFailure (the pump backs off and retries); a refused
// credential (Unauthenticated, PermissionDenied) in both
// broker.ErrChannelFailure and broker.ErrNotAuthorized, since a credential
// can be renewed or a permission granted while the consumer runs (the
// pump backs off, logs it at Error once per back-off and readiness
// turns 503 after stallAfter); others as they are (the pump stops).
func channelError(sub string, err error) error {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("receive from %s: %w: %w: %w", sub, broker.ErrChannelFailure, broker.ErrNotAuthorized, err)
	}
	if transient(err) {
		return fmt.Errorf("receive from %s: %w: %w", sub, broker.ErrChannelFailure, err)
	}
	return fmt.Errorf("receive from %s: %w", sub, err)
}

// probeService makes the liveness probe: one GetSubscription of sub with
// ProbeTimeout as its own deadline (within ctx's) and no client-side retry.
// Any answer of the service counts, a refusal included (NotFound, a
// PermissionDenied of a credential allowed to consume but not to read the
// subscription, ResourceExhausted of a spent administrator quota): it
// returns nil then. It returns the call's error when the service did not
// answer: no answer within the deadline (DeadlineExceeded), no connection
// (Unavailable) or a call cancelled.
func probeService(ctx context.Context, client *pubsub.Client, sub string) error {
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	_, err := client.SubscriptionAdminClient.GetSubscription(pctx, &pubsubpb.GetSubscriptionRequest{Subscription: sub},
		gax.WithRetry(func() gax.Retryer { return nil }))
	if err == nil || pctx.Err() == nil && answered(err) {
		return nil
	}
	return err
}

// answered reports whether err, a call's error, is the service's own answer
// rather than the call not reaching it or not being answered in time.
func answered(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled, codes.Unknown:
		return false
	}
	return true
}

// unanswered wraps the failure of a receive the service did not answer
// (what says what went unanswered) in broker.ErrChannelFailure, whatever
// err's code: the pump backs off, and its stall clock runs from the
// receive's start.
func unanswered(sub, what string, err error) error {
	return fmt.Errorf("receive from %s: %w: %s: %w", sub, broker.ErrChannelFailure, what, err)
}

// pullReceipt is a pull delivery's receipt: its ack id.
type pullReceipt struct{ ackID string }

// ErrNoReceipt is returned when a message without this consumer's receipt is
// settled (it was not received here, or it is a routed copy).
var ErrNoReceipt = errors.New("pubsub: message has no receipt of this consumer")

// PullConsumer reads a subscription with unary Pull: each Receive pulls up
// to BufferSize messages; the pump keeps a held message's ack deadline with
// ExtendLeases (ModifyAckDeadline, lease.go). Requeue is
// ModifyAckDeadline (one call); Reject goes through broker.Router with a
// release of ModifyAckDeadline 0. It implements broker.Consumer,
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
		Settler: pullSettler{c}, Logger: opts.Logger, Now: opts.Now, MaxReleaseDelay: maxAckDeadline}
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
				return nil, unanswered(c.sub, fmt.Sprintf("pull got no answer within %s, nor a probe (GetSubscription) within %s", max(timeout, time.Millisecond)+PullGrace, ProbeTimeout), perr)
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
		out = append(out, m)
	}
	return out, nil
}

// decodeDelivery decodes one delivery and presents its count; an undecodable
// one becomes MT_UNACCEPTABLE with a Warning.
func decodeDelivery(ctx context.Context, o ConsumerOptions, sub string, w Wire, attempt *int) *message.Message {
	m, err := DecodeOrFailure(w, o.Now())
	if err != nil {
		o.Logger.WarnContext(ctx, LogUndecodable, "message_id", m.Header.MessageID, "pubsub_message_id", w.ID, "subscription", sub, "error", err)
	}
	present(m, attempt)
	return m
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

// AcknowledgeBatch acknowledges ms in one Acknowledge call; the one error (or
// nil) is reported for every message that had a receipt.
func (c *PullConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
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
		return errs
	}
	if err := c.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: c.sub, AckIds: ids}); err != nil {
		for k, i := range idx {
			errs[i] = ackCallErr(fmt.Sprintf("acknowledge message %s on %s", ms[i].Header.MessageID, c.sub), ids[k], err)
		}
	}
	return errs
}

// Requeue makes m visible again after delay with one ModifyAckDeadline call
// (delay rounded up to whole seconds, at most 600 s; 0 = at once). On a
// subscription with a RetryPolicy the policy's back-off applies on top.
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
// then acknowledges; on a failed publish it releases m with
// ModifyAckDeadline 0. It always settles and never returns an error.
func (c *PullConsumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, r)
}

// Purge acknowledges every message of the subscription by seeking it to now.
func (c *PullConsumer) Purge(ctx context.Context) error {
	return seekNow(ctx, c.client, c.sub)
}

func seekNow(ctx context.Context, client *pubsub.Client, sub string) error {
	_, err := client.SubscriptionAdminClient.Seek(ctx, &pubsubpb.SeekRequest{Subscription: sub, Target: &pubsubpb.SeekRequest_Time{Time: timestamppb.Now()}})
	if err != nil {
		return fmt.Errorf("purge %s: %w", sub, err)
	}
	return nil
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

// StreamConsumer reads a subscription with streaming pull
// (Subscriber.Receive): flow control admits BufferSize x NoOfPerformers
// outstanding messages, whose leases the client extends up to MaxExtension.
// Acknowledge is Ack, Requeue and the release of R-19 are Nack (local, they
// cannot fail; a requeue delay is the subscription's RetryPolicy). It
// implements broker.Consumer. Safe for concurrent use; it does not own the
// client.
type StreamConsumer struct {
	client *pubsub.Client
	sub    *pubsub.Subscriber
	name   string
	opts   ConsumerOptions
	router *broker.Router

	msgs chan streamReceipt

	// heard is when the service last showed it answers (unix ns): a
	// message delivered, an answered probe, or the consumer made.
	heard  atomic.Int64
	probes singleflight.Group // concurrent Receives share one probe

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	lastErr error
	delayed map[*pubsub.Message]*time.Timer // requeued with a delay, Nacked when it runs out
	// parked holds, per ordering key with a delayed message, the later
	// messages of the key (delivered by the stream meanwhile, or requeued
	// by the pump), Nacked in order right after the delayed ones.
	parked map[string][]*pubsub.Message
}

// NewStreamConsumer makes a streaming consumer on client; the stream starts
// on the first Receive. pub publishes routed copies.
func NewStreamConsumer(client *pubsub.Client, pub broker.Publisher, opts ConsumerOptions) *StreamConsumer {
	opts.normalise()
	name := SubscriptionName(client.Project(), opts.Subscription)
	s := client.Subscriber(name)
	outstanding := opts.BufferSize * opts.NoOfPerformers
	s.ReceiveSettings.MaxOutstandingMessages = outstanding
	s.ReceiveSettings.NumGoroutines = 1
	if opts.MaxExtension != 0 {
		s.ReceiveSettings.MaxExtension = opts.MaxExtension
	}
	// The client opens its stream with a deadline of MaxDurationPerAckExtension
	// for every message it is sent, 60 s when unset, whatever the
	// subscription's ack deadline: a replica killed with SIGKILL (no
	// extension, no Nack) kept its messages from the others for a minute.
	// Bounding each extension by the ack deadline makes the stream's
	// deadline the subscription's, so they come back within ackDeadline
	// (I12-3).
	s.ReceiveSettings.MaxDurationPerAckExtension = streamAckDeadline(opts.AckDeadline)
	// Shutdown waits for every delivered message to be settled, as .NET
	// Brighter's stream consumer does (WaitForProcessing, no timeout; Close
	// Nacks what the pump never took and bounds the wait by CloseTimeout).
	// The client's timed shutdown (any Timeout >= 0) cancels the stream
	// first, and its sender then stops without sending the acknowledgements
	// of the last 100 ms: a message acknowledged just before a stop came
	// back after the restart and was handled twice. The cancel also left
	// Google's emulator delivering to the dead stream (each such message
	// came back only after the stream's ack deadline, 10 s or more). The
	// graceful path sends the final acknowledgements and Nacks, then
	// half-closes the stream.
	s.ReceiveSettings.ShutdownOptions = &pubsub.ShutdownOptions{Behavior: pubsub.ShutdownBehaviorWaitForProcessing, Timeout: -1}
	c := &StreamConsumer{client: client, sub: s, name: name, opts: opts, msgs: make(chan streamReceipt, outstanding)}
	c.heard.Store(time.Now().UnixNano())
	c.router = &broker.Router{DeadLetter: opts.DeadLetterTopic, Invalid: opts.InvalidTopic, Publisher: pub,
		Settler: streamSettler{c}, Logger: opts.Logger, Now: opts.Now}
	return c
}

// streamAckDeadline is the stream's per-extension deadline for a
// subscription ack deadline d (0: DefaultAckDeadline), within the 10..600 s
// the client accepts.
func streamAckDeadline(d time.Duration) time.Duration {
	if d <= 0 {
		d = DefaultAckDeadline
	}
	return min(max(d, minStreamAckExtension), maxAckDeadline)
}

// minStreamAckExtension is the shortest MaxDurationPerAckExtension the
// client accepts.
const minStreamAckExtension = 10 * time.Second

// start runs the stream if it is not running; it returns the error the last
// run ended with (once).
func (c *StreamConsumer) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		select {
		case <-c.done:
			err := c.lastErr
			c.done, c.lastErr = nil, nil
			if err != nil {
				return err
			}
		default:
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.cancel, c.done = cancel, done
	go func() {
		err := c.sub.Receive(ctx, func(cctx context.Context, m *pubsub.Message) {
			c.heard.Store(time.Now().UnixNano())
			if c.park(m) {
				return
			}
			// The client started m's lease as it received it, a moment
			// before this callback: its ClientLease runs from here.
			select {
			case c.msgs <- streamReceipt{pm: m, at: time.Now()}:
			case <-cctx.Done():
				m.Nack()
			}
		})
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		close(done)
	}()
	return nil
}

// ended takes the error the ended stream run returned, so that the next
// Receive starts a new run; a run that ended cleanly (Close) is left as it
// is and nil returned: nothing is restarted here.
func (c *StreamConsumer) ended() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil || c.lastErr == nil {
		return nil
	}
	select {
	case <-c.done:
		err := c.lastErr
		c.done, c.lastErr = nil, nil
		return err
	default:
		return nil
	}
}

func (c *StreamConsumer) running() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// Receive returns up to BufferSize messages the stream has delivered,
// waiting at most timeout for the first. An undecodable message is returned
// as MT_UNACCEPTABLE with its receipt. When the stream ended with an error,
// Receive returns it (wrapped in broker.ErrChannelFailure when transient)
// and restarts the stream on the next call.
func (c *StreamConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	if err := c.start(); err != nil {
		return nil, channelError(c.name, err)
	}
	if err := c.probeIfSilent(ctx); err != nil {
		return nil, err
	}
	done := c.running()
	t := time.NewTimer(max(timeout, time.Millisecond))
	defer t.Stop()
	var first streamReceipt
	for {
		select {
		case first = <-c.msgs:
		case <-t.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			// The stream ended while waiting: report its error now (the next
			// Receive restarts it). Returning nothing would read as an answered
			// call, and a stream that fails as it opens (refused credentials)
			// would flap between failure and recovery ten times a second
			// instead of backing off.
			if err := c.ended(); err != nil {
				return nil, channelError(c.name, err)
			}
			return nil, nil // a clean end: the next Receive restarts it
		}
		// A message buffered here before an earlier message of its key was
		// requeued with a delay passed park on arrival; it is parked now.
		if !c.park(first.pm) {
			break
		}
	}
	out := []*message.Message{c.convert(ctx, first)}
	for len(out) < c.opts.BufferSize {
		select {
		case a := <-c.msgs:
			if !c.park(a.pm) {
				out = append(out, c.convert(ctx, a))
			}
		default:
			return out, nil
		}
	}
	return out, nil
}

// StreamProbeAfter is how long a stream consumer goes without a message
// before a Receive first probes the service (one GetSubscription within
// ProbeTimeout): an open stream that delivers nothing looks the same
// whether the subscription is idle or the connection black-holed, so
// without the probe an idle Receive always read as an answered call and
// readiness never turned 503. An idle streaming subscription costs one
// GetSubscription per StreamProbeAfter; a busy one none.
const StreamProbeAfter = 5 * time.Second

// probeIfSilent probes the service when no message came and no probe was
// answered for StreamProbeAfter; Receives that find it silent at the same
// time share one probe. It returns nil when the service answered (or it
// was not silent), a channel failure when it did not, ctx's error when ctx
// ended.
func (c *StreamConsumer) probeIfSilent(ctx context.Context) error {
	if time.Since(time.Unix(0, c.heard.Load())) < StreamProbeAfter {
		return nil
	}
	ch := c.probes.DoChan("probe", func() (any, error) {
		err := probeService(ctx, c.client, c.name)
		if err == nil {
			c.heard.Store(time.Now().UnixNano())
		}
		return nil, err
	})
	select {
	case r := <-ch:
		if r.Err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return unanswered(c.name, fmt.Sprintf("the stream delivered nothing for %s and a probe (GetSubscription) got no answer within %s", StreamProbeAfter, ProbeTimeout), r.Err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *StreamConsumer) convert(ctx context.Context, r streamReceipt) *message.Message {
	pm := r.pm
	m := decodeDelivery(ctx, c.opts, c.name, Wire{ID: pm.ID, Data: pm.Data, Attributes: pm.Attributes, OrderingKey: pm.OrderingKey}, pm.DeliveryAttempt)
	m.Receipt = &r
	m.ReceivedAt = r.at // the pump's per-key hold-back judges it by its arrival
	return m
}

// streamReceipt is a stream delivery's receipt (message.Message.Receipt):
// the client's message, and when the client handed it to the consumer (its
// lease's start, DeliveredAt; and the arrival the pump's per-key
// hold-back judges a buffered message by).
type streamReceipt struct {
	pm *pubsub.Message
	at time.Time
}

func streamMsg(m *message.Message) (*pubsub.Message, error) {
	r, ok := m.Receipt.(*streamReceipt)
	if !ok || r == nil || r.pm == nil {
		return nil, fmt.Errorf("message %s: %w", m.Header.MessageID, ErrNoReceipt)
	}
	return r.pm, nil
}

var _ broker.ClientLeaser = (*StreamConsumer)(nil)

// ClientLease is how long after its delivery the client may let a
// message's lease lapse: MaxExtension (the library's 60 min when 0), and
// never less than the stream's ack deadline, which the client sets as it
// receives a message (broker.ClientLeaser). The pump extends
// nothing for the stream; it tracks what it holds against this lease, to
// know a message the service hands out again after MaxExtension while an
// earlier delivery of it is still held.
func (c *StreamConsumer) ClientLease() time.Duration {
	d := streamAckDeadline(c.opts.AckDeadline)
	return max(c.sub.ReceiveSettings.MaxExtension, d)
}

// DeliveredAt returns when the client handed m to the consumer (the zero
// time for a message this consumer did not receive): broker.ClientLeaser.
func (c *StreamConsumer) DeliveredAt(m *message.Message) time.Time {
	if r, ok := m.Receipt.(*streamReceipt); ok && r != nil {
		return r.at
	}
	return time.Time{}
}

// Acknowledge acks m on the stream: local, returning at once (or only
// ErrNoReceipt) unless the subscription has exactly-once delivery; then
// it waits (up to ctx) for the service's answer, and an ack id the
// service refused (its deadline lapsed) is an error wrapping ErrAckRefused
// and broker.ErrStaleReceipt.
func (c *StreamConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	pm, err := streamMsg(m)
	if err != nil {
		return err
	}
	// The result resolves at once unless the subscription has
	// exactly-once delivery, where it is the service's answer: a refused
	// ack id (its deadline lapsed) is a stale receipt, not an
	// acknowledgement.
	st, err := pm.AckWithResult().Get(ctx)
	return ackResultErr(fmt.Sprintf("acknowledge message %s on %s", m.Header.MessageID, c.name), st, err)
}

// AppliedDelay returns how long a Requeue with delay holds the message
// before its Nack (broker.DelayApplier): delay bounded to 0..600 s
// (Pub/Sub's longest ack deadline); a longer delay is applied as 600 s.
func (c *StreamConsumer) AppliedDelay(delay time.Duration) time.Duration {
	return min(max(delay, 0), maxAckDeadline)
}

// Requeue nacks m. With delay 0 the Nack is at once; with a delay (at most
// 600 s) m is held, its lease kept by the client library up to
// MaxExtension, and Nacked when the delay has run out, so it is not
// delivered again before the delay (Google's emulator redelivered
// a Nack at once despite the RetryPolicy). A held message occupies one of
// the stream's flow-control slots while it waits; Close releases held
// messages at once. It returns an error only when m did not come from this
// consumer.
func (c *StreamConsumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	pm, err := streamMsg(m)
	if err != nil {
		return err
	}
	if c.park(pm) {
		return nil // Nacked after the earlier message of its key
	}
	if delay <= 0 {
		pm.Nack()
		return nil
	}
	// A Nack is redelivered at once whatever the RetryPolicy says on
	// Google's emulator, so the message is held, its lease kept
	// by the client library (up to MaxExtension), and Nacked when the delay
	// has run out: it is not delivered again before the delay.
	delay = c.AppliedDelay(delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.delayed == nil {
		c.delayed = map[*pubsub.Message]*time.Timer{}
	}
	c.delayed[pm] = time.AfterFunc(delay, func() {
		c.mu.Lock()
		_, held := c.delayed[pm]
		delete(c.delayed, pm)
		var after []*pubsub.Message
		if k := pm.OrderingKey; k != "" && !c.keyDelayed(k) {
			after = c.parked[k]
			delete(c.parked, k)
		}
		c.mu.Unlock()
		if held {
			pm.Nack()
		}
		for _, p := range after {
			p.Nack()
		}
	})
	return nil
}

// park keeps pm, a message of an ordering key that has a message waiting out
// a requeue delay here, from the pump: the stream goes on delivering the
// key's later messages while the earlier one waits, and handling them would
// put them before it. A parked message is Nacked, in order, right after
// the key's delayed messages, so Pub/Sub delivers the key again from the
// earlier one (docs/adr/0006). It reports whether pm was parked.
func (c *StreamConsumer) park(pm *pubsub.Message) bool {
	k := pm.OrderingKey
	if k == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.keyDelayed(k) {
		return false
	}
	if c.parked == nil {
		c.parked = map[string][]*pubsub.Message{}
	}
	c.parked[k] = append(c.parked[k], pm)
	return true
}

// keyDelayed reports whether a message of ordering key k waits out a
// requeue delay; c.mu is held.
func (c *StreamConsumer) keyDelayed(k string) bool {
	for d := range c.delayed {
		if d.OrderingKey == k {
			return true
		}
	}
	return false
}

// Reject routes m through broker.Router (R-16..R-19): publish the stamped
// copy, then Ack; on a failed publish Nack (prompt redelivery, never left
// outstanding). It always settles and never returns an error.
func (c *StreamConsumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, r)
}

// Purge acknowledges every message of the subscription by seeking it to now.
func (c *StreamConsumer) Purge(ctx context.Context) error {
	return seekNow(ctx, c.client, c.name)
}

// Close stops the stream and waits for the client to end it, at most
// CloseTimeout or until ctx ends: the messages the pump never took and
// those waiting out a requeue delay are Nacked, and the client sends its
// last acknowledgements and Nacks and then half-closes the stream
// (ShutdownBehaviorWaitForProcessing). A message received and never
// settled keeps the client waiting: Close then returns an error naming the
// subscription, and the message comes back after its ack deadline once the
// client is closed (nothing is lost).
func (c *StreamConsumer) Close(ctx context.Context) error {
	ctx, stop := context.WithTimeout(ctx, c.opts.CloseTimeout)
	defer stop()
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	held := c.delayed
	c.delayed = nil
	parked := c.parked
	c.parked = nil
	c.mu.Unlock()
	// Messages still waiting out a requeue delay are released now: the
	// consumer that would keep their leases is going away.
	for pm, t := range held {
		t.Stop()
		pm.Nack()
	}
	for _, ms := range parked {
		for _, pm := range ms {
			pm.Nack()
		}
	}
	if cancel == nil {
		return nil
	}
	cancel()
	for {
		select {
		case r := <-c.msgs:
			r.pm.Nack()
		case <-done:
			for {
				select {
				case r := <-c.msgs:
					r.pm.Nack()
				default:
					return nil
				}
			}
		case <-ctx.Done():
			return fmt.Errorf("close stream consumer of %s: the stream did not end (a delivered message is unsettled, or the client is stuck): %w", c.name, ctx.Err())
		}
	}
}

type streamSettler struct{ c *StreamConsumer }

func (s streamSettler) Acknowledge(ctx context.Context, m *message.Message) error {
	return s.c.Acknowledge(ctx, m)
}

// Release is Nack: the streaming client cannot delay a redelivery, so the
// delay of a failed routing is the subscription's RetryPolicy back-off
// when it has one (requeueDelay; docs/adr/0004), else at once.
func (s streamSettler) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return s.c.Requeue(ctx, m, delay)
}
