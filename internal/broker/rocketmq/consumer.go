package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// Defaults of ConsumerOptions (Brighter's RocketSubscription,
// docs/configuration.md#transport-blocks, except AwaitDuration, which Brighter
// sets to one minute).
const (
	// DefaultInvisibleDuration is how long a received message stays
	// invisible (30 s).
	DefaultInvisibleDuration = 30 * time.Second
	// DefaultAwaitDuration is the long-polling wait of one receive (20 s).
	DefaultAwaitDuration = 20 * time.Second
	// DefaultTagFilter subscribes to every tag.
	DefaultTagFilter = "*"
	// MaxBufferSize is the largest batch one receive asks for.
	MaxBufferSize = 32
)

// Stable log message texts of the consumer (tests match them).
const (
	LogUndecodable  = "rocketmq message cannot be decoded; presenting it as unacceptable"
	LogLeaseExpired = "rocketmq invisible duration lapsed before acknowledge; the message will be redelivered"
)

// ErrLeaseExpired is returned by Acknowledge when the message's invisible
// duration (its lease) has already lapsed: a real broker refuses the receipt
// handle, and the Go client would report success anyway
// (docs/emulators.md#rmqtest-rocketmq-5), so the consumer does not send the
// Ack and says so. It wraps broker.ErrStaleReceipt.
var ErrLeaseExpired = fmt.Errorf("rocketmq: invisible duration lapsed; receipt handle is %w", broker.ErrStaleReceipt)

// Connection says how to reach a RocketMQ 5 proxy. The CLI fills it from the
// subscriptions file or the environment.
type Connection struct {
	// Endpoint is the proxy's gRPC address, host:port (TLS is always used).
	Endpoint string
	// Namespace is the resource namespace, "" for none.
	Namespace string
	// AccessKey and SecretKey sign every request; both empty means none.
	AccessKey, SecretKey string
	// ClientLogDir is where the client library's own log file goes; ""
	// means DefaultClientLogDir (see ConfigureClientLog).
	ClientLogDir string
	// EndpointFrom names where Endpoint came from, for errors
	// ("connections.rocketmq.endpoint in the subscriptions file", "the
	// --rocketmq-endpoint flag", "ROCKETMQ_ENDPOINT"); "" names nothing.
	EndpointFrom string
	// Calls, when not nil, counts the calls that move messages
	// (ReceiveMessage, AckMessage, ChangeInvisibleDuration, SendMessage):
	// the Go client takes no gRPC interceptor for the connections it makes
	// itself, so they are counted here, around the client's calls, one per
	// call (a send the client retries counts once). The client's own
	// QueryRoute, Heartbeat and Telemetry calls are not counted.
	Calls broker.CallCounter
}

// TransportName is the transport's name in the subscriptions file, the
// transport label of the calls it counts.
const TransportName = "rocketmq"

// count counts one call of kind to topic, when the connection counts calls.
func (c Connection) count(topic string, kind broker.CallKind, op string) {
	if c.Calls != nil {
		c.Calls.CountCall(broker.Call{Transport: TransportName, Channel: topic, Kind: kind, Operation: op})
	}
}

// where names the endpoint in errors: Endpoint and, when known, where it
// came from.
func (c Connection) where() string {
	if c.EndpointFrom == "" {
		return c.Endpoint
	}
	return c.Endpoint + " (" + c.EndpointFrom + ")"
}

func (c Connection) config(group string) *rmq.Config {
	return &rmq.Config{
		Endpoint: c.Endpoint, NameSpace: c.Namespace, ConsumerGroup: group,
		Credentials: &credentials.SessionCredentials{AccessKey: c.AccessKey, AccessSecret: c.SecretKey},
	}
}

func (c Connection) validate() error {
	if c.Endpoint == "" {
		return errors.New("rocketmq: endpoint is required (host:port of the proxy)")
	}
	return nil
}

