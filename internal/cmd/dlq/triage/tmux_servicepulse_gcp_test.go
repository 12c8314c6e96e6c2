package triage

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
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
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives the console in a real terminal; install it (make deps installs tmux)", err)
	}
	client, ps := gcptest.Start(t, "triagecopies", nil, gcp.Connect)
	ctx := context.Background()
	topic := func(n string) string { return "projects/" + ps.Project + "/topics/" + n }
	sub := func(n string) string { return "projects/" + ps.Project + "/subscriptions/" + n }
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	for _, size := range consoleSizes {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			t.Parallel()
			run := fmt.Sprintf("gp%dw%d", time.Now().UnixNano()%1e9, size.w)
			dlq, dest := "triage-dlq-"+run, "triage-dest-"+run
			for _, n := range []string{dlq, dest} {
				if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
					t.Fatal(err)
				}
				if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub(n), Topic: topic(n), AckDeadlineSeconds: 60}); err != nil {
					t.Fatal(err)
				}
			}
			copiesNotesRetriesArchive(t, triageSetup{
				run: run, dlq: dlq, dest: dest, w: size.w, h: size.h,
				deadLetter: func(t *testing.T, m *message.Message) {
					t.Helper()
					if err := p.Send(ctx, m); err != nil {
						t.Fatal(err)
					}
				},
				args: fmt.Sprintf("pubsub://%s --to %s --endpoint %s", sub(dlq), dest, ps.Addr),
				peek: func(t *testing.T) ([]byte, error) {
					cmd := exec.Command(cmdtest.Bin(t), "dlq", "peek", "pubsub://"+sub(dlq), "-o", "json", "--endpoint", ps.Addr)
					cmd.Env = cmdtest.Env()
					return cmd.Output()
				},
			})
		})
	}
}
