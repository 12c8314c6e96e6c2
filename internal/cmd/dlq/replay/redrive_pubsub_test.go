package replay_test

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQ_PubSubNoMetadataReplayedToItsRedriveSource: a message on a
// subscription's deadLetterPolicy topic that carries no Brighter
// attributes at all (a foreign message the policy moved: no rejection
// metadata, no Topic) is shown by peek with the subscription's topic as
// its ORIGINAL TOPIC, and replay without --to publishes it there, the
// subscriptions file saying which subscription's deadLetterPolicy names
// the topic (Google's emulator).
func TestDLQ_PubSubNoMetadataReplayedToItsRedriveSource(t *testing.T) {
	t.Parallel() // waits on the shared Pub/Sub emulator, in a project of its own
	ctx := context.Background()
	client, srv := gcptest.Start(t, "redrive", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + n }
	for sub, tp := range map[string]string{"orders-sub": "orders", "dlq-orders-sub": "native-dlq"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(tp)}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + sub, Topic: topic(tp), AckDeadlineSeconds: 60,
		}); err != nil {
			t.Fatal(err)
		}
	}
	pub := client.Publisher(topic("native-dlq"))
	id, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(`{}`)}).Get(ctx)
	pub.Stop()
	if err != nil {
		t.Fatal(err)
	}
	file := dlqtest.WriteYAML(t, `connections:
  gcp:
    projectId: `+pj+`
    emulatorHost: `+srv.Addr+`
subscriptions:
  - name: orders
    transport: gcp
    routingKey: orders
    channelName: orders-sub
    handler: {type: builtin, name: ack}
    gcp:
      deadLetterPolicy:
        topic: native-dlq
        maxDeliveryAttempts: 10
`)
	dlq := func(args ...string) (int, string, string) {
		io, out, errOut := cmdtest.FakeIO("", false)
		code := cmdmain.Run(ctx, io, append(append([]string{"dlq"}, args...), "--wait", "1s"))
		return code, out.String(), errOut.String()
	}
	code, out, errOut := dlq("peek", "orders", "--native", "-c", file)
	var row []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == id {
			row = f
		}
	}
	if code != cmdutil.ExitOK || row == nil || row[1] != "orders" || !strings.Contains(out, "NativeRedrive: moved by broker redrive") {
		t.Errorf("peek of the deadLetterPolicy subscription: exit %d, want %s shown from orders\nstdout:\n%s\nstderr:\n%s", code, id, out, errOut)
	}
	code, out, errOut = dlq("replay", "orders", "--native", "-c", file, "--yes")
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed "+id+" -> orders") {
		t.Fatalf("replay of the deadLetterPolicy subscription: exit %d, want %s replayed to orders\nstdout:\n%s\nstderr:\n%s", code, id, out, errOut)
	}
	code, out, errOut = dlq("peek", "pubsub://projects/"+pj+"/subscriptions/orders-sub", "--endpoint", srv.Addr, "-o", "json")
	if code != cmdutil.ExitOK || !strings.Contains(out, `"id":"`+id+`"`) {
		t.Errorf("orders-sub after the replay: exit %d, want %s there\nstdout:\n%s\nstderr:\n%s", code, id, out, errOut)
	}
}
