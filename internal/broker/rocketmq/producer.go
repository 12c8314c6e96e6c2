package rocketmq

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ProducerOptions configure a Producer (one RocketMQ publication).
type ProducerOptions struct {
	Connection
	// Topic is the publication's broker topic: Brighter sends to the
	// publication topic, not the header topic (reference §4.2). "" means each
	// message goes to its Header.Topic.
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
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("rocketmq: start producer at %s: %w", opts.Endpoint, err)
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
// invalid-message copies go through here.
func (p *Producer) Publish(ctx context.Context, topic string, m *message.Message) error {
	if topic == "" {
		return fmt.Errorf("rocketmq: send %s: no topic", m.Header.MessageID)
	}
	if _, err := p.p.Send(ctx, Encode(m, topic, p.opts.Tag, p.now())); err != nil {
		return fmt.Errorf("rocketmq: send %s to %s: %w", m.Header.MessageID, topic, err)
	}
	return nil
}

// Close stops the producer.
func (p *Producer) Close(ctx context.Context) error {
	if err := p.p.GracefulStop(); err != nil {
		return fmt.Errorf("rocketmq: stop producer: %w", err)
	}
	return nil
}
