package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ProducerOptions configure a Producer.
type ProducerOptions struct {
	// SNS makes the producer publish to SNS topics; otherwise it sends to SQS
	// queues. Either way Header.Topic is the routing key, turned into a
	// queue or topic name with QueueName / TopicName.
	SNS bool
	// Fifo means the queues or topics are FIFO: names get ".fifo" and every
	// message needs a MessageGroupId (the partition key, else the message
	// id).
	Fifo bool
	// MakeChannels is the publication's makeChannels: with create a missing
	// queue or topic is created on first send; otherwise it must exist.
	MakeChannels broker.MakeChannels
	// Attributes are extra String message attributes written on every send
	// (e.g. for SNS filter policies). Brighter's own attributes leave room
	// for none on a message with subject, reply-to and correlation id: a send
	// that would exceed 10 attributes fails with ErrTooManyAttributes.
	Attributes map[string]string
	// Logger receives one Info record (LogDestinationCreated) for each
	// queue the producer creates (MakeChannels create): a typo in a
	// destination's name shows as a queue made, not silently. nil logs
	// nothing.
	Logger *slog.Logger
}

// LogDestinationCreated is the stable message text of the record of a
// queue a producer created because it did not exist and makeChannels is
// create (attributes destination, transport and reason).
const LogDestinationCreated = "destination created"

// Producer publishes messages in Brighter's SQS or SNS wire format. It
// implements broker.Producer and broker.BatchProducer and is safe for
// concurrent use.
type Producer struct {
	c      *Clients
	opts   ProducerOptions
	queues *queueURLs
	topics *topicARNs
}

var (
	_ broker.Producer      = (*Producer)(nil)
	_ broker.BatchProducer = (*Producer)(nil)
)

// NewProducer makes a producer over the clients.
func NewProducer(c *Clients, opts ProducerOptions) *Producer {
	create := opts.MakeChannels == broker.MakeCreate
	return &Producer{
		c: c, opts: opts,
		queues: &queueURLs{c: c.SQS, create: create, fifo: opts.Fifo, m: map[string]string{}, log: opts.Logger},
		topics: &topicARNs{c: c.SNS, create: create, fifo: opts.Fifo, m: map[string]string{}},
	}
}

// Send publishes m to the queue or topic its Header.Topic names (R-18's wire
// format, docs/wire-format.md#sqs). Header.Delay becomes DelaySeconds on a
// standard queue (capped at 900 s); FIFO queues and SNS have no per-message
// delay, so it is not sent there. It returns ErrTooManyAttributes (wrapped),
// broker.ErrTooLarge (wrapped, before any call) for an SQS message whose body
// plus attributes is over 1 MiB (checkLimits) or an SNS message over 256 KiB
// with its subject and attributes (checkSNSLimits), a queue or topic that cannot
// be found, or the SDK's error. An error of the queue's or topic's look-up
// (or creation), made before the publish call, wraps broker.ErrNotSent.
func (p *Producer) Send(ctx context.Context, m *message.Message) error {
	if p.opts.SNS {
		name := TopicName(m.Header.Topic, p.opts.Fifo)
		arn, err := p.topics.arn(ctx, name)
		if err != nil {
			return broker.NotSent(fmt.Errorf("send message %s: %w", m.Header.MessageID, err))
		}
		return publishSNS(ctx, p.c.SNS, arn, m, p.opts.Attributes, p.opts.Fifo)
	}
	name := QueueName(m.Header.Topic, p.opts.Fifo)
	url, err := p.queues.url(ctx, name)
	if err != nil {
		return broker.NotSent(fmt.Errorf("send message %s: %w", m.Header.MessageID, err))
	}
	return sendSQS(ctx, p.c.SQS, url, m, p.opts.Attributes)
}

// CheckSendable reports, without any call, whether m can be sent as it is
// by a Producer with options sns and fifo: the errors Send returns before
// its call (ErrBodyNotText, ErrTooManyAttributes, broker.ErrTooLarge, all
// wrapped) and, into SQS, the refusal of a body or attribute value holding
// a character SQS does not take, in the words of SQS's own refusal
// (ErrInvalidChars and broker.ErrPermanent, wrapped); nil when none
// applies. A dry run uses it so that it refuses what the real run would.
func CheckSendable(m *message.Message, sns, fifo bool) error {
	if sns {
		_, err := snsPublishInput("arn:aws:sns:us-east-1:000000000000:dry-run", m, nil, fifo)
		return err
	}
	in, err := sqsSendInput("https://sqs.us-east-1.amazonaws.com/000000000000/dry-run", m, nil)
	if err != nil {
		return err
	}
	return checkChars(in)
}

