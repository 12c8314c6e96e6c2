package sqs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// publisher is the Router's broker.Publisher: SendMessage of the routed copy
// to the destination queue (its URL looked up once and cached).
type publisher struct{ k *Consumer }

func (p publisher) Publish(ctx context.Context, destination string, m *message.Message) error {
	url, err := p.k.urls.url(ctx, destination)
	if err != nil {
		return err
	}
	if p.k.opts.Fifo && m.Header.PartitionKey != "" {
		m = m.Clone()
		m.Header.Bag[AttrMessageDeduplicationID] = RoutedDeduplicationID(m)
	}
	return sendSQS(ctx, p.k.c.SQS, url, m, nil)
}

// RoutedDeduplicationID is the FIFO MessageDeduplicationId of the routed
// copy of m (R-18, on a FIFO queue; docs/adr/0006-ordered-channels-under-deferral.md): the SHA-256, hex, of m's message
// id and the deduplication id it was received with. The source's own id
// would make SQS drop, as a duplicate, the copy of a second message whose
// deduplication id is the same (content-based deduplication of an equal
// body sent more than five minutes after the first) when both are
// rejected within five minutes: a silent loss. The same message routed
// twice (a redelivery after a crash between the copy and the acknowledge)
// still gets one id, so SQS keeps one copy.
func RoutedDeduplicationID(m *message.Message) string {
	src, _ := m.Header.Bag.String(AttrMessageDeduplicationID)
	sum := sha256.Sum256([]byte("routed\x00" + m.Header.MessageID + "\x00" + src))
	return hex.EncodeToString(sum[:])
}

// ErrNoDeadLetter is returned by DeadLetterDepth when the consumer has no
// dead-letter queue.
var ErrNoDeadLetter = errors.New("sqs consumer has no dead-letter queue")

// DeadLetterDepth returns ApproximateNumberOfMessages of the dead-letter
// queue (deadLetterRoutingKey): one GetQueueAttributes call (and one
// GetQueueUrl the first time), made by the dashboard's poller, never on the
// message path. The figure is SQS's approximation. It returns
// ErrNoDeadLetter when no dead-letter queue is configured, or the SDK's
// error wrapped with the queue name.
func (k *Consumer) DeadLetterDepth(ctx context.Context) (int64, error) {
	if k.router.DeadLetter == "" {
		return 0, ErrNoDeadLetter
	}
	url, err := k.urls.url(ctx, k.router.DeadLetter)
	if err != nil {
		return 0, err
	}
	out, err := k.c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if err != nil {
		return 0, fmt.Errorf("dead-letter depth of %s: %w", k.router.DeadLetter, err)
	}
	n, err := strconv.ParseInt(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("dead-letter depth of %s: %w", k.router.DeadLetter, err)
	}
	return n, nil
}
