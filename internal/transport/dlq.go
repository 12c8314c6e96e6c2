package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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

// DryRunCheck is sqs.CheckSendable with the settings DLQProducer uses.
func (t *SQS) DryRunCheck(tg *Target) func(*message.Message) error {
	sns, fifo := tg.S.SQS.ChannelType == config.ChannelPubSub, tg.S.SQS.QueueType == config.QueueFIFO
	return func(m *message.Message) error { return sqs.CheckSendable(m, sns, fifo) }
}

var (
	_ Transport = (*Memory)(nil)
	_ Transport = (*SQS)(nil)
	_ Transport = RocketMQ{}

	_ CallCounting = (*SQS)(nil)
	_ CallCounting = (*GCP)(nil)
	_ CallCounting = RocketMQ{}
)

// DLQReader reads the queue named t.dest inside the subscription's
// memory.output JSON-lines file (every queue of the in-memory broker, as
// consume dumped it). With rewrite, closing it writes the file back (to a
// temporary file, then renamed over it), without the messages replay
// removed and with the replayed copies in their destination queues.
func (t *Memory) DLQReader(ctx context.Context, tg *Target, o ReadOptions, logger *slog.Logger) (*Channel, error) {
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
	return &Channel{Consumer: c, Close: closeFn}, nil
}

// Addresses is the memory:// scheme.
func (t *Memory) Addresses() broker.AddressScheme { return memory.URLScheme{} }

// ReplayFrom is the queue tg reads, in the memory.output file a replay
// writes back.
func (t *Memory) ReplayFrom(tg *Target) broker.Address {
	return broker.Address{Kind: broker.AddressQueue, Name: tg.Dest, Params: url.Values{"file": {tg.S.Memory.Output}}}
}

// DLQProducer publishes into the same in-memory broker the reader loaded.
func (t *Memory) DLQProducer(ctx context.Context, tg *Target, logger *slog.Logger) (broker.Producer, error) {
	return memory.Producer{B: t.Broker()}, nil
}

// DLQReader is the SQS consumer over the destination queue, ten messages a
// receive, each held for o.visibility. The rejection routes are empty: dlq
// never rejects. A long poll (--wait of 1s or more) that returns nothing
// has asked every server, so the receive that confirms it is a short poll
// (Channel.ShortPoll).
func (t *SQS) DLQReader(ctx context.Context, tg *Target, o ReadOptions, logger *slog.Logger) (*Channel, error) {
	c, err := t.clientsFor(ctx, tg.F, logger)
	if err != nil {
		return nil, err
	}
	q := tg.S.SQS
	// Look the queue up first: a missing queue (or a refused credential) is
	// reported once, here, rather than by the first receive of the scan
	// through three layers that each name the queue; a missing queue's
	// error wraps sqs.ErrMissingChannels.
	name := sqs.QueueName(tg.Dest, q.QueueType == config.QueueFIFO)
	qu, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		var missing *types.QueueDoesNotExist
		if errors.As(err, &missing) {
			// In consume's words for a missing queue (makeChannels
			// validate), not SQS's NonExistentQueue answer.
			err = fmt.Errorf("the queue does not exist: %w", sqs.ErrMissingChannels)
		}
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
	return &Channel{Consumer: consumer, Close: consumer.Close, ShortPoll: true, Held: held}, nil
}

// sqsHeld is the queue's ApproximateNumberOfMessagesNotVisible before this
// command receives anything: messages another reader holds (a killed
// replay or archive, a running scan, a consumer), which no scan can see
// until their visibility timeout lapses. It is the broker's estimate, so
// only a notice: SQS's figure is approximate, and fauxqs counts a hold
// whose visibility timeout has lapsed until the queue's next receive moves
// the message back (a scan then reads it like any other). A failed call is
// logged (Warn) and counts 0.
func sqsHeld(ctx context.Context, c *sqs.Clients, queueURL *string, name string, logger *slog.Logger) int64 {
	attr := types.QueueAttributeNameApproximateNumberOfMessagesNotVisible
	out, err := c.SQS.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: queueURL, AttributeNames: []types.QueueAttributeName{attr}})
	if err != nil {
		logger.WarnContext(ctx, LogHeldUnknown, "queue", name, "error", err)
		return 0
	}
	n, err := strconv.ParseInt(out.Attributes[string(attr)], 10, 64)
	if err != nil {
		logger.WarnContext(ctx, LogHeldUnknown, "queue", name, "error", err)
		return 0
	}
	return n
}

