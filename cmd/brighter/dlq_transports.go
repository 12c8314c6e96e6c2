package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// commandLinePath is the Path of the config.File dlq makes for a
// destination given by URL: its connection comes from flags and the
// environment, and errors naming an endpoint say so (issue 13).
const commandLinePath = "(command line)"

// dlqTarget is the destination a dlq command reads: a subscription's
// dead-letter, invalid-message or native redrive destination, or one named
// by URL (then f and s are synthesised from flags and environment).
type dlqTarget struct {
	F *config.File
	S *config.Subscription
	// Dest is the destination's channel name as the subscriptions file
	// writes it (the transport applies its own naming, e.g. SQS QueueName).
	Dest string
	// URL names the destination in output and in replayedFrom.
	URL string
	// Group is the RocketMQ consumer Group the destination is read with
	// (never the subscription's own Group); "" for other transports.
	Group string
	// EndpointFrom names where a RocketMQ destination given by URL got its
	// endpoint (the --rocketmq-endpoint flag or ROCKETMQ_ENDPOINT), for
	// errors; "" for the subscriptions file.
	EndpointFrom string
}

// dlqReadOptions say how a dlq command reads.
type dlqReadOptions struct {
	// Visibility is how long each received message stays invisible while a
	// scan runs (released at once when it ends).
	Visibility time.Duration
	// Wait is how long one receive waits (RocketMQ: the consumer's long
	// polling AwaitDuration, fixed when the consumer is made).
	Wait time.Duration
	// Rewrite is set by replay: the memory transport writes its file back
	// when the reader is closed.
	Rewrite bool
}

// dlqTransport is what a transport offers `brighter dlq`: its ORDINARY
// consumer over a dead-letter / invalid / native destination (so counts are
// the stamped ones, R-28) and a producer for replay that never creates a
// missing destination (a replay to a topic that does not exist fails
// cleanly). A transportFactory that does not implement it cannot be used
// by dlq.
type dlqTransport interface {
	// Addresses is the transport's own URL scheme: dlq parses and prints
	// destinations named by URL with it (issue 17).
	Addresses() broker.AddressScheme
	// ReplayFrom is the destination t reads, as a replay's producer names
	// destinations and as the subscriptions file (or URL) says: what the
	// transport's scheme resolves --to against (PublishName, Same).
	ReplayFrom(t *dlqTarget) broker.Address
	// URLTarget makes the target of a destination named by URL: arg, as
	// the transport's scheme as parsed it into a (err when it could not),
	// with the connection from o's flags and environment.
	URLTarget(o *dlqOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*dlqTarget, error)
	DLQReader(ctx context.Context, t *dlqTarget, o dlqReadOptions, logger *slog.Logger) (*openedChannel, error)
	DLQProducer(ctx context.Context, t *dlqTarget, logger *slog.Logger) (broker.Producer, error)
}

// dryRunChecker is a dlqTransport whose producer refuses some messages
// before any call (a body it cannot carry, a broker limit): a dry run asks
// dryRunCheck's function about each copy so that it fails what the real
// run would (issue 30). SQS implements it.
type dryRunChecker interface {
	DryRunCheck(t *dlqTarget) func(*message.Message) error
}

var _ dryRunChecker = (*sqsTransport)(nil)

// DryRunCheck is sqs.CheckSendable with the settings dlqProducer uses.
func (t *sqsTransport) DryRunCheck(tg *dlqTarget) func(*message.Message) error {
	sns, fifo := tg.S.SQS.ChannelType == config.ChannelPubSub, tg.S.SQS.QueueType == config.QueueFIFO
	return func(m *message.Message) error { return sqs.CheckSendable(m, sns, fifo) }
}

var (
	_ dlqTransport = (*memoryTransport)(nil)
	_ dlqTransport = (*sqsTransport)(nil)
	_ dlqTransport = rocketmqTransport{}
)

