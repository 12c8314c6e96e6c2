package gcp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// maxAckIDsPerCall bounds the ack ids of one ModifyAckDeadline call (the
// service limits a request's size, not its count; 1000 ids stay well
// inside it).
const maxAckIDsPerCall = 1000

var _ broker.LeaseExtender = (*PullConsumer)(nil)

// MinAckDeadline is the shortest ack deadline Pub/Sub grants a
// subscription (10 s).
const MinAckDeadline = 10 * time.Second

// leaseReadTimeout bounds PullLease's GetSubscription call.
const leaseReadTimeout = 10 * time.Second

// Log texts of PullLease (stable: tests and alerts match them).
const (
	// LogLeaseShorter: the subscription holds a pulled message for less
	// than the configuration says (it was made elsewhere, or changed);
	// the pull lease is the subscription's.
	LogLeaseShorter = "subscription's ack deadline is shorter than configured; the pull lease is the subscription's"
	// LogLeaseUnread: the subscription could not be read (no
	// pubsub.subscriptions.get permission, say) and no ackDeadline is
	// configured; the pull lease is Pub/Sub's minimum, MinAckDeadline.
	LogLeaseUnread = "subscription's ack deadline could not be read; the pull lease is Pub/Sub's minimum"
)

// PullLease returns the lease for a pull consumer of sub
// (ConsumerOptions.AckDeadline): the shorter of configured (0 means
// DefaultAckDeadline) and the ack deadline the service holds for the
// subscription, read with one GetSubscription under a 10 s deadline. A
// subscription made elsewhere (makeChannels validate or assume) may hold a
// message for less than the configuration says, and a lease the pump
// believes longer than the broker's lapses before it is extended.
// A shorter subscription is logged at Info when nothing was configured and
// at Warn (LogLeaseShorter) when configured says otherwise. When the read
// fails the lease is configured, or MinAckDeadline when configured is 0
// (LogLeaseUnread at Warn): extending early costs calls, late costs the
// lease. It never fails.
func PullLease(ctx context.Context, client *pubsub.Client, sub string, configured time.Duration, log *slog.Logger) time.Duration {
	want := configured
	if want <= 0 {
		want = DefaultAckDeadline
	}
	name := SubscriptionName(client.Project(), sub)
	rctx, cancel := context.WithTimeout(ctx, leaseReadTimeout)
	defer cancel()
	s, err := client.SubscriptionAdminClient.GetSubscription(rctx, &pubsubpb.GetSubscriptionRequest{Subscription: name})
	if err != nil {
		if configured > 0 {
			return configured
		}
		log.WarnContext(ctx, LogLeaseUnread, "pubsub_subscription", name, "lease", MinAckDeadline.String(), "error", err.Error())
		return MinAckDeadline
	}
	granted := time.Duration(s.GetAckDeadlineSeconds()) * time.Second
	if granted <= 0 || granted >= want {
		return want
	}
	if configured > 0 {
		log.WarnContext(ctx, LogLeaseShorter, "pubsub_subscription", name, "ack_deadline", configured.String(), "subscription_ack_deadline", granted.String())
	} else {
		log.InfoContext(ctx, LogLeaseShorter, "pubsub_subscription", name, "ack_deadline", "0 ("+DefaultAckDeadline.String()+")", "subscription_ack_deadline", granted.String())
	}
	return granted
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
// every ack id it carried. Pub/Sub says an ack id is stale only on an
// exactly-once subscription (ErrAckRefused, wrapping
// broker.ErrStaleReceipt); outside it the call succeeds, and the pump's
// schedule keeps ack ids current.
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
			for k, i := range idx {
				errs[i] = ackCallErr(fmt.Sprintf("extend lease of message %s on %s to %ds with ModifyAckDeadline", ms[i].Header.MessageID, c.sub, secs), ids[k], err)
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
