package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS wires subscriptions with transport: sqs (SQS queues, and SNS
// topics feeding them when channelType is pubSub). The AWS clients are made
// once per command from connections.aws.
type SQS struct {
	once    sync.Once
	clients *sqs.Clients
	err     error
	calls   broker.CallCounter
}

// CountingCalls makes t's clients count every SQS and SNS call they send
// into c (CallCounting); it returns t.
func (t *SQS) CountingCalls(c broker.CallCounter) Transport {
	t.calls = c
	return t
}

// clientsFor makes the clients once, from f's connections.aws, with the
// AWS SDK's log lines going to logger (the first caller's; nil drops them).
func (t *SQS) clientsFor(ctx context.Context, f *config.File, logger *slog.Logger) (*sqs.Clients, error) {
	t.once.Do(func() {
		a := f.Connections.AWS
		t.clients, t.err = sqs.NewClientsWith(ctx, sqs.Connection{Region: a.Region, Endpoint: a.Endpoint, EndpointFrom: sqsEndpointFrom(f), Profile: a.Profile, Calls: t.calls, Logger: logger})
		if t.err == nil {
			// No credentials is a start-up error naming the sources tried,
			// not a channel failure for ever.
			_, t.err = t.clients.CheckCredentials(ctx, a.Profile)
		}
	})
	return t.clients, t.err
}

// sqsResolveTimeout bounds the start-up look-up of a consumer's queue: a
// broker that does not answer within it is the pump's to retry.
const sqsResolveTimeout = 5 * time.Second

// sqsEndpointFrom names where connections.aws.endpoint came from, for
// errors: dlq's --endpoint flag for a destination given by URL, else the
// subscriptions file ("" when there is no endpoint: the SDK's own
// resolution is named by the sqs package).
func sqsEndpointFrom(f *config.File) string {
	switch {
	case f.Connections.AWS.Endpoint == "":
		return ""
	case f.Path == CommandLinePath:
		return "the --endpoint flag"
	}
	return "connections.aws.endpoint in the subscriptions file"
}

// sqsChannelOptions maps a subscription to the transport's channel options.
func sqsChannelOptions(s *config.Subscription) sqs.ChannelOptions {
	q := s.SQS
	o := sqs.ChannelOptions{
		MakeChannels:      broker.MakeChannels(s.MakeChannels),
		Queue:             s.ChannelName,
		Fifo:              q.QueueType == config.QueueFIFO,
		VisibilityTimeout: q.VisibilityTimeout,
		Envelope:          q.ChannelType == config.ChannelPubSub && !q.RawMessageDelivery,
		DeadLetter:        s.DeadLetterRoutingKey,
		Invalid:           s.InvalidMessageRoutingKey,
	}
	if q.ChannelType == config.ChannelPubSub {
		o.Topic = s.RoutingKey
	}
	if rp := q.RedrivePolicy; rp != nil {
		o.RedrivePolicy = &sqs.RedrivePolicy{DeadLetterQueue: rp.DeadLetterQueue, MaxReceiveCount: rp.MaxReceiveCount}
	}
	return o
}

// Open applies makeChannels to s's queue (and SNS topic), looks the
// queue up and returns its consumer.
func (t *SQS) Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*Channel, error) {
	c, err := t.clientsFor(ctx, f, logger)
	if err != nil {
		return nil, err
	}
	co := sqsChannelOptions(s)
	made, err := validateSQSChannels(ctx, c, s, co.MakeChannels)
	if err != nil {
		return nil, missingFix(err, s)
	}
	consumer, err := sqs.NewConsumer(c, sqs.ConsumerOptions{
		// The URL create or validate just looked up: Resolve below then
		// makes no second GetQueueUrl ("" with assume: it looks it up).
		QueueURL: made.QueueURL,
		Queue:    s.ChannelName, Fifo: co.Fifo, Envelope: co.Envelope, BufferSize: s.BufferSize,
		VisibilityTimeout: s.SQS.VisibilityTimeout, DeadLetter: s.DeadLetterRoutingKey,
		Invalid: s.InvalidMessageRoutingKey, Logger: logger,
	})
	if err != nil {
		return nil, err
	}
	// Look the queue up now, as the first receive would: a refused or
	// expired credential (or a missing queue) is one start-up error naming
	// the endpoint and the credential source, even with
	// makeChannels assume. A broker that cannot be reached is left to the
	// pump, which backs off and recovers when it comes up.
	rctx, cancel := context.WithTimeout(ctx, sqsResolveTimeout)
	err = consumer.Resolve(rctx)
	cancel()
	if err != nil && !errors.Is(err, broker.ErrChannelFailure) {
		_ = consumer.Close(ctx)
		return nil, err
	}
	return &Channel{Consumer: consumer, Close: consumer.Close}, nil
}