// DLQReader reads the queue named t.dest inside the subscription's
// memory.output JSON-lines file (every queue of the in-memory broker, as
// consume dumped it). With rewrite, closing it writes the file back (to a
// temporary file, then renamed over it), without the messages replay
// removed and with the replayed copies in their destination queues.
func (t *memoryTransport) DLQReader(ctx context.Context, tg *dlqTarget, o dlqReadOptions, logger *slog.Logger) (*openedChannel, error) {
	path := tg.S.Memory.Output
	if path == "" {
		return nil, usageErr(fmt.Errorf("%s: subscription %s has no memory.output file: the memory transport's dead letters live only in that file", tg.S.Pos("memory"), tg.S.Name))
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("memory.output: %w", err)
	}
	b := t.Broker()
	_, err = b.Load(ctx, fh, "")
	fh.Close()
	if err != nil {
		return nil, fmt.Errorf("memory.output %s: %w", path, err)
	}
	c := b.NewConsumer(memory.ConsumerOptions{Queue: tg.Dest, BufferSize: 10, VisibilityTimeout: o.Visibility, Logger: logger})
	closeFn := func(ctx context.Context) error {
		if !o.Rewrite {
			return nil
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
		if err != nil {
			return fmt.Errorf("rewrite memory.output: %w", err)
		}
		if err := errors.Join(b.Dump(tmp), tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("rewrite memory.output %s: %w", path, err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("rewrite memory.output %s: %w", path, err)
		}
		return nil
	}
	return &openedChannel{Consumer: c, Close: closeFn}, nil
}

func (t *memoryTransport) Addresses() broker.AddressScheme { return memory.URLScheme{} }

// ReplayFrom is the queue tg reads, in the memory.output file a replay
// writes back.
func (t *memoryTransport) ReplayFrom(tg *dlqTarget) broker.Address {
	return broker.Address{Kind: broker.AddressQueue, Name: tg.Dest, Params: url.Values{"file": {tg.S.Memory.Output}}}
}

// DLQProducer publishes into the same in-memory broker the reader loaded.
func (t *memoryTransport) DLQProducer(ctx context.Context, tg *dlqTarget, logger *slog.Logger) (broker.Producer, error) {
	return memory.Producer{B: t.Broker()}, nil
}

// DLQReader is the SQS consumer over the destination queue, ten messages a
// receive, each held for o.visibility. The rejection routes are empty: dlq
// never rejects. A long poll (--wait of 1s or more) that returns nothing
// has asked every server, so the receive that confirms it is a short poll
// (shortPoll, issue 30).
func (t *sqsTransport) DLQReader(ctx context.Context, tg *dlqTarget, o dlqReadOptions, logger *slog.Logger) (*openedChannel, error) {
	c, err := t.clientsFor(ctx, tg.F)
	if err != nil {
		return nil, err
	}
	q := tg.S.SQS
	// Look the queue up first: a missing queue (or a refused credential) is
	// reported once, here, rather than by the first receive of the scan
	// through three layers that each name the queue.
	name := sqs.QueueName(tg.Dest, q.QueueType == config.QueueFIFO)
	qu, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		if name != tg.Dest {
			return nil, fmt.Errorf("queue %s: %w", name, err)
		}
		return nil, err
	}
	held := sqsHeld(ctx, c, qu.QueueUrl, name, logger)
	consumer, err := sqs.NewConsumer(c, sqs.ConsumerOptions{
		Queue: tg.Dest, Fifo: q.QueueType == config.QueueFIFO,
		Envelope:   q.ChannelType == config.ChannelPubSub && !q.RawMessageDelivery,
		BufferSize: sqs.MaxBufferSize, VisibilityTimeout: min(o.Visibility, config.MaxSQSVisibility), Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	return &openedChannel{Consumer: consumer, Close: consumer.Close, ShortPoll: true, Held: held}, nil
}

// sqsHeld is the queue's ApproximateNumberOfMessagesNotVisible before this
// command receives anything: messages another reader holds (a killed
// replay or archive, a running scan, a consumer), which no scan can see
// until their visibility timeout lapses (issue 30). It is only a notice: a
// failed call is logged (Warn) and counts 0.
func sqsHeld(ctx context.Context, c *sqs.Clients, queueURL *string, name string, logger *slog.Logger) int64 {
	attr := types.QueueAttributeNameApproximateNumberOfMessagesNotVisible
	out, err := c.SQS.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: queueURL, AttributeNames: []types.QueueAttributeName{attr}})
	if err != nil {
		logger.WarnContext(ctx, logDLQHeldUnknown, "queue", name, "error", err)
		return 0
	}
	n, err := strconv.ParseInt(out.Attributes[string(attr)], 10, 64)
	if err != nil {
		logger.WarnContext(ctx, logDLQHeldUnknown, "queue", name, "error", err)
		return 0
	}
	return n
}

func (t *sqsTransport) Addresses() broker.AddressScheme { return sqs.URLScheme{} }

// ReplayFrom is the queue tg reads, FIFO as the subscription is; a replay
// from a pubSub subscription publishes to SNS topics (Kind AddressTopic).
func (t *sqsTransport) ReplayFrom(tg *dlqTarget) broker.Address {
	a := broker.Address{Kind: broker.AddressQueue, Name: tg.Dest, FIFO: tg.S.SQS.QueueType == config.QueueFIFO}
	if tg.S.SQS.ChannelType == config.ChannelPubSub {
		a.Kind = broker.AddressTopic
	}
	return a
}

// DLQProducer sends to SQS queues (SNS topics for a pubSub subscription),
// FIFO when the subscription is, and never creates a missing queue or topic.
func (t *sqsTransport) DLQProducer(ctx context.Context, tg *dlqTarget, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.clientsFor(ctx, tg.F)
	if err != nil {
		return nil, err
	}
	return sqs.NewProducer(c, sqs.ProducerOptions{
		SNS:          tg.S.SQS.ChannelType == config.ChannelPubSub,
		Fifo:         tg.S.SQS.QueueType == config.QueueFIFO,
		MakeChannels: broker.MakeValidate,
	}), nil
}

// URLTarget reads sqs://QUEUE: the connection is --region, --endpoint and
// --profile (else the SDK's own settings), a queue ending in .fifo is FIFO,
// --sns publishes replays to SNS topics.
func (t *sqsTransport) URLTarget(o *dlqOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*dlqTarget, error) {
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
	}
	if o.endpoint != "" {
		if err := checkHTTPEndpoint("--endpoint", o.endpoint); err != nil {
			return nil, err
		}
	}
	name := a.Name
	f := &config.File{Path: commandLinePath}
	f.Connections.AWS = config.AWSConnection{Region: o.region, Endpoint: o.endpoint, Profile: o.profile}
	s := &config.Subscription{Name: name, ChannelName: name, RoutingKey: name, MakeChannels: config.MakeChannelsValidate, Transport: config.TransportSQS}
	s.SQS = &config.SQS{ChannelType: config.ChannelPointToPoint, QueueType: config.QueueStandard, RawMessageDelivery: true}
	if a.FIFO {
		s.SQS.QueueType = config.QueueFIFO
	}
	if o.sns {
		s.SQS.ChannelType = config.ChannelPubSub
	}
	return &dlqTarget{F: f, S: s, Dest: name, URL: as.Format(broker.Address{Kind: a.Kind, Name: name})}, nil
}

// URLTarget reads memory://QUEUE?file=PATH, a queue of a memory.output
// file; the file is required.
func (t *memoryTransport) URLTarget(o *dlqOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*dlqTarget, error) {
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
	}
	file := a.Params.Get("file")
	if file == "" {
		return nil, usageErr(fmt.Errorf("destination %q: a memory destination needs ?file=PATH (a memory.output file)", redact.Quoted(arg)))
	}
	name := a.Name
	s := &config.Subscription{Name: name, ChannelName: name, RoutingKey: name, MakeChannels: config.MakeChannelsValidate,
		Transport: config.TransportMemory, Memory: &config.Memory{Output: file}}
	return &dlqTarget{F: &config.File{Path: commandLinePath}, S: s, Dest: name, URL: as.Format(broker.Address{Kind: a.Kind, Name: name})}, nil
}
