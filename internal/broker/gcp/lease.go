package gcp

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// maxAckIDsPerCall bounds the ack ids of one ModifyAckDeadline call (the
// service limits a request's size, not its count; 1000 ids stay well
// inside it).
const maxAckIDsPerCall = 1000

var (
	_ broker.LeaseExtender   = (*PullConsumer)(nil)
	_ broker.BoundedReceiver = (*PullConsumer)(nil)
)

// ReceiveUpTo is Receive asking for at most limit messages (the Pull's
// MaxMessages is min(limit, BufferSize), at least 1): broker.BoundedReceiver
// (issue 12: receive-ahead never holds more than the buffer needs).
func (c *PullConsumer) ReceiveUpTo(ctx context.Context, timeout time.Duration, limit int) ([]*message.Message, error) {
	return c.receive(ctx, timeout, min(max(limit, 1), c.opts.BufferSize))
}

// Lease returns the ack deadline of the subscription as configured
// (ConsumerOptions.AckDeadline, DefaultAckDeadline when 0), in the whole
// seconds Pub/Sub grants: how long a pulled message is held for this
// consumer (broker.LeaseExtender, docs/adr/0005-leases.md).
func (c *PullConsumer) Lease() time.Duration {
	d := c.opts.AckDeadline
	if d <= 0 {
		d = DefaultAckDeadline
	}
	return min(max(d/time.Second, 1)*time.Second, maxAckDeadline)
}

// ExtendLeases makes each message's ack deadline d from now (rounded up to
// whole seconds, between 1 s and 600 s) with ModifyAckDeadline, one call for
// up to 1000 ack ids (NFR-3): broker.LeaseExtender. A message without a
// pull receipt gets ErrNoReceipt; a failed call's error is reported for
// every ack id it carried. Pub/Sub does not say when an ack id is stale
// (outside exactly-once delivery the call succeeds), so no error wraps
// broker.ErrStaleReceipt; the pump's schedule keeps ack ids current.
func (c *PullConsumer) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	errs := make([]error, len(ms))
	secs := int32((min(max(d, time.Second), maxAckDeadline) + time.Second - 1) / time.Second)
	ids := make([]string, 0, min(len(ms), maxAckIDsPerCall))
	idx := make([]int, 0, cap(ids))
	flush := func() {
		if len(ids) == 0 {
			return
		}
		err := c.client.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: c.sub, AckIds: ids, AckDeadlineSeconds: secs})
		if err != nil {
			for _, i := range idx {
				errs[i] = fmt.Errorf("extend lease of message %s on %s to %ds with ModifyAckDeadline: %w", ms[i].Header.MessageID, c.sub, secs, err)
			}
		}
		ids, idx = ids[:0], idx[:0]
	}
	for i, m := range ms {
		id, err := ackID(m)
		if err != nil {
			errs[i] = err
			continue
		}
		ids, idx = append(ids, id), append(idx, i)
		if len(ids) == maxAckIDsPerCall {
			flush()
		}
	}
	flush()
	return errs
}
