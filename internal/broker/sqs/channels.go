package sqs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
)

// RedrivePolicy is SQS's native redrive: after MaxReceiveCount receives SQS
// itself moves the message to DeadLetterQueue.
type RedrivePolicy struct {
	// DeadLetterQueue is the native dead-letter queue's channel name
	// (through QueueName); it is created with the source queue's attributes
	// and no redrive of its own.
	DeadLetterQueue string
	// MaxReceiveCount is the receive count at which SQS moves the message.
	MaxReceiveCount int
}

// ChannelOptions describe a subscription's SQS (and SNS) infrastructure.
type ChannelOptions struct {
	// MakeChannels is create, validate or assume ("" means create).
	MakeChannels broker.MakeChannels
	// Queue is the channel name; the queue is QueueName(Queue, Fifo).
	Queue string
	// Topic, when not "", is the SNS topic's routing key (TopicName(Topic,
	// Fifo)) the queue subscribes to; "" is point-to-point (queue only).
	Topic string
	// Fifo makes every queue and the topic FIFO (with content-based
	// deduplication).
	Fifo bool
	// VisibilityTimeout is the queue's VisibilityTimeout (whole seconds);
	// 0 leaves SQS's default (30 s).
	VisibilityTimeout time.Duration
	// Envelope is rawMessageDelivery: false. The zero value subscribes with
	// RawMessageDelivery "true" (Brighter's default).
	Envelope bool
	// RedrivePolicy, when set, is the queue's native redrive.
	RedrivePolicy *RedrivePolicy
	// DeadLetter and Invalid are deadLetterRoutingKey and
	// invalidMessageRoutingKey: queues Brighter's rejection routing sends to.
	DeadLetter, Invalid string
}

// Channels is what EnsureChannels found or made. With assume only the names
// are filled in.
type Channels struct {
	// QueueName, QueueURL and QueueARN identify the subscription's queue.
	QueueName, QueueURL, QueueARN string
	// TopicName and TopicARN identify the SNS topic ("" for point-to-point).
	TopicName, TopicARN string
}

// ErrMissingChannels is returned (wrapped) by validate when infrastructure
// is missing; the message names every missing queue, topic or subscription.
var ErrMissingChannels = errors.New("missing SQS/SNS infrastructure")

// ChannelMaker provisions one subscription's infrastructure. It implements
// broker.ChannelMaker.
type ChannelMaker struct {
	c    *Clients
	opts ChannelOptions
	// Result is filled in by EnsureChannels.
	Result Channels
}

var _ broker.ChannelMaker = (*ChannelMaker)(nil)

// NewChannelMaker makes a ChannelMaker; it makes no broker call.
func NewChannelMaker(c *Clients, opts ChannelOptions) *ChannelMaker {
	return &ChannelMaker{c: c, opts: opts}
}

// EnsureChannels applies makeChannels (R-30, docs/wire-format.md#sqs-names). create makes
// the dead-letter and invalid-message queues, the native redrive queue, the
// queue (standard or FIFO, visibility timeout, RedrivePolicy), and for a
// topic the SNS topic, the queue's subscription (RawMessageDelivery "true"
// or "false") and the queue policy that lets the topic send; creating twice
// is harmless. validate checks that each exists, and the dead-letter queue
// the queue's own RedrivePolicy names, and returns
// ErrMissingChannels naming everything missing. assume makes no call.
func (cm *ChannelMaker) EnsureChannels(ctx context.Context) error {
	o := cm.opts
	cm.Result = Channels{QueueName: QueueName(o.Queue, o.Fifo)}
	if o.Topic != "" {
		cm.Result.TopicName = TopicName(o.Topic, o.Fifo)
	}
	switch o.MakeChannels {
	case broker.MakeAssume:
		return nil
	case broker.MakeValidate:
		return cm.validate(ctx)
	case broker.MakeCreate, "":
		return cm.create(ctx)
	}
	return fmt.Errorf("makeChannels %q: valid values are create, validate, assume", o.MakeChannels)
}

func (cm *ChannelMaker) queueAttrs() map[string]string {
	a := map[string]string{}
	if cm.opts.VisibilityTimeout > 0 {
		a[string(types.QueueAttributeNameVisibilityTimeout)] = strconv.Itoa(int(max(cm.opts.VisibilityTimeout/time.Second, 1)))
	}
	if cm.opts.Fifo {
		a[string(types.QueueAttributeNameFifoQueue)] = "true"
		a[string(types.QueueAttributeNameContentBasedDeduplication)] = "true"
	}
	return a
}

