package replay_test

import (
	"context"
	"errors"
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
	dlqcmd "github.com/brightergo/brighter/internal/cmd/dlq"
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
			code := run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "1"})
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
		code := run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "0", "--allow-any-destination"})
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
		code := run(ctx, io, append([]string{"dlq"}, args...))
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
	// id (not its topic), are other destinations.
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

// TestDLQEdit_DefaultEditorNeedsATerminal: off a terminal with no
// $EDITOR, an edit that would open vi is refused at once (exit 2, saying
// what to give instead) and nothing is read; --body-file needs no editor.
func TestDLQEdit_DefaultEditorNeedsATerminal(t *testing.T) {
	t.Parallel()
	path := cmdtest.WriteMemoryDLQ(t, 1)
	for _, args := range [][]string{{}, {"--body-file", "-", "--headers"}} {
		io, out, errOut := cmdtest.FakeIO(`{"fixed":true}`, false)
		code := run(context.Background(), io, append([]string{"dlq", "edit", "p0", "memory://orders-dlq?file=" + path, "--to", "orders"}, args...))
		if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "stdin is not a terminal: give the new body with --body-file") {
			t.Errorf("edit %v off a terminal without $EDITOR: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, cmdutil.ExitUsage, out, errOut)
		}
	}
	io, out, errOut := cmdtest.FakeIO(`{"fixed":true}`, false)
	if code := run(context.Background(), io, []string{"dlq", "edit", "p0", "memory://orders-dlq?file=" + path, "--to", "orders", "--body-file", "-"}); code != cmdutil.ExitOK {
		t.Errorf("edit --body-file - off a terminal: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitOK, out, errOut)
	}
}

// TestDLQEdit_InvalidJSONOnATerminalReopens: on a terminal an
// edited body that is not valid JSON is refused with its reason and the
// editor opened again on "y" (the second edit is replayed); "n" abandons
// the edit with exit 2 and the message stays in the DLQ (fauxqs).
func TestDLQEdit_InvalidJSONOnATerminalReopens(t *testing.T) {
	dlq, dest, conn := dlqcmd.CrashQueue(t, 2)
	dir := t.TempDir()
	script := filepath.Join(dir, "editor.sh")
	// The first run writes broken JSON, every later one a valid body.
	body := "#!/bin/sh\nif [ -e " + dir + "/ran ]; then printf '{\"ok\":true}' > \"$1\"; else touch " + dir + "/ran; printf '{\"ok\":' > \"$1\"; fi\necho run >> " + dir + "/runs\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EDITOR", script)
	edit := func(id, answer string) (string, error) {
		var out, errOut strings.Builder
		root := newRootCmd(&IOStreams{In: strings.NewReader(answer), Out: &out, ErrOut: &errOut, InTTY: true, Getenv: os.LookupEnv})
		root.SetArgs(append([]string{"dlq", "edit", id, "sqs://" + dlq, "--to", dest}, conn...))
		err := root.ExecuteContext(context.Background())
		return out.String() + errOut.String(), err
	}

	out, err := edit("c0", "y\n")
	if err != nil {
		t.Fatalf("edit with a second try: %v\n%s", err, out)
	}
	if !strings.Contains(out, "the body is not valid JSON") || !strings.Contains(out, "Edit again? [Y/n]") || !strings.Contains(out, "replayed c0 -> "+dest) {
		t.Errorf("output:\n%s", out)
	}
	if runs, _ := os.ReadFile(filepath.Join(dir, "runs")); strings.Count(string(runs), "run") != 2 {
		t.Errorf("the editor ran %d times, want 2", strings.Count(string(runs), "run"))
	}
	_ = os.Remove(filepath.Join(dir, "ran"))
	out, err = edit("c1", "n\n")
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != cmdutil.ExitUsage || !strings.Contains(out, "nothing was sent") && !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("edit abandoned: %v, want exit %d saying nothing was sent\n%s", err, cmdutil.ExitUsage, out)
	}
	left := dlqcmd.CrashPeekIDs(t, dlq, conn, 0, nil)
	if left["c1"] != 1 || left["c0"] != 0 {
		t.Errorf("the DLQ holds %v, want c1 only", left)
	}
}
