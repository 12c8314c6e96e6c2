package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQReplay_SNSFanOut_FailedSubscriberOnly: an SNS topic with
// two subscribed queues; a replay without --to of the failed subscription's
// dead letter goes to that subscription's queue alone, never through the
// topic to the other subscriber.
func TestDLQReplay_SNSFanOut_FailedSubscriberOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fo := dlqtest.NewSNSFanOut(t, "fo", "orders", "audit")
	run, q, c := fo.Run, fo.Q, fo.Clients
	if subs, err := sqs.TopicSubscribers(ctx, c, q("placed"), false); err != nil || len(subs) != 2 {
		t.Fatalf("the topic's subscribers: %v, %v; want two queues", subs, err)
	}
	file := fo.File(t, fo.Subscription("orders", q("dlq")), fo.Subscription("audit", ""))
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	if err := p.Send(ctx, dlqtest.Stamped("m1-"+run, q("placed"), q("dlq"))); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := dlqtest.DLQRun(t, "replay", "orders", "-c", file, "--yes")
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed m1-"+run+" -> "+q("orders")) {
		t.Fatalf("replay: exit %d, want 0 and the copy sent to %s\nstdout:\n%s\nstderr:\n%s", code, q("orders"), out, errOut)
	}
	peek := func(queue string) string { return fo.Peek(t, queue) }
	// The failed subscriber's own queue has the replayed copy, once.
	if got := peek(q("orders")); strings.Count(got, `"id":"m1-`+run+`"`) != 1 || !strings.Contains(got, `"replayedFrom":"sqs://`+q("dlq")+`"`) {
		t.Errorf("the failed subscription's queue %s does not hold the replayed copy once:\n%s", q("orders"), got)
	}
	if got := peek(q("audit")); got != "" {
		t.Errorf("the other subscriber's queue %s got the replay:\n%s", q("audit"), got)
	}
	if got := peek(q("dlq")); got != "" {
		t.Errorf("the dead-letter queue still holds:\n%s", got)
	}
}

// TestDLQReplay_PubSubFanOut_RefusedWithoutFlag: a Pub/Sub topic
// with two subscriptions; a replay without --to of one subscription's dead
// letter is refused (exit 2, naming the other subscription, nothing pulled)
// and goes, to both, with --fan-out. restore into a dead-letter topic with
// a second subscription is refused the same way.
func TestDLQReplay_PubSubFanOut_RefusedWithoutFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, srv, subName := dlqtest.PubSubTopics(t, "fanout", []string{"placed", "orders-dlq"},
		map[string]string{"orders-sub": "placed", "audit-sub": "placed", "orders-dlq": "orders-dlq", "dlq-tap": "orders-dlq"})
	pj := srv.Project
	file := dlqtest.WriteYAML(t, fmt.Sprintf(`connections:
  gcp:
    projectId: %s
    emulatorHost: %s
subscriptions:
  - name: orders
    transport: gcp
    routingKey: placed
    channelName: orders-sub
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: ack}
`, pj, srv.Addr))
	if err := gcp.NewProducer(client, gcp.ProducerOptions{}).Send(ctx, dlqtest.Stamped("m1", "placed", "orders-dlq")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := dlqtest.DLQRun(t, "replay", "orders", "-c", file, "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "topic placed fans out: the copy would also reach subscription "+subName("audit-sub")) ||
		strings.Contains(errOut, subName("orders-sub")) || !strings.Contains(errOut, "--fan-out") {
		t.Fatalf("replay without --fan-out: exit %d, want %d naming %s only\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, subName("audit-sub"), out, errOut)
	}
	// restore into orders-dlq, whose topic dlq-tap also reads
	archive := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(archive, []byte(`{"id":"r1","topic":"placed","body":"{}"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = dlqtest.DLQRun(t, "restore", archive, "-s", "orders", "-c", file)
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "the copy would also reach subscription "+subName("dlq-tap")) {
		t.Fatalf("restore without --fan-out: exit %d, want %d naming dlq-tap\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	// Nothing was pulled: the dead letter is still there, once.
	url := func(sub string) string { return "pubsub://projects/" + pj + "/subscriptions/" + sub }
	if code, out, errOut := dlqtest.DLQRun(t, "stats", url("orders-dlq"), "--endpoint", srv.Addr); code != cmdutil.ExitOK || !strings.Contains(errOut, "1 counted, 1 read") {
		t.Fatalf("stats after the refusals: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = dlqtest.DLQRun(t, "replay", "orders", "-c", file, "--yes", "--fan-out")
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed m1 -> placed") {
		t.Fatalf("replay --fan-out: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, sub := range []string{"orders-sub", "audit-sub"} {
		code, out, errOut := dlqtest.DLQRun(t, "peek", url(sub), "--endpoint", srv.Addr, "-o", "json")
		if code != cmdutil.ExitOK || !strings.Contains(out, `"id":"m1"`) {
			t.Errorf("peek %s after --fan-out: exit %d, want the copy\n%s%s", sub, code, out, errOut)
		}
	}
}