// createQueue makes a queue and returns its URL and ARN. When the queue
// exists with other attributes, the settable ones are applied to it.
func (cm *ChannelMaker) createQueue(ctx context.Context, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := cm.c.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: map[string]string{"Source": "Brighter"}})
	if err != nil {
		var exists *types.QueueNameExists
		if !errors.As(err, &exists) {
			return "", "", fmt.Errorf("create queue %s: %w", name, err)
		}
		g, gerr := cm.c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if gerr != nil {
			return "", "", fmt.Errorf("create queue %s: %w", name, gerr)
		}
		url = aws.ToString(g.QueueUrl)
		settable := map[string]string{}
		for k, v := range attrs {
			if k != string(types.QueueAttributeNameFifoQueue) {
				settable[k] = v
			}
		}
		if _, err := cm.c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: settable}); err != nil {
			return "", "", fmt.Errorf("update attributes of queue %s: %w", name, err)
		}
	} else {
		url = aws.ToString(out.QueueUrl)
	}
	arn, err = cm.queueARN(ctx, name, url)
	return url, arn, err
}

func (cm *ChannelMaker) queueARN(ctx context.Context, name, url string) (string, error) {
	ga, err := cm.c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", fmt.Errorf("read ARN of queue %s: %w", name, err)
	}
	return ga.Attributes[string(types.QueueAttributeNameQueueArn)], nil
}

func (cm *ChannelMaker) create(ctx context.Context) error {
	o := cm.opts
	for _, key := range []string{o.DeadLetter, o.Invalid} {
		if key == "" {
			continue
		}
		if _, _, err := cm.createQueue(ctx, QueueName(key, o.Fifo), cm.queueAttrs()); err != nil {
			return err
		}
	}
	attrs := cm.queueAttrs()
	if rp := o.RedrivePolicy; rp != nil {
		_, dlqARN, err := cm.createQueue(ctx, QueueName(rp.DeadLetterQueue, o.Fifo), cm.queueAttrs())
		if err != nil {
			return err
		}
		policy, err := json.Marshal(map[string]any{"maxReceiveCount": rp.MaxReceiveCount, "deadLetterTargetArn": dlqARN})
		if err != nil {
			return fmt.Errorf("encode redrive policy: %w", err)
		}
		attrs[string(types.QueueAttributeNameRedrivePolicy)] = string(policy)
	}
	url, arn, err := cm.createQueue(ctx, cm.Result.QueueName, attrs)
	if err != nil {
		return err
	}
	cm.Result.QueueURL, cm.Result.QueueARN = url, arn
	if o.Topic == "" {
		return nil
	}
	topicARN, err := createTopic(ctx, cm.c.SNS, cm.Result.TopicName, o.Fifo)
	if err != nil {
		return err
	}
	cm.Result.TopicARN = topicARN
	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{{
			"Sid": "BrighterSnsToSqs", "Effect": "Allow",
			"Principal": map[string]string{"Service": "sns.amazonaws.com"},
			"Action":    "sqs:SendMessage", "Resource": arn,
			"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": topicARN}},
		}},
	})
	if err != nil {
		return fmt.Errorf("encode queue policy: %w", err)
	}
	if _, err := cm.c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{string(types.QueueAttributeNamePolicy): string(policy)}}); err != nil {
		return fmt.Errorf("set policy of queue %s for topic %s: %w", cm.Result.QueueName, cm.Result.TopicName, err)
	}
	subARN, err := findSubscription(ctx, cm.c.SNS, topicARN, arn)
	if err != nil {
		return err
	}
	// fauxqs compares "true" case-sensitively; AWS documents lower case.
	raw := strconv.FormatBool(!o.Envelope)
	if subARN == "" {
		if _, err := cm.c.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: &topicARN, Protocol: aws.String("sqs"), Endpoint: &arn,
			Attributes: map[string]string{"RawMessageDelivery": raw}, ReturnSubscriptionArn: true}); err != nil {
			return fmt.Errorf("subscribe queue %s to topic %s: %w", cm.Result.QueueName, cm.Result.TopicName, err)
		}
		return nil
	}
	if _, err := cm.c.SNS.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: &subARN, AttributeName: aws.String("RawMessageDelivery"), AttributeValue: &raw}); err != nil {
		return fmt.Errorf("set RawMessageDelivery of subscription of %s to %s: %w", cm.Result.QueueName, cm.Result.TopicName, err)
	}
	return nil
}

// findSubscription returns the ARN of the topic's SQS subscription whose
// endpoint is queueARN, "" when there is none.
func findSubscription(ctx context.Context, c *sns.Client, topicARN, queueARN string) (string, error) {
	p := sns.NewListSubscriptionsByTopicPaginator(c, &sns.ListSubscriptionsByTopicInput{TopicArn: &topicARN})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("list subscriptions of topic %s: %w", topicARN, err)
		}
		for _, s := range page.Subscriptions {
			if aws.ToString(s.Protocol) == "sqs" && aws.ToString(s.Endpoint) == queueARN {
				return aws.ToString(s.SubscriptionArn), nil
			}
		}
	}
	return "", nil
}