// ConsumerOptions configure a Consumer (one RocketMQ subscription).
type ConsumerOptions struct {
	Connection
	// Topic is the topic to consume.
	Topic string
	// ConsumerGroup is the consumer group; required.
	ConsumerGroup string
	// TagFilter is a TAG expression ("*", "a || b"); "" means "*".
	TagFilter string
	// InvisibleDuration is how long a received message stays invisible
	// before RocketMQ delivers it again with DeliveryAttempt + 1;
	// 0 means DefaultInvisibleDuration.
	InvisibleDuration time.Duration
	// AwaitDuration is the long-polling wait of one receive; 0 means
	// DefaultAwaitDuration. The pump's receive timeout is not used: the
	// client fixes the wait when it is made.
	AwaitDuration time.Duration
	// BufferSize is how many messages one receive asks for (1..32; 0 means 1).
	BufferSize int
	// DeadLetterTopic and InvalidTopic are the rejection destinations
	// (deadLetterRoutingKey, invalidMessageRoutingKey), "" for none.
	DeadLetterTopic, InvalidTopic string
	// Logger receives the consumer's and the Router's records; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Consumer reads one RocketMQ topic with a SimpleConsumer. It implements
// broker.Consumer, broker.Settler and broker.LeaseExtender (lease.go);
// rejection routing is broker.Router with
// a Producer as Publisher.
type Consumer struct {
	opts     ConsumerOptions
	sc       rmq.SimpleConsumer
	producer *Producer
	router   broker.Router
	log      *slog.Logger
	now      func() time.Time
}

var (
	_ broker.Consumer = (*Consumer)(nil)
	_ broker.Settler  = (*Consumer)(nil)
)

// receipt is what message.Message.Receipt holds for a received message: the
// MessageView (whose ReceiptHandle the client updates on
// ChangeInvisibleDuration) and the lease end this consumer knows of. sem,
// a one-slot lock, is held for each call on the message (lock), and by a
// ChangeInvisibleDuration the caller stopped waiting for until the client
// ends it (changeInvisible).
type receipt struct {
	sem      chan struct{}
	mv       *rmq.MessageView
	leaseEnd time.Time
}

func newReceipt(mv *rmq.MessageView, leaseEnd time.Time) *receipt {
	return &receipt{sem: make(chan struct{}, 1), mv: mv, leaseEnd: leaseEnd}
}

// lock takes r for one call, waiting no longer than ctx: a
// ChangeInvisibleDuration abandoned at its deadline may still hold it for
// up to the client's request timeout.
func (r *receipt) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("an earlier call on the message is still running: %w", ctx.Err())
	}
}

func (r *receipt) unlock() { <-r.sem }

// ErrCallAbandoned is wrapped by a requeue or a lease extension whose
// ChangeInvisibleDuration did not answer before the call's deadline
// (callTimeout): the client's call takes no context, so the consumer stops
// waiting for it at the deadline and the client ends it after its own
// request timeout (3 s); whether the broker applied it is unknown
// (ADR 0003).
var ErrCallAbandoned = errors.New("rocketmq: ChangeInvisibleDuration did not answer within the call's deadline; abandoned to the client's request timeout")

// changeInvisible makes one ChangeInvisibleDuration(d) of r's message,
// bounded by ctx's deadline as well as the client's request timeout: the
// call runs in its own goroutine, which holds r (locked by the caller)
// until the client returns and then records the new lease end; the caller
// returns at ctx's end with ErrCallAbandoned and ctx's error. The client's
// request timeout ends the goroutine, so none outlives it.
func (c *Consumer) changeInvisible(ctx context.Context, r *receipt, d time.Duration) error {
	done := make(chan error, 1)
	go func() {
		defer r.unlock()
		start := c.now()
		c.opts.count(c.opts.Topic, broker.CallVisibility, "ChangeInvisibleDuration")
		err := c.sc.ChangeInvisibleDuration(r.mv, d)
		if err == nil {
			r.leaseEnd = start.Add(d)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrCallAbandoned, ctx.Err())
	}
}

// NewConsumer starts a SimpleConsumer on opts.Topic (one QueryRoute and a
// Telemetry stream) and a Producer for rejection routing (no call until the
// first routed message). It returns an error for a missing endpoint or
// consumer group, or when the route cannot be queried (for example
// TOPIC_NOT_FOUND).
func NewConsumer(ctx context.Context, opts ConsumerOptions) (*Consumer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.ConsumerGroup == "" {
		return nil, errors.New("rocketmq: consumerGroup is required")
	}
	if opts.Topic == "" {
		return nil, errors.New("rocketmq: topic is required")
	}
	if opts.TagFilter == "" {
		opts.TagFilter = DefaultTagFilter
	}
	if opts.InvisibleDuration <= 0 {
		opts.InvisibleDuration = DefaultInvisibleDuration
	}
	if opts.AwaitDuration <= 0 {
		opts.AwaitDuration = DefaultAwaitDuration
	}
	opts.BufferSize = min(max(opts.BufferSize, 1), MaxBufferSize)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ConfigureClientLog(opts.ClientLogDir)
	sc, err := rmq.NewSimpleConsumer(opts.config(opts.ConsumerGroup),
		rmq.WithAwaitDuration(opts.AwaitDuration),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{opts.Topic: rmq.NewFilterExpression(opts.TagFilter)}),
	)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: make consumer of %s for group %s: %w", opts.Topic, opts.ConsumerGroup, err)
	}
	if err := sc.Start(); err != nil {
		if notAuthorized(err) {
			// One clear start-up error naming the endpoint.
			return nil, fmt.Errorf("rocketmq: start consumer of %s for group %s at %s: %w: %w", opts.Topic, opts.ConsumerGroup, opts.where(), broker.ErrNotAuthorized, err)
		}
		return nil, fmt.Errorf("rocketmq: start consumer of %s for group %s at %s: %w", opts.Topic, opts.ConsumerGroup, opts.where(), err)
	}
	p, err := NewProducer(ctx, ProducerOptions{Connection: opts.Connection, Logger: log})
	if err != nil {
		_ = sc.GracefulStop()
		return nil, err
	}
	c := &Consumer{opts: opts, sc: sc, producer: p, log: log, now: time.Now}
	c.router = broker.Router{DeadLetter: opts.DeadLetterTopic, Invalid: opts.InvalidTopic, Source: opts.Topic, Publisher: p, Settler: c, Logger: log}
	return c, nil
}

