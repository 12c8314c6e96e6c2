package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ProducerOptions configure a Producer (one RocketMQ publication).
type ProducerOptions struct {
	Connection
	// Topic is the publication's broker topic: Brighter sends to the
	// publication topic, not the header topic (docs/wire-format.md#rocketmq).
	// "" means each message goes to its Header.Topic.
	Topic string
	// Tag is the default tag, used when the bag has no BagTag; "" for none.
	Tag string
	// MaxAttempts is how many times the client tries one send (0 means the
	// client's default of 3).
	MaxAttempts int32
	// Logger receives the producer's records; nil means slog.Default().
	Logger *slog.Logger
}

// Producer publishes in Brighter's RocketMQ wire format (Encode). It
// implements broker.Producer and broker.Publisher (the Router's publisher
// for routed copies).
type Producer struct {
	opts ProducerOptions
	p    rmq.Producer
	now  func() time.Time
}

var (
	_ broker.Producer  = (*Producer)(nil)
	_ broker.Publisher = (*Producer)(nil)
)

// NewProducer starts a producer. With opts.Topic set it queries that topic's
// route now and returns an error when the topic does not exist; without it
// no broker call is made until the first send.
func NewProducer(ctx context.Context, opts ProducerOptions) (*Producer, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ConfigureClientLog(opts.ClientLogDir)
	var po []rmq.ProducerOption
	if opts.Topic != "" {
		po = append(po, rmq.WithTopics(opts.Topic))
	}
	if opts.MaxAttempts > 0 {
		po = append(po, rmq.WithMaxAttempts(opts.MaxAttempts))
	}
	p, err := rmq.NewProducer(opts.config(""), po...)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: make producer: %w", err)
	}
	initIsolated(p) // before Start: the client's v5.1.2 race (isolated.go)
	if err := p.Start(); err != nil {
		if notAuthorized(err) {
			return nil, fmt.Errorf("rocketmq: start producer at %s: %w: %w", opts.where(), broker.ErrNotAuthorized, err)
		}
		return nil, fmt.Errorf("rocketmq: start producer at %s: %w", opts.where(), err)
	}
	return &Producer{opts: opts, p: p, now: time.Now}, nil
}

// Send publishes m to the publication topic (or m.Header.Topic when the
// producer has none), with the message group from PartitionKey and keys and
// tag from the bag (Encode). It returns the client's error after its retries,
// wrapped with the topic and message id.
func (p *Producer) Send(ctx context.Context, m *message.Message) error {
	topic := p.opts.Topic
	if topic == "" {
		topic = m.Header.Topic
	}
	return p.Publish(ctx, topic, m)
}

// Publish sends m to topic (broker.Publisher): the Router's dead-letter and
// invalid-message copies go through here. A message over a proxy's default
// limits is refused before the call (CheckLimits; rmqtest would take it).
func (p *Producer) Publish(ctx context.Context, topic string, m *message.Message) error {
	if topic == "" {
		return fmt.Errorf("rocketmq: send %s: no topic", m.Header.MessageID)
	}
	out := Encode(m, topic, p.opts.Tag, p.now())
	if err := CheckLimits(out); err != nil {
		return fmt.Errorf("rocketmq: send %s to %s: %w", m.Header.MessageID, topic, err)
	}
	p.opts.count(topic, broker.CallPublish, "SendMessage")
	if _, err := p.p.Send(ctx, out); err != nil {
		// The proxy named, with where its address came from: a producer
		// connects on its first send, so an unreachable endpoint shows here
		// first (the client says only "create grpc conn failed").
		return classifySend(fmt.Errorf("rocketmq: send %s to %s at %s: %w", m.Header.MessageID, topic, p.opts.where(), err))
	}
	return nil
}

// classifySend wraps into err what kind of refusal it is: a send
// the broker refuses as it is wraps broker.ErrTooLarge (MESSAGE_BODY_TOO_LARGE,
// PAYLOAD_TOO_LARGE, MESSAGE_PROPERTIES_TOO_LARGE,
// REQUEST_HEADER_FIELDS_TOO_LARGE, or the client's own "message body size
// exceeds the threshold") or broker.ErrPermanent (BAD_REQUEST, an illegal
// topic, tag, key, message group, property key, message id or delivery
// time, a property conflicting with the message type, a corrupted
// message); a refused credential wraps broker.ErrNotAuthorized (retried
// with the usual back-off). TOPIC_NOT_FOUND is not permanent: it is the
// broker's state, which creating the topic cures, and R-19 wants such a
// message released and redelivered soon (as SQS does for a missing queue,
// Pub/Sub for a missing topic, AC-18). Other errors are returned as they
// are.
func classifySend(err error) error {
	if strings.Contains(err.Error(), "message body size exceeds the threshold") {
		return fmt.Errorf("%w: %w", broker.ErrTooLarge, err)
	}
	var st *rmq.ErrRpcStatus
	if !errors.As(err, &st) {
		return err
	}
	switch v2.Code(st.GetCode()) {
	case v2.Code_MESSAGE_BODY_TOO_LARGE, v2.Code_PAYLOAD_TOO_LARGE, v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, v2.Code_REQUEST_HEADER_FIELDS_TOO_LARGE:
		return fmt.Errorf("%w: %w", broker.ErrTooLarge, err)
	case v2.Code_BAD_REQUEST, v2.Code_ILLEGAL_TOPIC, v2.Code_ILLEGAL_MESSAGE_TAG, v2.Code_ILLEGAL_MESSAGE_KEY,
		v2.Code_ILLEGAL_MESSAGE_GROUP, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, v2.Code_ILLEGAL_MESSAGE_ID,
		v2.Code_ILLEGAL_DELIVERY_TIME, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, v2.Code_MESSAGE_CORRUPTED:
		return fmt.Errorf("%w: %w", broker.ErrPermanent, err)
	}
	if notAuthorized(err) {
		return fmt.Errorf("%w: %w", broker.ErrNotAuthorized, err)
	}
	return err
}

// notAuthorized reports whether err is the broker refusing the client's
// credentials or permissions (UNAUTHORIZED, FORBIDDEN). rocketmq-clients
// v5.1.2 formats the status of a failed start-up route query into text
// (%v), so the code's name is looked for in the text as well.
func notAuthorized(err error) bool {
	var st *rmq.ErrRpcStatus
	if errors.As(err, &st) {
		c := v2.Code(st.GetCode())
		return c == v2.Code_UNAUTHORIZED || c == v2.Code_FORBIDDEN
	}
	t := err.Error()
	return strings.Contains(t, "CODE: "+v2.Code_UNAUTHORIZED.String()+",") || strings.Contains(t, "CODE: "+v2.Code_FORBIDDEN.String()+",")
}

// Close stops the producer.
func (p *Producer) Close(ctx context.Context) error {
	if err := p.p.GracefulStop(); err != nil {
		return fmt.Errorf("rocketmq: stop producer: %w", err)
	}
	return nil
}
