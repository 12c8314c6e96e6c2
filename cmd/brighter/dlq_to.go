package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
)

// replayTo resolves --to for a replay from t, before anything is read: a
// URL of t's transport (sqs://QUEUE, pubsub://projects/P/topics/T,
// rocketmq://TOPIC, memory://QUEUE) becomes the name its producer publishes
// to. An explicitly empty --to, a URL of another transport, and a --to that
// resolves (as the transport resolves names) to the destination being read
// are usage errors: a replay into its own dead-letter destination would
// only strip the messages' rejection metadata. "" means each message's
// originalTopic.
func (o *dlqReplayOptions) replayTo(ctx context.Context, t *dlqTarget, dt dlqTransport, logger *slog.Logger) (string, error) {
	if !o.toSet {
		return "", nil
	}
	raw := o.to
	if strings.TrimSpace(raw) == "" {
		return "", usageErr(errors.New("--to is empty: give a topic or queue, or leave --to out to replay each message to its originalTopic"))
	}
	name, err := toName(t, dt, raw)
	if err != nil {
		return "", usageErr(fmt.Errorf("--to %q: %w", raw, err))
	}
	self, err := isSelf(ctx, t, dt, name, logger)
	if err != nil {
		return "", err
	}
	if self {
		return "", usageErr(fmt.Errorf("--to %q: that is %s, the dead-letter destination being read; replaying into it would only strip its messages' rejection metadata (leave --to out to replay each message to its originalTopic)", raw, t.url))
	}
	return name, nil
}

// toName turns --to into the name t's producer publishes to, a URL being
// parsed by the scheme of t's transport.
func toName(t *dlqTarget, dt dlqTransport, raw string) (string, error) {
	scheme, _, isURL := strings.Cut(raw, "://")
	if !isURL {
		return raw, nil
	}
	as := dt.addresses()
	if scheme != as.Forms().Scheme {
		return "", fmt.Errorf("a URL of scheme %s, but %s is read over %s: give a name, or a URL of the form %s", scheme, t.url, t.s.Transport, as.Forms().Publish)
	}
	if t.s.Transport == config.TransportSQS && t.s.SQS.ChannelType == config.ChannelPubSub {
		return "", fmt.Errorf("replays from %s are published to SNS topics, and an sqs:// URL names a queue: give the topic's name", t.url)
	}
	a, err := as.Parse(raw)
	if err != nil {
		return "", err
	}
	switch t.s.Transport {
	case config.TransportGCP:
		if a.Kind != broker.AddressTopic {
			return "", fmt.Errorf("a replay publishes to a topic: want %s", as.Forms().Publish)
		}
		if a.Project == gcpProject(t) {
			return a.Name, nil
		}
		return "projects/" + a.Project + "/topics/" + a.Name, nil
	case config.TransportRocketMQ:
		if len(a.Params) > 0 {
			return "", fmt.Errorf("a publish has no consumer group: want %s", as.Forms().Publish)
		}
	case config.TransportMemory:
		if file := a.Params.Get("file"); file != "" && filepath.Clean(file) != filepath.Clean(t.s.Memory.Output) {
			return "", fmt.Errorf("a replay writes only into the file it reads (%s)", t.s.Memory.Output)
		}
	}
	return a.Name, nil
}

// isSelf reports whether name, as t's transport resolves it, is the
// destination t reads.
func isSelf(ctx context.Context, t *dlqTarget, dt dlqTransport, name string, logger *slog.Logger) (bool, error) {
	switch t.s.Transport {
	case config.TransportSQS:
		// The producer publishes to QueueName (SNS: TopicName, the same
		// name under 80 characters), as the reader reads QueueName(dest):
		// dots become underscores, a FIFO name ends in .fifo.
		fifo := t.s.SQS.QueueType == config.QueueFIFO
		return sqs.QueueName(name, fifo) == sqs.QueueName(t.dest, fifo), nil
	case config.TransportGCP:
		project := gcpProject(t)
		return gcpTopicPath(project, name) == gcpTopicPath(project, gcpSourceTopic(ctx, t, dt, logger)), nil
	}
	return name == t.dest, nil
}

// gcpProject is the project of a Pub/Sub destination.
func gcpProject(t *dlqTarget) string {
	if t.s.GCP != nil && t.s.GCP.ProjectID != "" {
		return t.s.GCP.ProjectID
	}
	return t.f.Connections.GCP.ProjectID
}

// gcpTopicPath is projects/P/topics/T for a topic id or full name.
func gcpTopicPath(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// gcpSourceTopic is the topic the subscription t reads is attached to: asked
// of Pub/Sub (GetSubscription) when it answers within a few seconds, else as
// the subscriptions file and makeChannels name it (the native target's
// deadLetterPolicy.topic; a rejection topic's subscription has the topic's
// id; so, by that convention, has a subscription named by URL).
func gcpSourceTopic(ctx context.Context, t *dlqTarget, dt dlqTransport, logger *slog.Logger) string {
	if g, ok := dt.(*gcpTransport); ok {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		topic, err := g.dlqSourceTopic(lctx, t)
		cancel()
		if err == nil && topic != "" {
			return topic
		}
		logger.Debug("could not look up the subscription's topic; comparing --to with the configured name", "subscription", t.url, "error", err)
	}
	if t.s.GCP != nil && t.s.GCP.DeadLetterPolicy != nil && t.dest == gcpNativeSubscription(t.s) {
		return t.s.GCP.DeadLetterPolicy.Topic
	}
	return t.dest
}

// gcpNativeSubscription is the subscription of a Pub/Sub subscription's
// deadLetterPolicy: its subscription, else dlq-<channelName>.
func gcpNativeSubscription(s *config.Subscription) string {
	if sub := s.GCP.DeadLetterPolicy.Subscription; sub != "" {
		return sub
	}
	return "dlq-" + s.ChannelName
}
