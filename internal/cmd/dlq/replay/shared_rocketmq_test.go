package replay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQReplay_RocketMQSharedDeadLetterTopic_Refused: on the RocketMQ
// test broker, two consumer groups of one topic (billing and shipping)
// dead-letter into one topic; a replay of the shared dead-letter topic
// without --to or --fan-out is refused (exit 2) saying --fan-out (every
// consumer group of the topic would receive the copy), nothing is
// published to the topic, and the dead letter stays.
func TestDLQReplay_RocketMQSharedDeadLetterTopic_Refused(t *testing.T) {
	ctx := context.Background()
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	run := fmt.Sprintf("rs%d", time.Now().UnixNano()%1e9)
	topic, dlq := "orders-"+run, "shared-dlq-"+run
	sub := func(name string) string {
		return "  - name: " + name + "\n    transport: rocketmq\n    channelName: " + topic + "\n    rocketmq: {consumerGroup: g-" + name + "-" + run + "}\n    handler: {type: builtin, name: ack}\n    deadLetterRoutingKey: " + dlq + "\n"
	}
	file := dlqtest.WriteYAML(t, fmt.Sprintf("connections:\n  rocketmq:\n    endpoint: %s\nsubscriptions:\n", srv.Endpoint())+sub("billing")+sub("shipping"))
	p, err := rocketmq.NewProducer(ctx, rocketmq.ProducerOptions{Connection: rocketmq.Connection{Endpoint: srv.Endpoint(), ClientLogDir: t.TempDir()}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, dlqtest.Stamped("s1-"+run, topic, dlq)); err != nil {
		t.Fatal(err)
	}
	_ = p.Close(ctx)

	code, out, errOut := dlqtest.DLQRun(t, "replay", "billing", "-c", file, "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "--fan-out") {
		t.Fatalf("replay from a shared RocketMQ dead-letter topic: exit %d, want %d saying --fan-out\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	peek := func(t2 string) string {
		code, out, errOut := dlqtest.DLQRun(t, "peek", "rocketmq://"+t2+"?group=check-"+t2, "--rocketmq-endpoint", srv.Endpoint(), "-o", "json")
		if code != cmdutil.ExitOK {
			t.Fatalf("peek %s: exit %d\n%s", t2, code, errOut)
		}
		return out
	}
	if out := peek(topic); strings.Contains(out, "s1-"+run) {
		t.Errorf("the refused replay published to %s:\n%s", topic, out)
	}
	if out := peek(dlq); !strings.Contains(out, "s1-"+run) {
		t.Errorf("the dead letter left %s after the refusal:\n%s", dlq, out)
	}
}
