package root

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
)

func dlqOpts(env map[string]string) *dlqOptions {
	io := &IOStreams{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	return &dlqOptions{io: io, transports: defaultTransports()}
}

// TestDLQResolveURL_PubSubAndRocketMQ checks the two URL forms of issue 7's
// addressing: connection settings from flags and environment, a raw or
// escaped %DLQ% topic, the reader group from ?group=, --group or the default.
func TestDLQResolveURL_PubSubAndRocketMQ(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "proxy:8081", "ROCKETMQ_NAMESPACE": "ns"})
	tg, err := o.resolve("pubsub://projects/acme/subscriptions/orders-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if tg.S.Transport != config.TransportGCP || tg.Dest != "orders-dlq" || tg.F.Connections.GCP.ProjectID != "acme" || tg.URL != "pubsub://projects/acme/subscriptions/orders-dlq" {
		t.Errorf("pubsub target %+v (url %s)", tg.S, tg.URL)
	}
	for _, raw := range []string{"rocketmq://%DLQ%orders?group=ops", "rocketmq://%25DLQ%25orders?group=ops"} {
		tg, err := o.resolve(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if tg.Dest != "%DLQ%orders" || tg.Group != "ops" || tg.F.Connections.RocketMQ.Endpoint != "proxy:8081" || tg.F.Connections.RocketMQ.Namespace != "ns" {
			t.Errorf("%s: dest %q group %q connection %+v", raw, tg.Dest, tg.Group, tg.F.Connections.RocketMQ)
		}
	}
	tg, err = o.resolve("rocketmq://orders-dlq")
	if err != nil || tg.Group != defaultURLReaderGroup {
		t.Errorf("default reader group: %+v %v", tg, err)
	}
	o.group, o.rocketmqEndpoint = "mine", "flag:9876"
	tg, err = o.resolve("rocketmq://orders-dlq?group=ops")
	if err != nil || tg.Group != "mine" || tg.F.Connections.RocketMQ.Endpoint != "flag:9876" {
		t.Errorf("--group and --rocketmq-endpoint win: %+v %v", tg, err)
	}
}

