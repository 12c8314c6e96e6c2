package shared

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

func dlqOpts(env map[string]string) *Options {
	io := &iostreams.IOStreams{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	return &Options{io: io, transports: transport.Default()}
}

// TestDLQResolveURL_PubSubAndRocketMQ checks the two URL forms of the dlq
// addressing (docs/commands/dlq.md): connection settings from flags and environment, a raw or
// escaped %DLQ% topic, the reader group from ?group=, --group or the default.
func TestDLQResolveURL_PubSubAndRocketMQ(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "proxy:8081", "ROCKETMQ_NAMESPACE": "ns"})
	tg, err := o.Resolve("pubsub://projects/acme/subscriptions/orders-dlq")
	if err != nil {
		t.Fatal(err)
	}
	if tg.S.Transport != config.TransportGCP || tg.Dest != "orders-dlq" || tg.F.Connections.GCP.ProjectID != "acme" || tg.URL != "pubsub://projects/acme/subscriptions/orders-dlq" {
		t.Errorf("pubsub target %+v (url %s)", tg.S, tg.URL)
	}
	for _, raw := range []string{"rocketmq://%DLQ%orders?group=ops", "rocketmq://%25DLQ%25orders?group=ops"} {
		tg, err := o.Resolve(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if tg.Dest != "%DLQ%orders" || tg.Group != "ops" || tg.F.Connections.RocketMQ.Endpoint != "proxy:8081" || tg.F.Connections.RocketMQ.Namespace != "ns" {
			t.Errorf("%s: dest %q group %q connection %+v", raw, tg.Dest, tg.Group, tg.F.Connections.RocketMQ)
		}
	}
	tg, err = o.Resolve("rocketmq://orders-dlq")
	if err != nil || tg.Group != defaultURLReaderGroup {
		t.Errorf("default reader group: %+v %v", tg, err)
	}
	o.Group, o.RocketMQEndpoint = "mine", "flag:9876"
	tg, err = o.Resolve("rocketmq://orders-dlq?group=ops")
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
		_, err := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"}).Resolve(arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
	if _, err := dlqOpts(nil).Resolve("rocketmq://orders-dlq"); err == nil || !strings.Contains(err.Error(), "ROCKETMQ_ENDPOINT") {
		t.Errorf("no endpoint: error %v, want one naming ROCKETMQ_ENDPOINT", err)
	}
}

// TestDLQToName checks how --to is read for each transport: a name as it
// is, a URL of the source's transport as the name it carries.
func TestDLQToName(t *testing.T) {
	o := dlqOpts(map[string]string{"ROCKETMQ_ENDPOINT": "x:1"})
	target := func(arg string) *dlqTarget {
		tg, err := o.Resolve(arg)
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
		got, err := ToName(c.t, o.Transports[c.t.S.Transport], c.To)
		if err != nil || got != c.want {
			t.Errorf("--to %s from %s: %q, %v; want %q", c.To, c.t.URL, got, err, c.want)
		}
	}
}

// TestDLQReplay_InterruptAtConfirmationExits130: SIGINT while the
// replay waits at its confirmation prompt (a terminal that never answers)
// ends the wait at once with exit 130, "interrupted" and nothing moved, as
// every interrupted dlq command does; declining stays exit 2.
func TestDLQReplay_InterruptAtConfirmationExits130(t *testing.T) {
	t.Parallel()
	path := cmdtest.WriteMemoryDLQ(t, 2)
	never, w := io.Pipe() // the operator never answers
	defer w.Close()
	var out, errOut cmdtest.LockedBuffer
	streams := &iostreams.IOStreams{In: never, Out: &out, ErrOut: &errOut, InTTY: true, Getenv: os.LookupEnv}
	sigs := make(chan os.Signal, 2)
	exited := -1
	o := &Options{io: streams, global: &factory.Factory{IOStreams: streams}, transports: transport.Default(), now: time.Now,
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
	if !errors.As(err, &ee) || ee.Code != ExitInterrupted {
		t.Fatalf("error %v, want exit code %d\nstderr:\n%s", err, ExitInterrupted, errOut.String())
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