// CheckDestination looks up, without sending anything, the queue (or SNS
// topic) Send would publish a message of Header.Topic topic to: nil when it
// exists, else the error Send would return for it (wrapping
// *types.QueueDoesNotExist or ErrTopicNotFound for a missing one). It only
// reads (GetQueueUrl, or the SNS topic lookup); with MakeChannels create,
// where Send would create a missing one, it makes no call and returns nil.
// A dry run uses it so that it refuses what the real run would.
func (p *Producer) CheckDestination(ctx context.Context, topic string) error {
	if p.opts.MakeChannels == broker.MakeCreate {
		return nil
	}
	if p.opts.SNS {
		_, err := p.topics.arn(ctx, TopicName(topic, p.opts.Fifo))
		return err
	}
	_, err := p.queues.url(ctx, QueueName(topic, p.opts.Fifo))
	return err
}

// Close does nothing: the clients hold no per-producer resources.
func (p *Producer) Close(ctx context.Context) error { return nil }

// sendSQS is the one SendMessage of this package (producer and rejection
// routing alike).
func sendSQS(ctx context.Context, c *sqs.Client, queueURL string, m *message.Message, extra map[string]string) error {
	in, err := sqsSendInput(queueURL, m, extra)
	if err != nil {
		return err
	}
	if _, err := c.SendMessage(ctx, in); err != nil {
		if cerr := refusedChars(aws.ToString(in.MessageBody), err); cerr != nil {
			return fmt.Errorf("SendMessage %s to %s: %w", m.Header.MessageID, queueURL, cerr)
		}
		return classifySend(fmt.Errorf("SendMessage %s to %s: %w", m.Header.MessageID, queueURL, err))
	}
	return nil
}

// classifySend wraps broker.ErrTooLarge into err when SQS refused the
// message for its size (InvalidParameterValue "Message must be shorter
// than N bytes"), and broker.ErrPermanent when it refused the request as
// malformed (InvalidAddress, InvalidParameterValue, InvalidMessageContents):
// such a send can never succeed as it is. Other errors are
// returned as they are.
func classifySend(err error) error {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return err
	}
	msg := strings.ToLower(api.ErrorMessage())
	// The JSON protocol may carry the query protocol's prefixed code.
	code := strings.TrimPrefix(api.ErrorCode(), "AWS.SimpleQueueService.")
	switch code {
	case "InvalidParameterValue", "InvalidParameter", "MessageTooLong":
		if strings.Contains(msg, "shorter than") || strings.Contains(msg, "too long") || code == "MessageTooLong" {
			return fmt.Errorf("%w: %w", broker.ErrTooLarge, err)
		}
		return fmt.Errorf("%w: %w", broker.ErrPermanent, err)
	case "InvalidAddress", "InvalidMessageContents":
		return fmt.Errorf("%w: %w", broker.ErrPermanent, err)
	}
	return err
}

// sqsSendInput encodes m as the SendMessage request to queueURL: the one
// place where Brighter's SQS wire format becomes a request (SendMessage and
// SendMessageBatch entries alike). It returns EncodeSQS's errors, and
// checkLimits' broker.ErrTooLarge for a message over SQS's size limits.
func sqsSendInput(queueURL string, m *message.Message, extra map[string]string) (*sqs.SendMessageInput, error) {
	in, err := encodeSendInput(queueURL, m, extra)
	if err != nil {
		return nil, err
	}
	if err := checkLimits(m.Header.MessageID, in); err != nil {
		return nil, err
	}
	return in, nil
}

