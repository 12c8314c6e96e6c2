package triage

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQTriage_TmuxSearchAndRefresh_PubSub: the console in a real
// terminal (tmux, NO_COLOR) on Google's Pub/Sub emulator, at 80x24 and
// 200x60, over dead letters of three handlers whose causes share the
// budget's long prefix: each group shows its topic and its last error; /
// on the groups screen finds a message by the order number in its body
// and by its id, from any group; with --refresh 1s, messages
// dead-lettered while the console is open appear without a key press, and
// every earlier one is still counted (a re-read misses none).
func TestDLQTriage_TmuxSearchAndRefresh_PubSub(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	client, ps := gcptest.Start(t, "triagesearch", nil, gcp.Connect)
	ctx := context.Background()
	topic := func(n string) string { return "projects/" + ps.Project + "/topics/" + n }
	sub := func(n string) string { return "projects/" + ps.Project + "/subscriptions/" + n }
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	for _, size := range []struct{ w, h int }{{80, 24}, {200, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			run := fmt.Sprintf("gs%d", time.Now().UnixNano()%1e9)
			dlq, dest := "dlq-"+run, "dest-"+run
			for _, n := range []string{dlq, dest} {
				if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
					t.Fatal(err)
				}
				if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub(n), Topic: topic(n), AckDeadlineSeconds: 60}); err != nil {
					t.Fatal(err)
				}
			}
			now := time.Now()
			handlers := []struct{ topic, last string }{
				{"payments", "card declined by the acquirer"},
				{"shipping", "carrier API returned 503"},
				{"stock", "row locked by another order"},
			}
			for i := range 12 {
				h := handlers[i%3]
				if err := p.Send(ctx, budgetSpent(fmt.Sprintf("o%d-%s", 3000+i, run), h.topic, dlq, h.last, 3000+i, now.Add(-time.Duration(i)*time.Minute))); err != nil {
					t.Fatal(err)
				}
			}
			exitFile := filepath.Join(t.TempDir(), "exit")
			command := fmt.Sprintf("%s dlq triage pubsub://%s --to pubsub://%s --refresh 1s --visibility 30s --endpoint %s; echo $? > %s",
				cmdtest.Bin(t), sub(dlq), topic(dest), ps.Addr, exitFile)
			s := startTriageAt(t, run, command, []string{"NO_COLOR=1"}, size.w, size.h)
			sc := s.Await("the three groups, told apart, four each", func(sc string) bool {
				for _, h := range handlers {
					if !strings.Contains(sc, h.topic) || !strings.Contains(sc, "…"+h.last[:10]) {
						return false
					}
				}
				return strings.Count(sc, "    4 ") == 3
			})
			fitsWidth(t, sc, size.w)

			s.searchesBodyAndID(run)

			for i := range 2 {
				m := message.New(fmt.Sprintf("late%d-%s", i, run), "billing", message.MTCommand, []byte(`{}`))
				if err := p.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "ledger closed for the day"}, time.Now())); err != nil {
					t.Fatal(err)
				}
			}
			s.Await("the late dead letters, without a key press, and the twelve still counted", func(sc string) bool {
				return strings.Contains(sc, "ledger closed for the day") && strings.Contains(sc, "billing") && strings.Count(sc, "    4 ") == 3
			})
			s.Keys(true, "q")
			s.AwaitExit(exitFile)
		})
	}
}
