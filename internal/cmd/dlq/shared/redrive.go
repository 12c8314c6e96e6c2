package shared

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

// RedriveSource is where a message without rejection metadata read from t
// came from, when that is knowable and single: the one subscription of the
// subscriptions file (its queue, channelName, on SQS without SNS; else its
// routingKey, the topic it reads) (t's, or -c's for a destination
// named by URL) whose native redrive target (SQS redrivePolicy, Pub/Sub
// deadLetterPolicy, RocketMQ %DLQ%<consumerGroup>) is t's destination;
// else, on SQS, the one queue whose redrive policy names t's queue, asked
// of the broker (ListDeadLetterSourceQueues, within a few seconds). It
// returns "" when there is none or more than one, or when the broker
// cannot tell (fauxqs does not implement the call; logged at Debug).
func (o *Options) RedriveSource(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) string {
	as := dt.Addresses()
	from := dt.ReplayFrom(t)
	var names []string
	if f := o.redriveFile(t); f != nil {
		for _, s := range f.Subscriptions {
			n := redriveName(s)
			if s.Transport != t.S.Transport || n == "" || !redrivesTo(as, from, s) {
				continue
			}
			if !slices.ContainsFunc(names, func(m string) bool { return as.Same(n, addressNamed(from, m)) }) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 && from.Kind == broker.AddressQueue {
		if asker, ok := dt.(transport.RedriveSourceAsker); ok {
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			got, err := asker.RedriveSources(lctx, t, logger)
			cancel()
			if err != nil {
				logger.Debug("could not ask which queues' redrive policies target this one", "destination", t.URL, "error", err)
			}
			names = got
		}
	}
	if len(names) != 1 {
		return ""
	}
	return names[0]
}

// redriveFile is the subscriptions file that says which subscriptions
// redrive to t: t's own, else for a destination named by URL the file at
// --config when there is one that reads (nil otherwise).
func (o *Options) redriveFile(t *transport.Target) *config.File {
	if t.F != nil && t.F.Path != commandLinePath {
		return t.F
	}
	if _, err := os.Stat(o.ConfigPath); err != nil {
		return nil
	}
	f, err := cmdutil.LoadConfig(o.IO, o.ConfigPath)
	if err != nil {
		return nil
	}
	return f
}

// redrivesTo reports whether from, the destination a replay reads, is s's
// native redrive target.
func redrivesTo(as broker.AddressScheme, from broker.Address, s *config.Subscription) bool {
	var d string
	switch {
	case s.SQS != nil && s.SQS.RedrivePolicy != nil:
		d = s.SQS.RedrivePolicy.DeadLetterQueue
	case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
		d = s.GCP.DeadLetterPolicy.Topic
	case s.RocketMQ != nil && s.RocketMQ.ConsumerGroup != "":
		d = rocketmq.DLQTopic(s.RocketMQ.ConsumerGroup)
	}
	return d != "" && as.Same(d, from)
}

// addressNamed is from with the name n.
func addressNamed(from broker.Address, n string) broker.Address {
	from.Name = n
	return from
}

// redriveName is where a message s's native redrive moved is replayed to:
// the queue of an SQS subscription not fed by SNS (its channelName), else
// the topic it reads (routingKey).
func redriveName(s *config.Subscription) string {
	if s.SQS != nil && s.SQS.ChannelType != config.ChannelPubSub && s.ChannelName != "" {
		return s.ChannelName
	}
	return s.RoutingKey
}