// encodeSendInput is sqsSendInput without the size check.
func encodeSendInput(queueURL string, m *message.Message, extra map[string]string) (*sqs.SendMessageInput, error) {
	out, err := EncodeSQS(m, queueURL, extra)
	if err != nil {
		return nil, err
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(out.Body), MessageAttributes: make(map[string]types.MessageAttributeValue, len(out.Attributes))}
	for k, v := range out.Attributes {
		in.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	fifo := strings.HasSuffix(queueURL, fifoSuffix)
	if fifo {
		// FIFO queues refuse per-message delays and need a group id.
		in.MessageGroupId = aws.String(firstNonEmpty(out.GroupID, m.Header.MessageID))
		if out.DeduplicationID != "" {
			in.MessageDeduplicationId = aws.String(out.DeduplicationID)
		}
	} else if out.DelaySeconds > 0 {
		in.DelaySeconds = out.DelaySeconds
	}
	return in, nil
}

func publishSNS(ctx context.Context, c *sns.Client, topicARN string, m *message.Message, extra map[string]string, fifo bool) error {
	in, err := snsPublishInput(topicARN, m, extra, fifo)
	if err != nil {
		return err
	}
	if _, err := c.Publish(ctx, in); err != nil {
		return fmt.Errorf("Publish %s to %s: %w", m.Header.MessageID, topicARN, err)
	}
	return nil
}

// snsPublishInput encodes m as the SNS Publish request to topicARN (Publish
// and PublishBatch entries alike). It returns EncodeSNS's errors, and
// checkSNSLimits' broker.ErrTooLarge for a message over SNS's limits.
func snsPublishInput(topicARN string, m *message.Message, extra map[string]string, fifo bool) (*sns.PublishInput, error) {
	out, err := EncodeSNS(m, topicARN, extra)
	if err != nil {
		return nil, err
	}
	in := &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(out.Body), MessageAttributes: make(map[string]snstypes.MessageAttributeValue, len(out.Attributes))}
	for k, v := range out.Attributes {
		in.MessageAttributes[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	if out.Subject != "" {
		in.Subject = aws.String(out.Subject)
	}
	if fifo || strings.HasSuffix(topicARN, fifoSuffix) {
		in.MessageGroupId = aws.String(firstNonEmpty(out.GroupID, m.Header.MessageID))
		if out.DeduplicationID != "" {
			in.MessageDeduplicationId = aws.String(out.DeduplicationID)
		}
	}
	if err := checkSNSLimits(m.Header.MessageID, in); err != nil {
		return nil, err
	}
	return in, nil
}

// queueURLs resolves queue names to URLs once per name (GetQueueUrl, or
// CreateQueue when create is set) and caches successes only, so a queue
// created later is found on the next try.
type queueURLs struct {
	c      *sqs.Client
	create bool
	fifo   bool
	mu     sync.Mutex
	m      map[string]string
	// log, when not nil, gets LogDestinationCreated for each queue made.
	log *slog.Logger
}

func (q *queueURLs) url(ctx context.Context, name string) (string, error) {
	q.mu.Lock()
	u, ok := q.m[name]
	q.mu.Unlock()
	if ok {
		return u, nil
	}
	out, err := q.c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		var missing *types.QueueDoesNotExist
		if !q.create || !errors.As(err, &missing) {
			return "", fmt.Errorf("queue %s: %w", name, err)
		}
		attrs := map[string]string{}
		if q.fifo || strings.HasSuffix(name, fifoSuffix) {
			attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
			attrs[string(types.QueueAttributeNameContentBasedDeduplication)] = "true"
		}
		cout, cerr := q.c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: map[string]string{"Source": "Brighter"}})
		if cerr != nil {
			return "", fmt.Errorf("create queue %s: %w", name, cerr)
		}
		u = aws.ToString(cout.QueueUrl)
		if q.log != nil {
			q.log.InfoContext(ctx, LogDestinationCreated, "destination", name, "transport", "sqs", "reason", "the queue did not exist and makeChannels is create")
		}
	} else {
		u = aws.ToString(out.QueueUrl)
	}
	q.mu.Lock()
	q.m[name] = u
	q.mu.Unlock()
	return u, nil
}

// topicARNs resolves topic names to ARNs once per name: CreateTopic (which
// is idempotent and returns the ARN) when create is set, else a search of
// ListTopics.
type topicARNs struct {
	c      *sns.Client
	create bool
	fifo   bool
	mu     sync.Mutex
	m      map[string]string
}

func (t *topicARNs) arn(ctx context.Context, name string) (string, error) {
	t.mu.Lock()
	a, ok := t.m[name]
	t.mu.Unlock()
	if ok {
		return a, nil
	}
	var err error
	if t.create {
		a, err = createTopic(ctx, t.c, name, t.fifo)
	} else {
		a, err = findTopic(ctx, t.c, name)
	}
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	t.m[name] = a
	t.mu.Unlock()
	return a, nil
}

// ErrTopicNotFound is returned (wrapped) for an SNS topic that does not
// exist where the producer or TopicSubscribers never creates one.
var ErrTopicNotFound = errors.New("SNS topic does not exist")

func createTopic(ctx context.Context, c *sns.Client, name string, fifo bool) (string, error) {
	attrs := map[string]string{}
	if fifo || strings.HasSuffix(name, fifoSuffix) {
		attrs["FifoTopic"] = "true"
		attrs["ContentBasedDeduplication"] = "true"
	}
	out, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name), Attributes: attrs, Tags: []snstypes.Tag{{Key: aws.String("Source"), Value: aws.String("Brighter")}}})
	if err != nil {
		return "", fmt.Errorf("create SNS topic %s: %w", name, err)
	}
	return aws.ToString(out.TopicArn), nil
}

func findTopic(ctx context.Context, c *sns.Client, name string) (string, error) {
	p := sns.NewListTopicsPaginator(c, &sns.ListTopicsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list SNS topics looking for %s: %w", name, err)
		}
		for _, t := range page.Topics {
			if a := aws.ToString(t.TopicArn); strings.HasSuffix(a, ":"+name) {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %w", name, ErrTopicNotFound)
}
