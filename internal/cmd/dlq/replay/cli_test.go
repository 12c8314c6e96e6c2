package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/message"
)

// TestDLQReplay_DeclinedConfirmationExits2 answers the confirmation prompt
// of a replay above --confirm-over on a terminal: "n", an empty line or the
// end of input is a refused replay (exit 2, as without --yes off a
// terminal), not a failure (exit 1), and nothing moves; "y" replays. The
// prompt names where the copies would go.
func TestDLQReplay_DeclinedConfirmationExits2(t *testing.T) {
	t.Parallel() // in process, on memory DLQ files of its own; each case waits out a receive
	for name, answer := range map[string]string{"n": "n\n", "no": "no\n", "empty line": "\n", "end of input": ""} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := cmdtest.WriteMemoryDLQ(t, 2)
			io, out, errOut := cmdtest.FakeIO(answer, false)
			io.InTTY = true
			code := cmdmain.Run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "1"})
			if code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
			}
			if !strings.Contains(errOut.String(), "Replay 2 messages from memory://orders-dlq to orders? [y/N] ") || !strings.Contains(errOut.String(), "brighter: replay cancelled") {
				t.Errorf("stderr lacks the prompt or the cancellation:\n%s", errOut)
			}
			after, _ := os.ReadFile(path)
			for _, id := range []string{"p0", "p1"} {
				if !strings.Contains(string(after), `"id":"`+id+`","topic":"orders-dlq"`) {
					t.Errorf("a declined replay moved %s:\n%s", id, after)
				}
			}
		})
	}
	t.Run("y", func(t *testing.T) {
		t.Parallel()
		path := cmdtest.WriteMemoryDLQ(t, 1)
		io, out, errOut := cmdtest.FakeIO("y\n", false)
		io.InTTY = true
		// No subscriptions file names orders: the replay trusts the
		// messages' originalTopic explicitly (the replay allow-list, docs/security.md).
		code := cmdmain.Run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "0", "--allow-any-destination"})
		if code != cmdutil.ExitOK || !strings.Contains(out.String(), "replayed 1, skipped 0, failed 0") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if !strings.Contains(errOut.String(), "Replay 1 message from memory://orders-dlq to orders? [y/N] ") {
			t.Errorf("prompt for one message is not singular:\n%s", errOut)
		}
	})
}

// TestDLQReplay_PubSubTo replays from Pub/Sub subscriptions on Google's
// emulator: --to may be pubsub://projects/P/topics/T; a --to naming the
// topic the subscription being read is attached to (asked of Pub/Sub, or as
// the subscriptions file names it) is refused before any pull (exit 2), as
// are a subscription URL and another transport's URL.
func TestDLQReplay_PubSubTo(t *testing.T) {
	t.Parallel() // waits on the shared Pub/Sub emulator, in a project of its own
	ctx := context.Background()
	client, srv := gcptest.Start(t, "demo", nil, gcp.Connect)
	pj := srv.Project
	for _, topic := range []string{"orders-dlq", "feed", "other", "native-dlq"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + pj + "/topics/" + topic}); err != nil {
			t.Fatal(err)
		}
	}
	for sub, topic := range map[string]string{"orders-dlq": "orders-dlq", "reader": "feed", "other-sub": "other", "dlq-orders": "native-dlq"} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + sub, Topic: "projects/" + pj + "/topics/" + topic, AckDeadlineSeconds: 60,
		}); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := `connections:
  gcp:
    projectId: ` + pj + `
    emulatorHost: ` + srv.Addr + `
subscriptions:
  - name: orders
    transport: gcp
    channelName: orders
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: ack}
    gcp:
      deadLetterPolicy:
        topic: native-dlq
        maxDeliveryAttempts: 10
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := gcp.NewProducer(client, gcp.ProducerOptions{})
	m := message.Stamp(message.New("m1", "orders", message.MTCommand, []byte(`{}`)), "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())
	if err := p.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	url := func(sub string) string { return "pubsub://projects/" + pj + "/subscriptions/" + sub }
	dlq := func(args ...string) (int, string, string) {
		io, out, errOut := cmdtest.FakeIO("", false)
		code := cmdmain.Run(ctx, io, append([]string{"dlq"}, args...))
		return code, out.String(), errOut.String()
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{url("orders-dlq"), "--to", "orders-dlq"}, "the dead-letter destination being read"},
		{[]string{url("orders-dlq"), "--to", "pubsub://projects/" + pj + "/topics/orders-dlq"}, "the dead-letter destination being read"},
		{[]string{url("orders-dlq"), "--to", "projects/" + pj + "/topics/orders-dlq"}, "the dead-letter destination being read"},
		{[]string{url("reader"), "--to", "feed"}, "that is " + url("reader") + ", the dead-letter destination being read"},
		{[]string{"orders", "--config", file, "--to", "orders-dlq"}, "the dead-letter destination being read"},
		{[]string{"orders", "--config", file, "--native", "--to", "pubsub://projects/" + pj + "/topics/native-dlq"}, "that is " + url("dlq-orders") + ", the dead-letter destination being read"},
		{[]string{url("orders-dlq"), "--to", url("other-sub")}, "a replay publishes to a topic: want pubsub://projects/PROJECT/topics/TOPIC"},
		{[]string{url("orders-dlq"), "--to", "sqs://other"}, "a URL of scheme sqs, but " + url("orders-dlq") + " is read over gcp"},
	} {
		code, out, errOut := dlq(append(append([]string{"replay"}, c.args...), "--endpoint", srv.Addr, "--yes")...)
		if code != cmdutil.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("replay %v: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", c.args, code, cmdutil.ExitUsage, c.want, out, errOut)
		}
	}
	// Nothing was pulled by the refused replays: the message is still there.
	if code, out, errOut := dlq("stats", url("orders-dlq"), "--endpoint", srv.Addr); code != cmdutil.ExitOK || !strings.Contains(errOut, "1 counted, 1 read") {
		t.Fatalf("stats after the refused replays: exit %d\n%s%s", code, out, errOut)
	}
	// Another topic of the same id in another project, a subscription's own
	// id (not its topic), are other destinations. They exist, as the dry
	// run looks --to up.
	for _, topic := range []string{"projects/elsewhere/topics/orders-dlq", "projects/" + pj + "/topics/reader"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []string{"pubsub://projects/elsewhere/topics/orders-dlq", "reader"} {
		if code, out, errOut := dlq("replay", url("reader"), "--endpoint", srv.Addr, "--to", to, "--dry-run"); code != cmdutil.ExitOK {
			t.Errorf("replay --to %s: exit %d, want 0\n%s%s", to, code, out, errOut)
		}
	}
	// pubsub://projects/demo/topics/other is the topic other.
	code, out, errOut := dlq("replay", url("orders-dlq"), "--endpoint", srv.Addr, "--to", "pubsub://projects/"+pj+"/topics/other", "--yes")
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed m1 -> other") {
		t.Fatalf("replay --to pubsub://projects/"+pj+"/topics/other: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = dlq("peek", url("other-sub"), "--endpoint", srv.Addr, "--output", "json")
	if code != cmdutil.ExitOK || !strings.Contains(out, `"replayedFrom":"`+url("orders-dlq")+`"`) {
		t.Fatalf("peek the topic replayed to: exit %d\n%s%s", code, out, errOut)
	}
}
