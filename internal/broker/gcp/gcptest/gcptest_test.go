package gcptest_test

import (
	"context"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

const (
	project = "gcptest"
	topic   = "projects/" + project + "/topics/t"
	other   = "projects/" + project + "/topics/other"
	sub     = "projects/" + project + "/subscriptions/s"
)

// TestFaults_SwitchOnAndOff drives each fault on the emulator: while on, the
// call fails with PermissionDenied and nothing reaches the emulator; once
// off, the same call succeeds.
func TestFaults_SwitchOnAndOff(t *testing.T) {
	ctx := context.Background()
	f := &gcptest.Faults{}
	client, srv := gcptest.Start(t, project, f, gcp.Connect)
	for _, name := range []string{topic, other} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	publish := func(to string) error {
		_, err := client.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: to, Messages: []*pubsubpb.PubsubMessage{{Data: []byte("x")}}})
		return err
	}
	wantDenied := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%s: %v, want the injected PermissionDenied", what, err)
		}
	}

	f.FailPublishTo(topic)
	wantDenied("publish to the faulted topic", publish(topic))
	if err := publish(other); err != nil {
		t.Fatalf("publish to another topic: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("emulator holds %d messages, want 1 (the faulted publish must not reach it)", n)
	}
	f.FailPublishTo("")
	if err := publish(topic); err != nil {
		t.Fatalf("publish after the fault is off: %v", err)
	}

	resp, err := client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 1})
	if err != nil || len(resp.ReceivedMessages) != 1 {
		t.Fatalf("pull: %v, %d messages, want 1", err, len(resp.GetReceivedMessages()))
	}
	ackIDs := []string{resp.ReceivedMessages[0].AckId}

	f.FailModifyAckDeadline(true)
	wantDenied("modifyAckDeadline", client.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: ackIDs, AckDeadlineSeconds: 30}))
	f.FailModifyAckDeadline(false)
	if err := client.SubscriptionAdminClient.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{Subscription: sub, AckIds: ackIDs, AckDeadlineSeconds: 30}); err != nil {
		t.Fatalf("modifyAckDeadline after the fault is off: %v", err)
	}

	f.FailAcknowledge(true)
	wantDenied("acknowledge", client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ackIDs}))
	f.FailAcknowledge(false)
	if err := client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ackIDs}); err != nil {
		t.Fatalf("acknowledge after the fault is off: %v", err)
	}
}

// TestStart_FreshServerPerCall checks that two calls get two emulators: a
// topic made on one is not on the other.
func TestStart_FreshServerPerCall(t *testing.T) {
	ctx := context.Background()
	a, srvA := gcptest.Start(t, project, nil, gcp.Connect)
	b, srvB := gcptest.Start(t, project, nil, gcp.Connect)
	if srvA.Addr == srvB.Addr {
		t.Fatalf("both calls share the emulator at %s", srvA.Addr)
	}
	if _, err := a.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: topic}); status.Code(err) != codes.NotFound {
		t.Fatalf("get topic on the second emulator: %v, want NotFound", err)
	}
}