// Producer sends to SQS queues (SNS topics for a pubSub subscription).
func (t *SQS) Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.clientsFor(ctx, f, logger)
	if err != nil {
		return nil, err
	}
	o := sqs.ProducerOptions{
		SNS:          s.SQS.ChannelType == config.ChannelPubSub,
		Fifo:         s.SQS.QueueType == config.QueueFIFO,
		MakeChannels: broker.MakeChannels(s.MakeChannels),
		Logger:       logger,
	}
	return sqsSendProducer{Producer: sqs.NewProducer(c, o), sns: o.SNS, fifo: o.Fifo}, nil
}

// ErrSendQueueMissing is wrapped by the error of a send to an SQS queue or
// SNS topic that does not exist, under makeChannels validate or assume
// (with create, the default, the producer makes it): the error names the
// queue or topic and how to make it, not SQS's bare NonExistentQueue
// answer.
var ErrSendQueueMissing = errors.New("SQS queue or SNS topic does not exist")

// sqsSendProducer is the SQS/SNS producer whose error for a missing queue
// or topic (*types.QueueDoesNotExist, sqs.ErrTopicNotFound) wraps
// ErrSendQueueMissing and says how to make it; every other error, and
// every send that succeeds, is the producer's own.
type sqsSendProducer struct {
	broker.Producer
	sns, fifo bool
}

// Send publishes m; a missing queue's or topic's error says how to make it.
// To a FIFO queue or topic, a message with a group (PartitionKey) and no
// deduplication id in its bag is sent with its message id as that id, so
// that send's messages, each with a new id unless --id names one, are not
// dropped as duplicates of one body by content-based deduplication within
// SQS's 5-minute window; the same id is still one message.
func (p sqsSendProducer) Send(ctx context.Context, m *message.Message) error {
	if p.fifo && m.Header.PartitionKey != "" {
		if d, _ := m.Header.Bag.String(sqs.AttrMessageDeduplicationID); d == "" {
			if m.Header.Bag == nil {
				m.Header.Bag = message.Bag{}
			}
			m.Header.Bag[sqs.AttrMessageDeduplicationID] = m.Header.MessageID
		}
	}
	err := p.Producer.Send(ctx, m)
	if err == nil {
		return nil
	}
	var missing *types.QueueDoesNotExist
	switch {
	case !p.sns && errors.As(err, &missing):
		name := sqs.QueueName(m.Header.Topic, p.fifo)
		return fmt.Errorf("%w: queue %s: makeChannels validate and assume never create it: run brighter consume on this "+
			"subscriptions file once with makeChannels: create, or create the queue (aws sqs create-queue --queue-name %s): %w",
			ErrSendQueueMissing, name, name, err)
	case p.sns && errors.Is(err, sqs.ErrTopicNotFound):
		name := sqs.TopicName(m.Header.Topic, p.fifo)
		return fmt.Errorf("%w: SNS topic %s: makeChannels validate and assume never create it: run brighter consume on this "+
			"subscriptions file once with makeChannels: create, or create the topic (aws sns create-topic --name %s): %w",
			ErrSendQueueMissing, name, name, err)
	}
	return err
}

// CloseClients: the AWS SDK's clients hold no connection to close.
func (t *SQS) CloseClients() error { return nil }