// RedriveSources asks SQS which queues' redrive policies name the queue tg
// reads (ListDeadLetterSourceQueues, at most 1000 of them): the queues a
// message there without rejection metadata may have been moved from. It
// returns their names; an error when the call fails (fauxqs does not
// implement it).
func (t *SQS) RedriveSources(ctx context.Context, tg *Target, logger *slog.Logger) ([]string, error) {
	c, err := t.clientsFor(ctx, tg.F, logger)
	if err != nil {
		return nil, err
	}
	name := sqs.QueueName(tg.Dest, tg.S.SQS.QueueType == config.QueueFIFO)
	qu, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", name, err)
	}
	out, err := c.SQS.ListDeadLetterSourceQueues(ctx, &awssqs.ListDeadLetterSourceQueuesInput{QueueUrl: qu.QueueUrl, MaxResults: aws.Int32(1000)})
	if err != nil {
		return nil, fmt.Errorf("queue %s: ListDeadLetterSourceQueues: %w", name, err)
	}
	names := make([]string, 0, len(out.QueueUrls))
	for _, u := range out.QueueUrls {
		names = append(names, u[strings.LastIndex(u, "/")+1:])
	}
	return names, nil
}

// Addresses is the sqs:// scheme.
func (t *SQS) Addresses() broker.AddressScheme { return sqs.URLScheme{} }

// ReplayFrom is the queue tg reads, FIFO as the subscription is; a replay
// from a pubSub subscription publishes to SNS topics (Kind AddressTopic).
func (t *SQS) ReplayFrom(tg *Target) broker.Address {
	a := broker.Address{Kind: broker.AddressQueue, Name: tg.Dest, FIFO: tg.S.SQS.QueueType == config.QueueFIFO}
	if tg.S.SQS.ChannelType == config.ChannelPubSub {
		a.Kind = broker.AddressTopic
	}
	return a
}

// DLQProducer sends to SQS queues (SNS topics for a pubSub subscription),
// FIFO when the subscription is, and never creates a missing queue or topic.
func (t *SQS) DLQProducer(ctx context.Context, tg *Target, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.clientsFor(ctx, tg.F, logger)
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
func (t *SQS) URLTarget(o URLOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*Target, error) {
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
	}
	if o.Endpoint != "" {
		if err := checkHTTPEndpoint("--endpoint", o.Endpoint); err != nil {
			return nil, err
		}
	}
	name := a.Name
	f := &config.File{Path: CommandLinePath}
	f.Connections.AWS = config.AWSConnection{Region: o.Region, Endpoint: o.Endpoint, Profile: o.Profile}
	s := &config.Subscription{Name: name, ChannelName: name, RoutingKey: name, MakeChannels: config.MakeChannelsValidate, Transport: config.TransportSQS}
	s.SQS = &config.SQS{ChannelType: config.ChannelPointToPoint, QueueType: config.QueueStandard, RawMessageDelivery: true}
	if a.FIFO {
		s.SQS.QueueType = config.QueueFIFO
	}
	if o.SNS {
		s.SQS.ChannelType = config.ChannelPubSub
	}
	return &Target{F: f, S: s, Dest: name, URL: as.Format(broker.Address{Kind: a.Kind, Name: name})}, nil
}

// URLTarget reads memory://QUEUE?file=PATH, a queue of a memory.output
// file; the file is required.
func (t *Memory) URLTarget(o URLOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*Target, error) {
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
	return &Target{F: &config.File{Path: CommandLinePath}, S: s, Dest: name, URL: as.Format(broker.Address{Kind: a.Kind, Name: name})}, nil
}
