package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// SizeProber is implemented by a Prober whose broker sets a maximum message
// size per queue (SQS MaximumMessageSize): it reads the source's and each
// rejection destination's, so that Check can report a destination that
// cannot take what its source accepts (destination-message-size).
type SizeProber interface {
	// MessageSizes returns the source's maximum message size in bytes and
	// each existing destination's (a destination that does not exist is
	// left out: consume creates it, with makeChannels: create).
	MessageSizes(ctx context.Context, f *config.File, s *config.Subscription) (source int, dests []DestinationSize, err error)
}

// DestinationSize is one rejection destination's maximum message size.
type DestinationSize struct {
	// Field is the file's field naming it (deadLetterRoutingKey,
	// invalidMessageRoutingKey); Name is the queue's name.
	Field, Name string
	// Bytes is its maximum message size.
	Bytes int
	// Setting names the queue's setting in the fix ("" is SQS's
	// MaximumMessageSize); Pos is where a declaration sets it (--infra).
	Setting string
	Pos     config.Position
}

// sizeFindings reports each destination of s smaller than its source.
func sizeFindings(ctx context.Context, f *config.File, s *config.Subscription, p SizeProber, from source) []lint.Finding {
	src, dests, err := p.MessageSizes(ctx, f, s)
	if errors.Is(err, ErrUndecided) {
		return nil
	}
	if err != nil {
		return []lint.Finding{checkFailed(s, fmt.Sprintf("subscription %q: could not read the maximum message sizes from the broker", s.Name), err)}
	}
	var out []lint.Finding
	for _, d := range dests {
		setting := d.Setting
		if setting == "" {
			setting = "MaximumMessageSize"
		}
		if d.Bytes < src {
			out = append(out, from.at(lint.NewFinding(s, lint.RuleDestinationMessageSize, d.Field,
				fmt.Sprintf("subscription %q: %s queue %s takes messages up to %d bytes, smaller than the source's %d: a message the source accepts is refused there when routed, and stays on the source unrouted; give %s a %s of at least %d",
					s.Name, d.Field, d.Name, d.Bytes, src, d.Name, setting, src)), d.Pos))
		}
	}
	return out
}

// MessageSizes reads MaximumMessageSize of the subscription's queue and of
// its deadLetterRoutingKey and invalidMessageRoutingKey queues (named as
// the transport names them); a queue that does not report it has SQS's
// default (limits.SQS.DefaultMaxMessageBytes): SizeProber.
func (p SQS) MessageSizes(ctx context.Context, f *config.File, s *config.Subscription) (int, []DestinationSize, error) {
	c, err := p.Client(ctx, f)
	if err != nil {
		return 0, nil, err
	}
	fifo := s.SQS != nil && s.SQS.QueueType == config.QueueFIFO
	size := func(name string) (int, bool, error) {
		u, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: &name})
		if err != nil {
			return 0, false, sqsQueueErr(f, name, "", err)
		}
		attrs, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{
			QueueUrl: u.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameMaximumMessageSize},
		})
		if err != nil {
			return 0, true, sqsQueueErr(f, name, "attributes", err)
		}
		raw := attrs.Attributes[string(sqstypes.QueueAttributeNameMaximumMessageSize)]
		if raw == "" {
			return limits.SQS.DefaultMaxMessageBytes, true, nil
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return 0, true, fmt.Errorf("queue %s MaximumMessageSize %q is not an integer", name, raw)
		}
		return n, true, nil
	}
	src, _, err := size(sqs.QueueName(s.ChannelName, fifo))
	if err != nil {
		return 0, nil, err
	}
	var dests []DestinationSize
	for _, d := range []struct{ field, key string }{{"deadLetterRoutingKey", s.DeadLetterRoutingKey}, {"invalidMessageRoutingKey", s.InvalidMessageRoutingKey}} {
		if d.key == "" {
			continue
		}
		name := sqs.QueueName(d.key, fifo)
		n, exists, err := size(name)
		if !exists {
			continue // not there yet: not this rule's business
		}
		if err != nil {
			return 0, nil, err
		}
		dests = append(dests, DestinationSize{Field: d.field, Name: name, Bytes: n})
	}
	return src, dests, nil
}
