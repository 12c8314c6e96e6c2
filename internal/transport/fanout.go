package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FanOut is a Transport whose topics can fan out: dlq replay and restore
// guard against giving other subscribers a copy (docs/commands/dlq.md
// "Fan-out").
type FanOut interface {
	// FansOut reports whether a replay from t publishes to topics that fan
	// out (SQS: only a subscription fed by SNS).
	FansOut(t *Target) bool
	// TopicSubscribers lists the subscriptions of topic (a name as a replay
	// from t publishes to it), named as SubscriberName names them.
	TopicSubscribers(ctx context.Context, t *Target, topic string) ([]string, error)
	// SubscriberName is s's subscription as TopicSubscribers names it.
	SubscriberName(t *Target, s *config.Subscription) string
	// ReaderName is the subscription t reads, as TopicSubscribers names
	// it ("" when t is not a subscription of a topic).
	ReaderName(t *Target) string
	// DirectQueue is where a copy for s alone goes ("" when the transport
	// cannot address one subscription of a topic).
	DirectQueue(t *Target, s *config.Subscription) string
	// DirectProducer publishes to the names DirectQueue returns.
	DirectProducer(ctx context.Context, t *Target, logger *slog.Logger) (broker.Producer, error)
}

var (
	_ FanOut = (*SQS)(nil)
	_ FanOut = (*GCP)(nil)
	_ FanOut = RocketMQ{}
)

// FansOut: a replay from an SQS queue publishes to SNS only for a
// subscription fed by SNS (channelType pubSub, or sqs:// with --sns).
func (t *SQS) FansOut(tg *Target) bool {
	return tg.S.SQS != nil && tg.S.SQS.ChannelType == config.ChannelPubSub
}

// TopicSubscribers lists the SNS topic's subscriptions: SQS subscribers by
// queue name. A missing topic has none (a publish to it fails per message).
func (t *SQS) TopicSubscribers(ctx context.Context, tg *Target, topic string) ([]string, error) {
	// No logger here: a fan-out check follows the read that made the
	// clients (with the command's logger).
	c, err := t.clientsFor(ctx, tg.F, nil)
	if err != nil {
		return nil, err
	}
	subs, err := sqs.TopicSubscribers(ctx, c, topic, tg.S.SQS.QueueType == config.QueueFIFO)
	if errors.Is(err, sqs.ErrTopicNotFound) {
		return nil, nil
	}
	return subs, err
}

// SubscriberName is s's queue name (FIFO-suffixed when s is FIFO).
func (t *SQS) SubscriberName(tg *Target, s *config.Subscription) string {
	return sqs.QueueName(s.ChannelName, s.SQS != nil && s.SQS.QueueType == config.QueueFIFO)
}

// ReaderName: a dead-letter queue is no subscription of a topic.
func (t *SQS) ReaderName(*Target) string { return "" }

// DirectQueue is the queue of an SNS-fed subscription (SNS→SQS: the copy
// can go to the subscriber's queue alone).
func (t *SQS) DirectQueue(tg *Target, s *config.Subscription) string {
	if s.SQS == nil || s.SQS.ChannelType != config.ChannelPubSub || s.ChannelName == "" {
		return ""
	}
	return s.ChannelName
}

// DirectProducer sends to SQS queues (FIFO as the subscription is) and
// never creates one.
func (t *SQS) DirectProducer(ctx context.Context, tg *Target, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.clientsFor(ctx, tg.F, logger)
	if err != nil {
		return nil, err
	}
	return sqs.NewProducer(c, sqs.ProducerOptions{Fifo: tg.S.SQS.QueueType == config.QueueFIFO, MakeChannels: broker.MakeValidate}), nil
}

// FansOut: every Pub/Sub topic hands each message to all its subscriptions.
func (t *GCP) FansOut(*Target) bool { return true }

