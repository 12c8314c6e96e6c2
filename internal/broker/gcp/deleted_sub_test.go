package gcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
)

// TestReceiveFromADeletedSubscriptionSaysWhatToDo: a subscription deleted
// while consuming (Google's emulator answers NotFound) fails the receive,
// not as a channel failure (the pump stops, consume exits 1), with an
// error that says the subscription does not exist and what to do:
// recreate it, or restart with makeChannels: create. Pull and stream.
func TestReceiveFromADeletedSubscriptionSaysWhatToDo(t *testing.T) {
	t.Parallel()
	for _, md := range modes {
		t.Run(string(md), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := e.ordersConsumer(t, md)
			ctx := ctxT(t, 60*time.Second)
			if _, err := c.Receive(ctx, 100*time.Millisecond); err != nil {
				t.Fatalf("receive before the deletion: %v", err)
			}
			if err := e.client.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: SubscriptionName(e.project, "orders-sub")}); err != nil {
				t.Fatal(err)
			}
			var err error
			for err == nil && ctx.Err() == nil {
				_, err = c.Receive(ctx, 500*time.Millisecond)
			}
			t.Logf("receive: %v", err)
			if err == nil || errors.Is(err, broker.ErrChannelFailure) || !strings.Contains(err.Error(), "NotFound") || !strings.HasSuffix(err.Error(), SubscriptionGoneFix) {
				t.Errorf("receive from the deleted subscription = %v, want a failure (not a channel failure) ending %q", err, SubscriptionGoneFix)
			}
		})
	}
}
