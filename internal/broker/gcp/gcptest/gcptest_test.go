package gcptest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }

// TestFaults_SwitchOnAndOff drives each fault on the emulator: while on, the
// call fails with PermissionDenied and nothing reaches the emulator; once
// off, the same call succeeds.
func TestFaults_SwitchOnAndOff(t *testing.T) {
	ctx := context.Background()
	f := &gcptest.Faults{}
	client, srv := gcptest.Start(t, "gcptest", f, gcp.Connect)
	topic := "projects/" + srv.Project + "/topics/faulted"
	other := "projects/" + srv.Project + "/topics/other"
	sub := "projects/" + srv.Project + "/subscriptions/faulted-sub"
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
	pull := func() []*pubsubpb.ReceivedMessage {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 10})
		if status.Code(err) == codes.DeadlineExceeded {
			return nil
		}
		if err != nil {
			t.Fatalf("pull: %v", err)
		}
		return resp.ReceivedMessages
	}

	f.FailPublishTo(topic)
	wantDenied("publish to the faulted topic", publish(topic))
	if err := publish(other); err != nil {
		t.Fatalf("publish to another topic: %v", err)
	}
	if got := pull(); len(got) != 0 {
		t.Fatalf("the faulted publish reached the emulator: %d messages", len(got))
	}
	f.FailPublishTo("")
	if err := publish(topic); err != nil {
		t.Fatalf("publish after the fault is off: %v", err)
	}

	var got []*pubsubpb.ReceivedMessage
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		got = pull()
	}
	if len(got) != 1 {
		t.Fatalf("pull: %d messages, want 1", len(got))
	}
	ackIDs := []string{got[0].AckId}

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

// TestStart_OwnProjectPerCall checks that two calls share the test
// binary's one emulator but get two projects: a topic made in one is not in
// the other.
func TestStart_OwnProjectPerCall(t *testing.T) {
	ctx := context.Background()
	a, srvA := gcptest.Start(t, "gcptest", nil, gcp.Connect)
	b, srvB := gcptest.Start(t, "gcptest", nil, gcp.Connect)
	if srvA.Addr != srvB.Addr {
		t.Fatalf("two emulators (%s, %s), want one per test binary", srvA.Addr, srvB.Addr)
	}
	if srvA.Project == srvB.Project {
		t.Fatalf("both calls got project %s", srvA.Project)
	}
	if _, err := a.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + srvA.Project + "/topics/orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: "projects/" + srvB.Project + "/topics/orders"}); status.Code(err) != codes.NotFound {
		t.Fatalf("get topic in the second project: %v, want NotFound", err)
	}
}

// TestEmulator_ValidatesNames pins that the server is the real
// emulator, not pstest: a one-letter topic name is InvalidArgument.
func TestEmulator_ValidatesNames(t *testing.T) {
	client, srv := gcptest.Start(t, "gcptest", nil, gcp.Connect)
	_, err := client.TopicAdminClient.CreateTopic(context.Background(), &pubsubpb.Topic{Name: "projects/" + srv.Project + "/topics/t"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("create topic \"t\": %v, want InvalidArgument", err)
	}
}