// heldRedriveTarget returns the name of the dead-letter queue the
// RedrivePolicy of the queue at url names ("" when it has none).
func (cm *ChannelMaker) heldRedriveTarget(ctx context.Context, url string) (string, error) {
	out, err := cm.c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy}})
	if err != nil {
		return "", fmt.Errorf("validate queue %s RedrivePolicy: %w", cm.Result.QueueName, err)
	}
	raw := out.Attributes[string(types.QueueAttributeNameRedrivePolicy)]
	if raw == "" {
		return "", nil
	}
	var rp struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
	}
	if err := json.Unmarshal([]byte(raw), &rp); err != nil || rp.DeadLetterTargetArn == "" {
		return "", fmt.Errorf("validate queue %s: RedrivePolicy %q names no deadLetterTargetArn", cm.Result.QueueName, raw)
	}
	return rp.DeadLetterTargetArn[strings.LastIndex(rp.DeadLetterTargetArn, ":")+1:], nil
}

func (cm *ChannelMaker) validate(ctx context.Context) error {
	o := cm.opts
	var missing []string
	exists := func(kind, name string) (string, bool, error) {
		out, err := cm.c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			var nq *types.QueueDoesNotExist
			if errors.As(err, &nq) {
				missing = append(missing, kind+" "+name)
				return "", false, nil
			}
			return "", false, fmt.Errorf("validate %s %s: %w", kind, name, err)
		}
		return aws.ToString(out.QueueUrl), true, nil
	}
	url, ok, err := exists("queue", cm.Result.QueueName)
	if err != nil {
		return err
	}
	if ok {
		cm.Result.QueueURL = url
	}
	for _, q := range []struct{ kind, key string }{{"dead-letter queue", o.DeadLetter}, {"invalid-message queue", o.Invalid}} {
		if q.key == "" {
			continue
		}
		if _, _, err := exists(q.kind, QueueName(q.key, o.Fifo)); err != nil {
			return err
		}
	}
	redrive := ""
	if rp := o.RedrivePolicy; rp != nil {
		redrive = QueueName(rp.DeadLetterQueue, o.Fifo)
		if _, _, err := exists("redrive dead-letter queue", redrive); err != nil {
			return err
		}
	}
	if ok {
		// The redrive policy the queue really holds, which may differ from
		// the file's: SQS accepts a policy whose target does not
		// exist, and then moves nothing anywhere.
		held, err := cm.heldRedriveTarget(ctx, url)
		if err != nil {
			return err
		}
		if held != "" && held != redrive {
			if _, _, err := exists("redrive dead-letter queue (in the queue's RedrivePolicy)", held); err != nil {
				return err
			}
		}
	}
	if o.Topic != "" {
		arn, err := findTopic(ctx, cm.c.SNS, cm.Result.TopicName)
		switch {
		case errors.Is(err, ErrTopicNotFound):
			missing = append(missing, "SNS topic "+cm.Result.TopicName)
		case err != nil:
			return fmt.Errorf("validate topic %s: %w", cm.Result.TopicName, err)
		default:
			cm.Result.TopicARN = arn
			if ok {
				qarn, err := cm.queueARN(ctx, cm.Result.QueueName, url)
				if err != nil {
					return err
				}
				cm.Result.QueueARN = qarn
				sub, err := findSubscription(ctx, cm.c.SNS, arn, qarn)
				if err != nil {
					return err
				}
				if sub == "" {
					missing = append(missing, "subscription of queue "+cm.Result.QueueName+" to SNS topic "+cm.Result.TopicName)
				}
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("makeChannels validate: %s: %w", strings.Join(missing, ", "), ErrMissingChannels)
	}
	return nil
}

// TopicSubscribers returns the endpoints (queue names for SQS subscribers,
// else the endpoint as SNS reports it) of every subscription of the SNS
// topic named name (FIFO names as TopicName makes them). It never creates
// the topic: a missing topic is an error wrapping ErrTopicNotFound. `dlq
// replay`'s fan-out guard lists who else would receive a copy.
func TopicSubscribers(ctx context.Context, c *Clients, name string, fifo bool) ([]string, error) {
	arn, err := findTopic(ctx, c.SNS, TopicName(name, fifo))
	if err != nil {
		return nil, err
	}
	var out []string
	p := sns.NewListSubscriptionsByTopicPaginator(c.SNS, &sns.ListSubscriptionsByTopicInput{TopicArn: &arn})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list subscriptions of topic %s: %w", name, err)
		}
		for _, s := range page.Subscriptions {
			e := aws.ToString(s.Endpoint)
			if aws.ToString(s.Protocol) == "sqs" {
				e = e[strings.LastIndex(e, ":")+1:]
			}
			out = append(out, e)
		}
	}
	return out, nil
}
