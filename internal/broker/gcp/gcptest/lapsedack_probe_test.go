package gcptest_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

// TestEmulatorLapsedAckIDProbe records, with no brighter code (the plain
// Pub/Sub client), what Google's emulator does with an acknowledgement of
// an ack id whose ack deadline (10 s) has passed, on a subscription without
// exactly-once delivery, so that an emulator upgrade re-measures it. The
// stale-settle conformance row (R-4/stale-ack) and the redelivery rows (R-4/lapse-redelivery,
// R-4/stale-settle) acknowledge such ack ids on purpose:
//
//   - not-handed-out-again: the message is pulled, nothing pulls for 12 s,
//     then its ack id is acknowledged: the call succeeds and the message is
//     gone (not delivered again within 15 s): until it hands the message
//     out again (to a Pull), the emulator takes the lapsed ack id as the
//     message's own.
//   - handed-out-again: the message is pulled, pulled again once its
//     deadline passed (attempt 2), and then the first ack id is
//     acknowledged: the call succeeds and does nothing, so the message is
//     delivered a third time once the second delivery's deadline passes.
//
// Recorded on 0.8.20, 2026-12-05: as above, in every run. The test fails
// when either differs (re-measure: this log, docs/emulators.md
// #googles-pubsub-emulator), or when the jar is not the one recorded.
func TestEmulatorLapsedAckIDProbe(t *testing.T) {
	t.Parallel()
	const deadline = 10 * time.Second
	t.Run("not-handed-out-again", func(t *testing.T) {
		t.Parallel()
		p := newLapseProbe(t, deadline)
		first := p.pull(t, 2*deadline)
		if first == "" {
			t.Fatal("the message was never delivered")
		}
		time.Sleep(deadline + 2*time.Second)
		p.ack(t, first)
		if again := p.pull(t, deadline+5*time.Second); again != "" {
			t.Errorf("the message was delivered again after an acknowledgement of its only ack id, sent 2 s after that ack id's deadline with nothing pulled since: "+
				"the emulator no longer honours a lapsed ack id (recorded on %s: it did); the R-4/stale-ack Reactor cells hand the message out again and fail", probeRecorded)
		}
		p.checkJar(t)
	})
	t.Run("handed-out-again", func(t *testing.T) {
		t.Parallel()
		p := newLapseProbe(t, deadline)
		first := p.pull(t, 2*deadline)
		if first == "" {
			t.Fatal("the message was never delivered")
		}
		time.Sleep(deadline + time.Second)
		second := p.pull(t, deadline)
		if second == "" {
			t.Fatalf("the message was not delivered again within %s after its deadline of %s passed", deadline, deadline)
		}
		p.ack(t, first)
		third := p.pull(t, 2*deadline)
		if third == "" {
			t.Errorf("an acknowledgement of the first ack id, sent after the message was delivered again, removed it (not delivered a third time within %s): "+
				"recorded on %s, it did nothing; the stale-settle rows' superseded receipts rest on that", 2*deadline, probeRecorded)
		} else {
			p.ack(t, third)
		}
		p.checkJar(t)
	})
}

// lapseProbe is one topic with one message and its subscription.
type lapseProbe struct {
	client *pubsub.Client
	sub    string
}

// newLapseProbe publishes one message to a new topic whose subscription
// has ack deadline d.
func newLapseProbe(t *testing.T, d time.Duration) lapseProbe {
	t.Helper()
	client, srv := gcptest.Start(t, "lapse", nil, func(ctx context.Context, project string, opts ...option.ClientOption) (*pubsub.Client, error) {
		return pubsub.NewClient(ctx, project, opts...)
	})
	ctx := t.Context()
	topic := "projects/" + srv.Project + "/topics/lapse"
	sub := "projects/" + srv.Project + "/subscriptions/lapse-sub"
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: int32(d / time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: topic, Messages: []*pubsubpb.PubsubMessage{{Data: []byte("m")}}}); err != nil {
		t.Fatal(err)
	}
	return lapseProbe{client: client, sub: sub}
}

// pull pulls until a message comes, for at most within, and returns its
// ack id ("" when none came).
func (p lapseProbe) pull(t *testing.T, within time.Duration) string {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); {
		pctx, cancel := context.WithTimeout(t.Context(), min(3*time.Second, time.Until(end)+time.Millisecond))
		resp, err := p.client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: p.sub, MaxMessages: 1})
		cancel()
		if err == nil && len(resp.ReceivedMessages) > 0 {
			return resp.ReceivedMessages[0].GetAckId()
		}
	}
	return ""
}

// ack acknowledges id, which must succeed.
func (p lapseProbe) ack(t *testing.T, id string) {
	t.Helper()
	if err := p.client.SubscriptionAdminClient.Acknowledge(t.Context(), &pubsubpb.AcknowledgeRequest{Subscription: p.sub, AckIds: []string{id}}); err != nil {
		t.Fatalf("acknowledge %s: %v (outside exactly-once the emulator answers every acknowledgement with success)", id, err)
	}
}

// checkJar fails when the emulator is not the one the probe was recorded on.
func (p lapseProbe) checkJar(t *testing.T) {
	t.Helper()
	if jar := emulatorJar(); jar != probeRecorded {
		t.Errorf("the emulator is %q, the probe was recorded on %s: re-measure (this log), update docs/emulators.md#googles-pubsub-emulator and probeRecorded", jar, probeRecorded)
	}
}
