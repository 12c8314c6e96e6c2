package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/config"
)

// rocketmqTransport wires subscriptions with transport: rocketmq from
// connections.rocketmq and the subscription's rocketmq block. RocketMQ has
// no topic creation from a client: makeChannels create logs that it cannot,
// validate checks each topic's route, assume makes no call.
type rocketmqTransport struct{}

func rocketmqConnection(f *config.File) rocketmq.Connection {
	c := f.Connections.RocketMQ
	return rocketmq.Connection{Endpoint: c.Endpoint, Namespace: c.Namespace, AccessKey: c.AccessKey, SecretKey: c.SecretKey}
}

func (rocketmqTransport) open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*openedChannel, error) {
	conn := rocketmqConnection(f)
	topics := []string{s.ChannelName}
	for _, t := range []string{s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey} {
		if t != "" {
			topics = append(topics, t)
		}
	}
	ch := rocketmq.Channels{Connection: conn, Make: broker.MakeChannels(s.MakeChannels), Topics: topics, Logger: logger}
	if err := ch.EnsureChannels(ctx); err != nil {
		return nil, fmt.Errorf("makeChannels %s: %w", s.MakeChannels, err)
	}
	c, err := rocketmq.NewConsumer(ctx, rocketmq.ConsumerOptions{
		Connection: conn, Topic: s.ChannelName, ConsumerGroup: s.RocketMQ.ConsumerGroup, TagFilter: s.RocketMQ.Tag,
		InvisibleDuration: s.RocketMQ.InvisibleDuration, AwaitDuration: s.TimeOut, BufferSize: s.BufferSize,
		DeadLetterTopic: s.DeadLetterRoutingKey, InvalidTopic: s.InvalidMessageRoutingKey, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	return &openedChannel{consumer: c, close: c.Close}, nil
}

func (rocketmqTransport) producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	return rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmqConnection(f), Logger: logger})
}

func (rocketmqTransport) addresses() broker.AddressScheme { return rocketmq.URLScheme{} }

// dlqReader reads the destination topic (a rejection topic or
// %DLQ%<consumerGroup>) with the ordinary consumer, so routed copies present
// their stamped count, in the reader group tg.group: RocketMQ keeps a
// topic's messages per consumer group, and dlq must never take messages
// from the subscription's own consumers. Each message is held for
// o.visibility (its invisible duration) and the long poll is o.wait. dlq
// never rejects, so the reader has no routes.
func (rocketmqTransport) dlqReader(ctx context.Context, tg *dlqTarget, o dlqReadOptions, logger *slog.Logger) (*openedChannel, error) {
	c, err := rocketmq.NewConsumer(ctx, rocketmq.ConsumerOptions{
		Connection: rocketmqConnection(tg.f), Topic: tg.dest, ConsumerGroup: tg.group,
		InvisibleDuration: o.visibility, AwaitDuration: o.wait, BufferSize: rocketmq.MaxBufferSize, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	return &openedChannel{consumer: c, close: c.Close}, nil
}

// dlqProducer sends each replayed message to its Header.Topic. RocketMQ
// clients never create topics, so a replay to a missing topic fails with
// TOPIC_NOT_FOUND (after the client's retries) and the message stays.
func (rocketmqTransport) dlqProducer(ctx context.Context, tg *dlqTarget, logger *slog.Logger) (broker.Producer, error) {
	return rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmqConnection(tg.f), Logger: logger})
}
