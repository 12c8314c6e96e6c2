package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/redact"
)

// RocketMQ wires subscriptions with transport: rocketmq from
// connections.rocketmq and the subscription's rocketmq block. RocketMQ has
// no topic creation from a client: makeChannels create logs that it cannot,
// validate checks each topic's route, assume makes no call.
type RocketMQ struct {
	// Calls, when not nil, counts the calls that move messages
	// (rocketmq.Connection.Calls).
	Calls broker.CallCounter
	// LookupTimeout cuts off each look-up of `lint --live` (Live); 0
	// means LiveLookupTimeout.
	LookupTimeout time.Duration
}

// CountingCalls returns a copy of t that counts into c (CallCounting).
func (t RocketMQ) CountingCalls(c broker.CallCounter) Transport {
	t.Calls = c
	return t
}

// rocketmqConnection is connections.rocketmq; from names where its
// endpoint came from, for errors ("" for the subscriptions file).
func rocketmqConnection(f *config.File, from string) rocketmq.Connection {
	c := f.Connections.RocketMQ
	if from == "" {
		from = "connections.rocketmq.endpoint in the subscriptions file"
	}
	return rocketmq.Connection{Endpoint: c.Endpoint, Namespace: c.Namespace, AccessKey: c.AccessKey, SecretKey: c.SecretKey, EndpointFrom: from}
}

// connection is rocketmqConnection counting into t.Calls.
func (t RocketMQ) connection(f *config.File, from string) rocketmq.Connection {
	c := rocketmqConnection(f, from)
	c.Calls = t.Calls
	return c
}

// Open applies makeChannels to s's topics and returns its simple
// consumer in s's consumer group.
func (t RocketMQ) Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*Channel, error) {
	conn := t.connection(f, "")
	if err := validateRocketMQChannels(ctx, f, s, broker.MakeChannels(s.MakeChannels), logger); err != nil {
		return nil, missingFix(err, s)
	}
	c, err := rocketmq.NewConsumer(ctx, rocketmq.ConsumerOptions{
		Connection: conn, Topic: s.ChannelName, ConsumerGroup: s.RocketMQ.ConsumerGroup, TagFilter: s.RocketMQ.Tag,
		InvisibleDuration: s.RocketMQ.InvisibleDuration, AwaitDuration: s.TimeOut, BufferSize: s.BufferSize,
		DeadLetterTopic: s.DeadLetterRoutingKey, InvalidTopic: s.InvalidMessageRoutingKey, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	return &Channel{Consumer: c, Close: c.Close}, nil
}

// Producer sends to RocketMQ topics through connections.rocketmq.
func (t RocketMQ) Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	return rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: t.connection(f, ""), Logger: logger})
}

// Addresses is the rocketmq:// scheme.
func (RocketMQ) Addresses() broker.AddressScheme { return rocketmq.URLScheme{} }

// ReplayFrom is the topic tg reads.
func (RocketMQ) ReplayFrom(tg *Target) broker.Address {
	return broker.Address{Kind: broker.AddressTopic, Name: tg.Dest}
}

// DLQReader reads the destination topic (a rejection topic or
// %DLQ%<consumerGroup>) with the ordinary consumer, so routed copies present
// their stamped count, in the reader group tg.group: RocketMQ keeps a
// topic's messages per consumer group, and dlq must never take messages
// from the subscription's own consumers. Each message is held for
// o.visibility (its invisible duration) and the long poll is o.wait. dlq
// never rejects, so the reader has no routes.
func (RocketMQ) DLQReader(ctx context.Context, tg *Target, o ReadOptions, logger *slog.Logger) (*Channel, error) {
	c, err := rocketmq.NewConsumer(ctx, rocketmq.ConsumerOptions{
		Connection: rocketmqConnection(tg.F, tg.EndpointFrom), Topic: tg.Dest, ConsumerGroup: tg.Group,
		InvisibleDuration: o.Visibility, AwaitDuration: o.Wait, BufferSize: rocketmq.MaxBufferSize, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	return &Channel{Consumer: c, Close: c.Close}, nil
}

// DLQProducer sends each replayed message to its Header.Topic. RocketMQ
// clients never create topics, so a replay to a missing topic fails with
// TOPIC_NOT_FOUND (after the client's retries) and the message stays.
func (RocketMQ) DLQProducer(ctx context.Context, tg *Target, logger *slog.Logger) (broker.Producer, error) {
	return rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmqConnection(tg.F, tg.EndpointFrom), Logger: logger})
}

// URLTarget reads rocketmq://TOPIC?group=G. TOPIC may be written
// raw (%DLQ%orders) or escaped (%25DLQ%25orders). The proxy is
// --rocketmq-endpoint, else $ROCKETMQ_ENDPOINT; namespace and keys come from
// $ROCKETMQ_NAMESPACE, $ROCKETMQ_ACCESS_KEY and $ROCKETMQ_SECRET_KEY.
func (RocketMQ) URLTarget(o URLOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*Target, error) {
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
	}
	topic := a.Name
	group := o.Group
	if group == "" {
		group = a.Params.Get("group")
	}
	if group == "" {
		group = DefaultURLReaderGroup
	}
	endpoint, from := o.RocketMQEndpoint, "the --rocketmq-endpoint flag"
	if endpoint == "" {
		endpoint, from = o.EnvVar("ROCKETMQ_ENDPOINT"), "ROCKETMQ_ENDPOINT"
	}
	if endpoint == "" {
		return nil, usageErr(fmt.Errorf("destination %q: no RocketMQ endpoint: pass --rocketmq-endpoint HOST:PORT or set ROCKETMQ_ENDPOINT", redact.Quoted(arg)))
	}
	source := "--rocketmq-endpoint"
	if o.RocketMQEndpoint == "" {
		source = "ROCKETMQ_ENDPOINT"
	}
	if err := checkHostPort(source, config.RocketMQEndpointShape, endpoint, true); err != nil {
		return nil, err
	}
	f := &config.File{Path: CommandLinePath}
	f.Connections.RocketMQ = config.RocketMQConnection{
		Endpoint: endpoint, Namespace: o.EnvVar("ROCKETMQ_NAMESPACE"),
		AccessKey: o.EnvVar("ROCKETMQ_ACCESS_KEY"), SecretKey: o.EnvVar("ROCKETMQ_SECRET_KEY"),
	}
	s := &config.Subscription{
		Name: topic, ChannelName: topic, RoutingKey: topic, MakeChannels: config.MakeChannelsValidate,
		Transport: config.TransportRocketMQ, RocketMQ: &config.RocketMQ{ConsumerGroup: group, Tag: "*"},
	}
	return &Target{F: f, S: s, Dest: topic, Group: group, EndpointFrom: from, URL: as.Format(broker.Address{Kind: a.Kind, Name: topic, Params: url.Values{"group": {group}}})}, nil
}

// CloseClients: each RocketMQ consumer and producer closes its own client.
func (RocketMQ) CloseClients() error { return nil }