// Receive asks for up to BufferSize messages, long-polling for at most
// AwaitDuration (the timeout argument is not used; see ConsumerOptions).
// Each message presents DeliveryCount and carries its MessageView as
// Receipt. A message Decode refuses is presented as MT_UNACCEPTABLE with its
// receipt (logged at Warn). "No message" is an empty slice; a cancelled ctx
// is an empty slice too. Any other failure wraps broker.ErrChannelFailure.
func (c *Consumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	return c.receive(ctx, c.opts.BufferSize)
}

func (c *Consumer) receive(ctx context.Context, limit int) ([]*message.Message, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	start := c.now()
	c.opts.count(c.opts.Topic, broker.CallReceive, "ReceiveMessage")
	mvs, err := c.sc.Receive(ctx, int32(limit), c.opts.InvisibleDuration)
	if err != nil {
		var st *rmq.ErrRpcStatus
		if errors.As(err, &st) && st.GetCode() == int32(v2.Code_MESSAGE_NOT_FOUND) {
			return nil, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if lostResponse(err, c.now().Sub(start), c.opts.AwaitDuration) {
			return nil, fmt.Errorf("rocketmq: receive from %s for group %s: %w: the client lost the broker's answer (%w); "+
				"any message it carried comes back after the invisible duration with delivery attempt + 1",
				c.opts.Topic, c.opts.ConsumerGroup, broker.ErrChannelFailure, err)
		}
		if notAuthorized(err) {
			// A credential can be renewed or a permission granted while
			// the consumer runs: back off, as for any channel failure.
			return nil, fmt.Errorf("rocketmq: receive from %s for group %s at %s: %w: %w: %w", c.opts.Topic, c.opts.ConsumerGroup, c.opts.where(), broker.ErrChannelFailure, broker.ErrNotAuthorized, err)
		}
		return nil, fmt.Errorf("rocketmq: receive from %s for group %s: %w: %w", c.opts.Topic, c.opts.ConsumerGroup, broker.ErrChannelFailure, err)
	}
	out := make([]*message.Message, 0, len(mvs))
	for _, mv := range mvs {
		out = append(out, c.present(mv, start))
	}
	return out, nil
}

// clientDeadlineText is the whole error text rocketmq-clients v5.1.2 returns
// when its receive context is done. It also returns it when the stream has
// already ended, because the stream reader cancels that context right after
// it signals completion, and a select that sees both may take either (ADR
// 0003). Such a receive returns well before its deadline.
const clientDeadlineText = "[error] CODE=DEADLINE_EXCEEDED"

// lostResponse reports whether err is the client's deadline error returned
// before the receive's own deadline (await plus the client's 3 s request
// timeout): the broker answered, and the client dropped the answer.
func lostResponse(err error, elapsed, await time.Duration) bool {
	return err.Error() == clientDeadlineText && elapsed < await+2*time.Second
}

// present decodes one MessageView and applies the delivery-count rule. The
// lease is counted from before the receive call, so this consumer's idea of
// it ends no later than the broker's.
func (c *Consumer) present(mv *rmq.MessageView, start time.Time) *message.Message {
	w := WireFromView(mv)
	attempt := mv.GetDeliveryAttempt()
	m, err := Decode(w, c.now())
	if err != nil {
		// Decode returned the message as MT_UNACCEPTABLE, identity kept.
		c.log.Warn(LogUndecodable, "message_id", m.Header.MessageID, "rocketmq_message_id", w.MessageID, "subscription", c.opts.Topic, "reason", err.Error())
	}
	m.Header.HandledCount = DeliveryCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())
	m.DeliveryAttempt = int(attempt)
	m.Receipt = newReceipt(mv, start.Add(c.opts.InvisibleDuration))
	m.StoredID = w.MessageID
	return m
}

func (c *Consumer) hold(m *message.Message) (*receipt, error) {
	r, ok := m.Receipt.(*receipt)
	if !ok || r == nil || r.mv == nil {
		return nil, fmt.Errorf("rocketmq: message %s has no RocketMQ receipt", m.Header.MessageID)
	}
	return r, nil
}

