package consume_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
)

// TestConsumeRestart_PubSub starts `brighter consume` twice on the
// same file against Google's Pub/Sub emulator, in both variants and both
// subscription modes: the second start finds every topic and subscription
// already there (ack deadline, RetryPolicy, DeadLetterPolicy, labels) and
// must still start its pump (ready) and exit 0, with no error logged.
// Once the restart exited 1: the update mask carried labels,
// which the emulator refuses.
//
// Each start also consumes: a message published once it is ready is
// acknowledged (brighter_messages_acknowledged_total on /metrics) within
// the ack deadline plus restartMargin. (Before the stream consumer bounded
// each of the client's lease extensions by ackDeadline, a second start in
// stream mode often got nothing for minutes: ADR 0002.)
func TestConsumeRestart_PubSub(t *testing.T) {
	t.Parallel() // a project of its own on the shared emulator; waits on ack deadlines
	client, srv := gcptest.Start(t, "restart", nil, gcp.Connect)
	for _, tc := range []struct{ variant, mode string }{{"reactor", "pull"}, {"proactor", "pull"}, {"reactor", "stream"}, {"proactor", "stream"}} {
		t.Run(tc.variant+"-"+tc.mode, func(t *testing.T) {
			t.Parallel() // a topic of its own
			variant := tc.variant
			topic := "orders-" + variant + "-" + tc.mode
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
    requeueCount: 3
    requeueDelay: 2s
    deadLetterRoutingKey: %s-dlq
    handler: {type: builtin, name: ack}
    gcp:
      mode: %s
      ackDeadline: %s
      labels: {team: orders}
      subscriberMember: serviceAccount:test@example.iam.gserviceaccount.com
      deadLetterPolicy:
        topic: %s-native
        maxDeliveryAttempts: 5
        publisherMember: serviceAccount:test@example.iam.gserviceaccount.com
`, srv.Project, srv.Addr, topic, topic, variant, topic, tc.mode, config.FormatDuration(restartAckDeadline), topic)
			if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			for start := 1; start <= 2; start++ {
				ctx, cancel := context.WithCancel(context.Background())
				consume := runConsume(ctx, file, cmdtest.AnyListen)
				stderr, code := consume.stderr, consume.code
				// Ready (/readyz 200) means start-up, with its create or
				// update of every channel, succeeded and the pump runs.
				addr := consume.waitReady(t, 60*time.Second, cancel, fmt.Sprintf("start %d: ", start))
				id := fmt.Sprintf("after-start-%d", start)
				w := gcp.Encode(message.New(id, topic, message.MTEvent, []byte(`{"n":1}`)))
				pub := client.Publisher(topic)
				_, perr := pub.Publish(context.Background(), &pubsub.Message{Data: w.Data, Attributes: w.Attributes}).Get(context.Background())
				pub.Stop()
				if perr != nil {
					cancel()
					t.Fatalf("start %d: publish: %v", start, perr)
				}
				until := time.Now().Add(restartAckDeadline + restartMargin)
				for benchGCPScrapeAcked(addr) < 1 {
					if time.Now().After(until) {
						cancel()
						t.Fatalf("start %d: %s published once the start was ready was not acknowledged within %s; stderr:\n%s",
							start, id, restartAckDeadline+restartMargin, stderr.String())
					}
					time.Sleep(100 * time.Millisecond)
				}
				cancel()
				if c := <-code; c != cmdutil.ExitOK {
					t.Fatalf("start %d: consume exited with %d; stderr:\n%s", start, c, stderr.String())
				}
				if s := stderr.String(); strings.Contains(s, "level=ERROR") || !strings.Contains(s, "message pump started") {
					t.Fatalf("start %d: consume logged an error or started no pump:\n%s", start, s)
				}
			}
		})
	}
}

const (
	// restartAckDeadline is the subscription's ack deadline in
	// TestConsumeRestart_PubSub (Pub/Sub's minimum).
	restartAckDeadline = 10 * time.Second
	// restartMargin is the time on top of one ack deadline a message may
	// take to be acknowledged on a loaded machine.
	restartMargin = 20 * time.Second
)