// TestDLQResolveURL_Errors checks that a malformed URL is a usage error that
// says what to write.
func TestDLQResolveURL_Errors(t *testing.T) {
	cases := map[string]string{
		"pubsub://orders-dlq":          "want pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION",
		"rocketmq://?group=g":          "names no topic",
		"kafka://orders":               "valid schemes are sqs, pubsub, rocketmq, memory",
		"pubsub://projects/p/topics/t": "want pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION",
	}
	for arg, want := range cases {
		_, err := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"}).resolve(arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
	if _, err := dlqOpts(nil).resolve("rocketmq://orders-dlq"); err == nil || !strings.Contains(err.Error(), "ROCKETMQ_ENDPOINT") {
		t.Errorf("no endpoint: error %v, want one naming ROCKETMQ_ENDPOINT", err)
	}
}

// writeMemoryDLQ writes a memory.output file with n routed copies in queue
// orders-dlq and returns its path.
func writeMemoryDLQ(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"p%d","topic":"orders-dlq","messageType":"MT_COMMAND","handledCount":3,"bag":{"originalTopic":"orders","originalMessageType":"MT_COMMAND","rejectionReason":"DeliveryError","rejectionMessage":"budget exhausted","rejectionTimestamp":"2026-01-01T00:00:00Z"},"body":"{}"}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDLQReplay_DeclinedConfirmationExits2 answers the confirmation prompt
// of a replay above --confirm-over on a terminal: "n", an empty line or the
// end of input is a refused replay (exit 2, as without --yes off a
// terminal), not a failure (exit 1), and nothing moves; "y" replays.
func TestDLQReplay_DeclinedConfirmationExits2(t *testing.T) {
	t.Parallel() // in process, on memory DLQ files of its own; each case waits out a receive (issue 33)
	for name, answer := range map[string]string{"n": "n\n", "no": "no\n", "empty line": "\n", "end of input": ""} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := writeMemoryDLQ(t, 2)
			io, out, errOut := cmdtest.FakeIO(answer, false)
			io.InTTY = true
			code := run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "1"})
			if code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
			}
			if !strings.Contains(errOut.String(), "Replay 2 messages from memory://orders-dlq? [y/N] ") || !strings.Contains(errOut.String(), "brighter: replay cancelled") {
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
		path := writeMemoryDLQ(t, 1)
		io, out, errOut := cmdtest.FakeIO("y\n", false)
		io.InTTY = true
		// No subscriptions file names orders: the replay trusts the
		// messages' originalTopic explicitly (issue 29's allow-list).
		code := run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--confirm-over", "0", "--allow-any-destination"})
		if code != cmdutil.ExitOK || !strings.Contains(out.String(), "replayed 1, skipped 0, failed 0") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if !strings.Contains(errOut.String(), "Replay 1 message from memory://orders-dlq? [y/N] ") {
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
	t.Parallel() // waits on the shared Pub/Sub emulator, in a project of its own (issue 33)
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

// TestDLQToName checks how --to is read for each transport: a name as it
// is, a URL of the source's transport as the name it carries.
func TestDLQToName(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"})
	target := func(arg string) *dlqTarget {
		tg, err := o.resolve(arg)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	sqsT, pubsubT := target("sqs://orders-dlq"), target("pubsub://projects/demo/subscriptions/orders-dlq")
	rmqT, memT := target("rocketmq://%DLQ%orders?group=g"), target("memory://orders-dlq?file=out.jsonl")
	for _, c := range []struct {
		t        *dlqTarget
		to, want string
	}{
		{sqsT, "orders", "orders"},
		{sqsT, "sqs://orders", "orders"},
		{pubsubT, "pubsub://projects/demo/topics/orders", "orders"},
		{pubsubT, "pubsub://projects/other/topics/orders", "projects/other/topics/orders"},
		{pubsubT, "projects/other/topics/orders", "projects/other/topics/orders"},
		{rmqT, "rocketmq://orders", "orders"},
		{rmqT, "rocketmq://%25DLQ%25other", "%DLQ%other"},
		{rmqT, "rocketmq://%DLQ%other", "%DLQ%other"},
		{memT, "memory://orders", "orders"},
		{memT, "memory://orders?file=./out.jsonl", "orders"},
	} {
		got, err := toName(c.t, o.transports[c.t.S.Transport], c.to)
		if err != nil || got != c.want {
			t.Errorf("--to %s from %s: %q, %v; want %q", c.to, c.t.URL, got, err, c.want)
		}
	}
}

// TestDLQReplay_InterruptAtConfirmationExits130: SIGINT while the
// replay waits at its confirmation prompt (a terminal that never answers)
// ends the wait at once with exit 130, "interrupted" and nothing moved, as
// every interrupted dlq command does; declining stays exit 2.
func TestDLQReplay_InterruptAtConfirmationExits130(t *testing.T) {
	t.Parallel()
	path := writeMemoryDLQ(t, 2)
	never, w := io.Pipe() // the operator never answers
	defer w.Close()
	var out, errOut cmdtest.LockedBuffer
	streams := &IOStreams{In: never, Out: &out, ErrOut: &errOut, InTTY: true, Getenv: os.LookupEnv}
	sigs := make(chan os.Signal, 2)
	exited := -1
	o := &dlqOptions{io: streams, global: &factory.Factory{IOStreams: streams}, transports: defaultTransports(), now: time.Now,
		signals: func() (<-chan os.Signal, func()) { return sigs, func() {} },
		exit:    func(code int) { exited = code }}
	cmd := newDLQCmdWith(o)
	cmd.SetArgs([]string{"replay", "memory://orders-dlq?file=" + path, "--confirm-over", "1"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "[y/N] ") {
		if time.Now().After(deadline) {
			t.Fatalf("no confirmation prompt within 30s:\n%s", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	sigs <- syscall.SIGINT
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the replay still waits for an answer 30s after SIGINT:\n%s", errOut.String())
	}
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != exitInterrupted {
		t.Fatalf("error %v, want exit code %d\nstderr:\n%s", err, exitInterrupted, errOut.String())
	}
	if exited != -1 {
		t.Errorf("one signal forced exit %d; it must stop cleanly", exited)
	}
	if !strings.Contains(errOut.String(), "interrupted at the confirmation; nothing was replayed") {
		t.Errorf("stderr does not say the replay was interrupted at the prompt:\n%s", errOut.String())
	}
	after, _ := os.ReadFile(path)
	for _, id := range []string{"p0", "p1"} {
		if !strings.Contains(string(after), `"id":"`+id+`","topic":"orders-dlq"`) {
			t.Errorf("an interrupted replay moved %s:\n%s", id, after)
		}
	}
}
