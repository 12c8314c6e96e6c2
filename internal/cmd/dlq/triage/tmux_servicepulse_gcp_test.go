package triage

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestDLQTriage_TmuxCopiesNotesRetriesArchive_PubSub: the console in a
// real terminal (tmux, NO_COLOR, at each of consoleSizes) on Google's
// Pub/Sub emulator:
// copiesNotesRetriesArchive. The dead-letter subscription has the id of
// its topic, so that a restore without --to publishes to that topic
// (dlq restore's convention for a subscription named by URL) and the
// console names the same destination as on SQS; each topic has one
// subscription (no fan-out). An id stored twice is two publishes of the
// same stamped message.
func TestDLQTriage_TmuxCopiesNotesRetriesArchive_PubSub(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	client, ps := gcptest.Start(t, "triagecopies", nil, gcp.Connect)
	ctx := context.Background()
	topic := func(n string) string { return "projects/" + ps.Project + "/topics/" + n }
	sub := func(n string) string { return "projects/" + ps.Project + "/subscriptions/" + n }
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	eachConsoleSize(t, "gp", func(t *testing.T, dlq, dest string) triageSetup {
		for _, n := range []string{dlq, dest} {
			if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub(n), Topic: topic(n), AckDeadlineSeconds: 60}); err != nil {
				t.Fatal(err)
			}
		}
		return triageSetup{
			deadLetter: sendWith(ctx, p),
			args:       fmt.Sprintf("pubsub://%s --to %s --endpoint %s", sub(dlq), dest, ps.Addr),
			peek: func(t *testing.T) ([]byte, error) {
				cmd := exec.Command(cmdtest.Bin(t), "dlq", "peek", "pubsub://"+sub(dlq), "-o", "json", "--endpoint", ps.Addr)
				cmd.Env = cmdtest.Env()
				return cmd.Output()
			},
		}
	})
}