// TopicSubscribers lists the topic's subscriptions by full name
// (projects/P/subscriptions/S). A missing topic has none (a publish to it
// fails per message).
func (t *GCP) TopicSubscribers(ctx context.Context, tg *Target, topic string) ([]string, error) {
	c, err := t.client(ctx, tg.F, tg.S)
	if err != nil {
		return nil, err
	}
	full := strings.TrimPrefix(gcp.URLScheme{}.Format(broker.Address{Project: GCPProject(tg), Kind: broker.AddressTopic, Name: topic}), "pubsub://")
	it := c.TopicAdminClient.ListTopicSubscriptions(ctx, &pubsubpb.ListTopicSubscriptionsRequest{Topic: full})
	var out []string
	for {
		s, err := it.Next()
		if err == iterator.Done {
			return out, nil
		}
		if status.Code(err) == codes.NotFound {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list subscriptions of %s: %w", full, err)
		}
		out = append(out, s)
	}
}

// SubscriberName is s's full subscription name, projects/P/subscriptions/S.
func (t *GCP) SubscriberName(tg *Target, s *config.Subscription) string {
	project := GCPProject(tg)
	if s.GCP != nil && s.GCP.ProjectID != "" {
		project = s.GCP.ProjectID
	}
	return gcp.SubscriptionName(project, s.ChannelName)
}

// ReaderName is the full name of the subscription tg reads.
func (t *GCP) ReaderName(tg *Target) string {
	return gcp.SubscriptionName(GCPProject(tg), tg.Dest)
}

// DirectQueue: Pub/Sub cannot publish to one subscription of a topic.
func (t *GCP) DirectQueue(*Target, *config.Subscription) string { return "" }

// DirectProducer fails: Pub/Sub cannot publish to one subscription.
func (t *GCP) DirectProducer(context.Context, *Target, *slog.Logger) (broker.Producer, error) {
	return nil, errors.New("pub/sub has no per-subscription destination")
}

// ErrNoGroupListing is RocketMQ's answer to "who else reads this topic":
// RocketMQ 5's client protocol has no call that lists a topic's consumer
// groups, and a topic keeps every message for each group subscribed to it.
var ErrNoGroupListing = errors.New("every consumer group subscribed to it receives the copy, and RocketMQ 5 has no call that lists a topic's consumer groups")

// FansOut: a RocketMQ topic keeps each message for every consumer group
// subscribed to it, so a replay to a message's originalTopic reaches them
// all.
func (RocketMQ) FansOut(*Target) bool { return true }

// TopicSubscribers cannot be asked of RocketMQ (ErrNoGroupListing); the
// error names the consumer groups of the subscriptions file that read
// topic, which receive the copy for certain.
func (RocketMQ) TopicSubscribers(_ context.Context, tg *Target, topic string) ([]string, error) {
	var groups []string
	if tg.F != nil {
		for _, s := range tg.F.Subscriptions {
			if s.Transport == config.TransportRocketMQ && s.RoutingKey == topic && s.RocketMQ != nil && !slices.Contains(groups, s.RocketMQ.ConsumerGroup) {
				groups = append(groups, s.RocketMQ.ConsumerGroup)
			}
		}
	}
	if len(groups) == 0 {
		return nil, ErrNoGroupListing
	}
	return nil, fmt.Errorf("%w (of this subscriptions file: %s %s; others may exist)", ErrNoGroupListing, pluralWord(len(groups), "group"), strings.Join(groups, ", "))
}

// SubscriberName is s's consumer group.
func (RocketMQ) SubscriberName(_ *Target, s *config.Subscription) string {
	if s.RocketMQ == nil {
		return ""
	}
	return s.RocketMQ.ConsumerGroup
}

// ReaderName: a dead-letter topic (%DLQ%<group> or a rejection topic) is
// read by dlq's reader group, no subscription: a restore into it is not
// guarded.
func (RocketMQ) ReaderName(*Target) string { return "" }

// DirectQueue: a RocketMQ client cannot publish to one consumer group of a
// topic (its retry topic %RETRY%<group> is the broker's own).
func (RocketMQ) DirectQueue(*Target, *config.Subscription) string { return "" }

// DirectProducer fails: RocketMQ cannot publish to one consumer group.
func (RocketMQ) DirectProducer(context.Context, *Target, *slog.Logger) (broker.Producer, error) {
	return nil, errors.New("rocketmq has no per-consumer-group destination")
}

// pluralWord is noun, with an s when n is not 1.
func pluralWord(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
