package gcp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"golang.org/x/sync/singleflight"
)

// StreamConsumer reads a subscription with streaming pull
// (Subscriber.Receive): flow control admits BufferSize x NoOfPerformers
// outstanding messages, whose leases the client extends up to MaxExtension.
// Acknowledge is Ack, Requeue and the release of R-19 are Nack (local, they
// cannot fail; a requeue delay is a hold before the Nack, see Requeue). It
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
	delayed map[*pubsub.Message]hold // requeued with a delay, Nacked when it runs out
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
	// (R-4/replica-killed).
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
		Settler: streamSettler{c}, Logger: opts.Logger, Now: opts.Now, Source: opts.Topic, Resolve: topicResolver(client.Project())}
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

// start runs the stream if it is not running and returns the channel its
// run closes as it ends; or the error the last run ended with (once), and
// then no stream runs.
func (c *StreamConsumer) start() (chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		select {
		case <-c.done:
			err := c.lastErr
			c.done, c.lastErr = nil, nil
			if err != nil {
				return nil, err
			}
		default:
			return c.done, nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.cancel, c.done = cancel, done
	go func() {
		err := c.sub.Receive(ctx, func(cctx context.Context, m *pubsub.Message) {
			now := time.Now()
			c.heard.Store(now.UnixNano())
			if c.park(m) {
				return
			}
			// The client started m's lease as it received it, a moment
			// before this callback: its ClientLease runs from here.
			select {
			case c.msgs <- streamReceipt{pm: m, at: now}:
			case <-cctx.Done():
				m.Nack()
			}
		})
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		close(done)
	}()
	return done, nil
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

// Receive returns up to BufferSize messages the stream has delivered,
// waiting at most timeout for the first. An undecodable message is returned
// as MT_UNACCEPTABLE with its receipt. When the stream ended with an error,
// Receive returns it (wrapped in broker.ErrChannelFailure when transient)
// and restarts the stream on the next call.
func (c *StreamConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	done, err := c.start()
	if err != nil {
		return nil, channelError(c.name, err)
	}
	if err := c.probeIfSilent(ctx); err != nil {
		return nil, err
	}
	// A message already waiting is taken without a timer; only a Receive
	// that finds none waits.
	first, ok := c.waiting()
	if !ok {
		if first, err = c.await(ctx, timeout, done); err != nil || first.pm == nil {
			return nil, err
		}
	}
	// Sized for a full batch once: appending one by one to a slice of one
	// grew it up to four times a batch.
	out := make([]*message.Message, 1, max(c.opts.BufferSize, 1))
	out[0] = c.convert(ctx, first)
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

// ReceiveInterruptible reports true (broker.InterruptibleReceiver): Receive
// waits on the messages the stream has already delivered to this client,
// and a Receive whose context ends while it waits returns none of them, so
// a stop may end its wait at once; what the buffer holds stays for the next
// Receive or is Nacked by Close. (A message already waiting as Receive
// starts is returned whatever the context: the pump releases or handles
// what a Receive returns.)
func (c *StreamConsumer) ReceiveInterruptible() bool { return true }

// waiting takes the first message waiting in c.msgs that is not parked
// (park), without waiting; ok is false when none waits.
func (c *StreamConsumer) waiting() (r streamReceipt, ok bool) {
	for {
		select {
		case r = <-c.msgs:
			// A message buffered here before an earlier message of its key
			// was requeued with a delay passed park on arrival; it is parked
			// now.
			if !c.park(r.pm) {
				return r, true
			}
		default:
			return streamReceipt{}, false
		}
	}
}

// await waits at most timeout (at least a millisecond) for a message that
// is not parked. It returns the zero receipt and no error when the timeout
// ran out or the stream ended cleanly, ctx's error when ctx ended, and the
// stream's error (a channel error) when the stream done belongs to ended
// with one.
func (c *StreamConsumer) await(ctx context.Context, timeout time.Duration, done chan struct{}) (streamReceipt, error) {
	t := time.NewTimer(max(timeout, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case r := <-c.msgs:
			if !c.park(r.pm) {
				return r, nil
			}
		case <-t.C:
			return streamReceipt{}, nil
		case <-ctx.Done():
			return streamReceipt{}, ctx.Err()
		case <-done:
			// The stream ended while waiting: report its error now (the next
			// Receive restarts it). Returning nothing would read as an answered
			// call, and a stream that fails as it opens (refused credentials)
			// would flap between failure and recovery ten times a second
			// instead of backing off.
			if err := c.ended(); err != nil {
				return streamReceipt{}, channelError(c.name, err)
			}
			return streamReceipt{}, nil // a clean end: the next Receive restarts it
		}
	}
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
		return unanswered(c.name, fmt.Sprintf("the stream delivered nothing for %s and a probe (GetSubscription) %s", StreamProbeAfter, probeFailed(r.Err)), r.Err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *StreamConsumer) convert(ctx context.Context, r streamReceipt) *message.Message {
	pm := r.pm
	m := decodeDelivery(ctx, c.opts, c.name, Wire{ID: pm.ID, Data: pm.Data, Attributes: pm.Attributes, OrderingKey: pm.OrderingKey}, pm.DeliveryAttempt)
	// The receipt is the client's message itself (a pointer in an
	// interface: nothing allocated a message), and when the client handed
	// it over is the message's arrival.
	m.Receipt = pm
	m.StoredID = pm.ID
	m.ReceivedAt = r.at // the pump's per-key hold-back judges it by its arrival; DeliveredAt
	return m
}

// streamReceipt is a stream delivery on its way from the client's callback
// to Receive: the client's message, and when the client handed it to the
// consumer (its lease's start, DeliveredAt; and the arrival the pump's
// per-key hold-back judges a buffered message by). A received message's
// Receipt is pm (a *pubsub.Message) and its ReceivedAt is at.
type streamReceipt struct {
	pm *pubsub.Message
	at time.Time
}

func streamMsg(m *message.Message) (*pubsub.Message, error) {
	pm, ok := m.Receipt.(*pubsub.Message)
	if !ok || pm == nil {
		return nil, fmt.Errorf("message %s: %w", m.Header.MessageID, ErrNoReceipt)
	}
	return pm, nil
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
	if pm, ok := m.Receipt.(*pubsub.Message); ok && pm != nil {
		return m.ReceivedAt // set by convert to the hand-over
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
	if err == nil && st == pubsub.AcknowledgeStatusSuccess {
		return nil // the text of an error is made only for one
	}
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
// delivered again before the delay. A subscription's RetryPolicy cannot
// give that floor: the service applies it on a best-effort basis, and
// Google's emulator redelivers a message's first Nack at once whatever
// the policy says. The policy's back-off then runs from the Nack, after
// the hold: a gap between deliveries is the delay plus the back-off
// (docs/commands/consume.md#pubsub-redelivery-gaps). A held message occupies one of
// the stream's flow-control slots while it waits; Close keeps a hold that
// ends within its CloseTimeout and Nacks a longer one at once (see Close).
// It returns an error only when m did not come from this consumer.
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
	// The RetryPolicy is best effort (and Google's emulator redelivers a
	// first Nack at once), so the message is held, its lease kept by the
	// client library (up to MaxExtension), and Nacked when the delay has
	// run out: it is not delivered again before the delay.
	delay = c.AppliedDelay(delay)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.delayed == nil {
		c.delayed = map[*pubsub.Message]hold{}
	}
	c.delayed[pm] = hold{until: time.Now().Add(delay), timer: time.AfterFunc(delay, func() {
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
	})}
	return nil
}

// hold is a message requeued with a delay: when the delay runs out, and the
// timer that Nacks it then.
type hold struct {
	until time.Time
	timer *time.Timer
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
// copy, then Ack; on a failed publish the original is released with the
// Router's growing delay (broker.RoutingFailureDelay, at most 600 s): held
// for the delay, then Nacked, as Requeue does, never left outstanding. It
// always settles and never returns an error.
func (c *StreamConsumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, r)
}

// Purge acknowledges every message of the subscription by seeking it to now.
func (c *StreamConsumer) Purge(ctx context.Context) error {
	return seekNow(ctx, c.client, c.name)
}

// Close stops the stream and waits for the client to end it, at most
// CloseTimeout or until ctx ends: the stream takes no new message, the
// messages the pump never took are Nacked, and the client sends its last
// acknowledgements and Nacks and then half-closes the stream
// (ShutdownBehaviorWaitForProcessing). A message waiting out a requeue
// delay that ends before closeHoldLimit of that bound is left to run it out
// (the client keeps its lease meanwhile) and Nacked as the delay ends, so a
// stop does not bring it back before its delay; a longer hold is Nacked at
// once and comes back early. The client library offers no way to hand
// back a message with a deadline of its own (ModifyAckDeadline with its ack
// id, as the pull consumer's Requeue does) nor to let a lease lapse while
// its graceful shutdown, the one that sends the last acknowledgements,
// waits for every message it delivered. A message received and never
// settled keeps the client waiting: Close then returns an error naming the
// subscription, and the message comes back after its ack deadline once the
// client is closed (nothing is lost).
func (c *StreamConsumer) Close(ctx context.Context) error {
	ctx, stop := context.WithTimeout(ctx, c.opts.CloseTimeout)
	defer stop()
	deadline, _ := ctx.Deadline()
	keepUntil := deadline.Add(-closeHoldLimit)
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	var now []*pubsub.Message
	for pm, h := range c.delayed {
		if h.until.After(keepUntil) {
			h.timer.Stop()
			delete(c.delayed, pm)
			now = append(now, pm)
		}
	}
	var parked []*pubsub.Message
	for k, ms := range c.parked {
		if !c.keyDelayed(k) {
			parked = append(parked, ms...)
			delete(c.parked, k)
		}
	}
	c.mu.Unlock()
	// Holds that would outlast the close are released now: the consumer
	// that keeps their leases is going away. The others are Nacked by their
	// timers (with the later messages of their keys), and the client's
	// graceful shutdown waits for those Nacks.
	for _, pm := range now {
		pm.Nack()
	}
	for _, pm := range parked {
		pm.Nack()
	}
	if cancel == nil {
		c.releaseHeld()
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
			c.releaseHeld()
			return fmt.Errorf("close stream consumer of %s: the stream did not end (a delivered message is unsettled, or the client is stuck): %w", c.name, ctx.Err())
		}
	}
}

// closeHoldLimit is how much of Close's bound is left for the client to
// send the Nack of a hold kept through Close and end the stream (measured on
// Google's emulator at load 29 on 2 cores: Close returned 5 to 12 ms after
// the Nack): a hold that ends later is Nacked as Close begins.
const closeHoldLimit = time.Second

// releaseHeld Nacks at once every message still waiting out a requeue
// delay, and the parked messages of their keys after them.
func (c *StreamConsumer) releaseHeld() {
	c.mu.Lock()
	held, parked := c.delayed, c.parked
	c.delayed, c.parked = nil, nil
	c.mu.Unlock()
	for pm, h := range held {
		h.timer.Stop()
		pm.Nack()
	}
	for _, ms := range parked {
		for _, pm := range ms {
			pm.Nack()
		}
	}
}

type streamSettler struct{ c *StreamConsumer }

func (s streamSettler) Acknowledge(ctx context.Context, m *message.Message) error {
	return s.c.Acknowledge(ctx, m)
}

// Release is Requeue: a hold of delay (at most 600 s) and then a Nack,
// which the subscription's RetryPolicy back-off follows when it has one.
func (s streamSettler) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return s.c.Requeue(ctx, m, delay)
}
