package consume_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestConsumePullLeaseIsTheSubscriptions_PubSub: a subscription
// made elsewhere with a 10 s ack deadline, consumed with makeChannels
// assume, pull mode and no ackDeadline in the file: consume starts, and
// the lease its pump keeps is the subscription's 10 s, not the 30 s
// default the file implies (gcp.PullLease, logged at Warn as
// LogLeaseShorter), in both variants. The behaviour under a slow handler
// and two replicas is proven in the gcp package
// (TestPullSlowAckOnSubscriptionMadeElsewhereHandlesOnce).
func TestConsumePullLeaseIsTheSubscriptions_PubSub(t *testing.T) {
	t.Parallel() // waits on the shared Pub/Sub emulator, in a project of its own
	client, srv := gcptest.Start(t, "lease", nil, gcp.Connect)
	for _, variant := range []string{"reactor", "proactor"} {
		t.Run(variant, func(t *testing.T) {
			topic := "elsewhere-" + variant
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + srv.Project + "/topics/" + topic}); err != nil {
				t.Fatalf("create topic: %v", err)
			}
			if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
				Name: gcp.SubscriptionName(srv.Project, topic+"-sub"), Topic: "projects/" + srv.Project + "/topics/" + topic, AckDeadlineSeconds: 10,
			}); err != nil {
				t.Fatalf("create subscription: %v", err)
			}
			file := filepath.Join(t.TempDir(), "brighter.yaml")
			yaml := fmt.Sprintf(`connections:
  gcp:
    projectId: %s
    emulatorHost: %s
subscriptions:
  - name: orders
    transport: gcp
    channelName: %s-sub
    routingKey: %s
    messagePumpType: %s
    makeChannels: assume
    requeueCount: -1
    handler: {type: builtin, name: ack}
    gcp:
      mode: pull
`, srv.Project, srv.Addr, topic, topic, variant)
			if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			cctx, stop := context.WithCancel(context.Background())
			consume := runConsume(cctx, file, cmdtest.AnyListen)
			consume.waitReady(t, 60*time.Second, stop, "")
			stop()
			if c := <-consume.code; c != cmdutil.ExitOK {
				t.Fatalf("consume exited with %d; stderr:\n%s", c, consume.stderr.String())
			}
			var line string
			for _, l := range strings.Split(consume.stderr.String(), "\n") {
				if strings.Contains(l, gcp.LogLeaseShorter) {
					line = l
				}
			}
			// The file's ackDeadline is the 30 s default, which the
			// subscription contradicts: a Warn naming both.
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "ack_deadline=30s") || !strings.Contains(line, "subscription_ack_deadline=10s") {
				t.Fatalf("want a WARN %q with ack_deadline=30s subscription_ack_deadline=10s; stderr:\n%s", gcp.LogLeaseShorter, consume.stderr.String())
			}
		})
	}
}