// Acknowledge sends Ack for the message's current receipt handle. When this
// consumer knows the lease has lapsed it sends nothing and returns
// ErrLeaseExpired (logged at Warn): the broker would refuse the handle and
// the client would report success (docs/emulators.md#rmqtest-rocketmq-5).
// What it cannot detect, a broker refusing a handle it believes current,
// the client swallows; the message then reappears after its invisible duration (ADR
// 0003).
func (c *Consumer) Acknowledge(ctx context.Context, m *message.Message) error {
	r, err := c.hold(m)
	if err != nil {
		return err
	}
	if err := r.lock(ctx); err != nil {
		return fmt.Errorf("rocketmq: acknowledge %s: %w", m.Header.MessageID, err)
	}
	defer r.unlock()
	if !c.now().Before(r.leaseEnd) {
		c.log.Warn(LogLeaseExpired, "message_id", m.Header.MessageID, "subscription", c.opts.Topic)
		return fmt.Errorf("rocketmq: acknowledge %s: %w", m.Header.MessageID, ErrLeaseExpired)
	}
	c.opts.count(c.opts.Topic, broker.CallAck, "AckMessage")
	if err := c.sc.Ack(ctx, r.mv); err != nil {
		return fmt.Errorf("rocketmq: acknowledge %s: %w", m.Header.MessageID, err)
	}
	r.leaseEnd = time.Time{}
	return nil
}

// Requeue makes the message visible again after delay with one
// ChangeInvisibleDuration (NFR-3); RocketMQ then redelivers it with
// DeliveryAttempt + 1, so the next presented count is one more. A
// negative delay is 0. It returns the broker's refusal (a stale handle, for
// example) as an error, and ErrCallAbandoned when the call does not answer
// before ctx's deadline (the client's call takes no context; see
// changeInvisible).
func (c *Consumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	r, err := c.hold(m)
	if err != nil {
		return err
	}
	delay = c.AppliedDelay(delay)
	if err := r.lock(ctx); err != nil {
		return fmt.Errorf("rocketmq: requeue %s: %w", m.Header.MessageID, err)
	}
	if err := c.changeInvisible(ctx, r, delay); err != nil {
		return staleHandle(fmt.Errorf("rocketmq: requeue %s with ChangeInvisibleDuration(%s): %w", m.Header.MessageID, delay, err))
	}
	return nil
}

// AppliedDelay returns the invisible duration a Requeue with delay sets
// (broker.DelayApplier): delay bounded to 0..12 h, RocketMQ's longest
// invisible duration (the proxy's maxInvisibleTimeMills,
// limits.RocketMQ.MaxLease), which a broker refuses past; a longer delay
// is applied as 12 h.
func (c *Consumer) AppliedDelay(delay time.Duration) time.Duration {
	return min(max(delay, 0), limits.RocketMQ.MaxLease)
}

// Release makes the message visible again after delay:
// ChangeInvisibleDuration (broker.Settler, used by rejection routing when a
// publish fails, R-19; the delay grows with the delivery attempt).
func (c *Consumer) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return c.Requeue(ctx, m, delay)
}

// Reject routes the message through broker.Router: the routed copy is sent to
// the dead-letter or invalid-message topic, then the original is acknowledged;
// a failed send releases it (Release: ChangeInvisibleDuration to
// broker.RoutingFailureDelay) and logs an Error;
// no destination acknowledges it with a Warning (R-15..R-19). It always
// settles the message.
func (c *Consumer) Reject(ctx context.Context, m *message.Message, rej message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, rej)
}

// Purge acknowledges every message the consumer group can currently receive
// from the topic (RocketMQ has no purge call for a group): it receives and
// acknowledges until a receive comes back empty, so it takes at least one
// AwaitDuration.
func (c *Consumer) Purge(ctx context.Context) error {
	for ctx.Err() == nil {
		ms, err := c.Receive(ctx, 0)
		if err != nil {
			return fmt.Errorf("rocketmq: purge %s: %w", c.opts.Topic, err)
		}
		if len(ms) == 0 {
			return nil
		}
		for _, m := range ms {
			if err := c.Acknowledge(ctx, m); err != nil {
				return fmt.Errorf("rocketmq: purge %s: %w", c.opts.Topic, err)
			}
		}
	}
	return ctx.Err()
}

// Close stops the SimpleConsumer and the routing producer; messages still
// held are left to the broker and reappear after their invisible duration.
func (c *Consumer) Close(ctx context.Context) error {
	err := c.sc.GracefulStop()
	perr := c.producer.Close(ctx)
	if err != nil {
		return fmt.Errorf("rocketmq: stop consumer of %s: %w", c.opts.Topic, errors.Join(err, perr))
	}
	return perr
}
