package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQReplay_SNSSharedDLQ_RefusedNotFannedOut: two SNS subscriptions of
// one topic share a dead-letter queue; a dead letter does not say which
// of them failed it, so `dlq replay billing` without --to or --fan-out is
// refused (exit 2) naming both subscriptions, --to and --fan-out, and
// nothing moves: neither subscriber's queue gets a copy, the dead letter
// stays; the refusal says how to reach one subscriber's queue. Read by its
// URL with --to the failed subscriber's queue, the copy goes there alone.
func TestDLQReplay_SNSSharedDLQ_RefusedNotFannedOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fo := dlqtest.NewSNSFanOut(t, "sh", "billing", "shipping")
	run, q, c, emu := fo.Run, fo.Q, fo.Clients, fo.Emulator
	file := fo.File(t, fo.Subscription("billing", q("dlq")), fo.Subscription("shipping", q("dlq")))
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	if err := p.Send(ctx, dlqtest.Stamped("m1-"+run, q("placed"), q("dlq"))); err != nil {
		t.Fatal(err)
	}
	peek := func(queue string) string { return fo.Peek(t, queue) }
	code, out, errOut := dlqtest.DLQRun(t, "replay", "billing", "-c", file, "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "shared by subscriptions") || !strings.Contains(errOut, q("billing")) ||
		!strings.Contains(errOut, q("shipping")) || !strings.Contains(errOut, "--fan-out") || !strings.Contains(errOut, "--to") {
		t.Fatalf("replay from a shared dead-letter queue: exit %d, want %d naming both subscriptions, --to and --fan-out\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	for _, n := range []string{"billing", "shipping"} {
		if got := peek(q(n)); got != "" {
			t.Errorf("after the refusal %s's queue holds:\n%s", n, got)
		}
	}
	if got := peek(q("dlq")); strings.Count(got, `"id":"m1-`+run+`"`) != 1 {
		t.Fatalf("after the refusal the dead-letter queue does not hold m1 once:\n%s", got)
	}
	if !strings.Contains(errOut, "dlq replay sqs://"+q("dlq")+" --to QUEUE") {
		t.Errorf("the refusal does not say how to reach one subscriber's queue:\n%s", errOut)
	}
	code, out, errOut = dlqtest.DLQRun(t, "replay", "sqs://"+q("dlq"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--yes", "--to", q("billing"))
	if code != cmdutil.ExitOK || !strings.Contains(out, "replayed m1-"+run+" -> "+q("billing")) {
		t.Fatalf("replay --to the failed subscriber's queue: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got := peek(q("shipping")); got != "" {
		t.Errorf("the other subscriber's queue got the replay:\n%s", got)
	}
	if got := peek(q("billing")); strings.Count(got, `"id":"m1-`+run+`"`) != 1 {
		t.Errorf("billing's queue does not hold the copy once:\n%s", got)
	}
}

// TestDLQReplay_PubSubSharedDeadLetterTopic_Refused: two Pub/Sub
// subscriptions of one topic share a dead-letter topic; a replay without
// --to or --fan-out is refused (exit 2) naming both, and nothing is pulled
// or published: the dead letter stays, neither subscription gets a copy.
func TestDLQReplay_PubSubSharedDeadLetterTopic_Refused(t *testing.T) {
	t.Parallel()
	file, addr, subName := dlqtest.PubSubShared(t)
	code, out, errOut := dlqtest.DLQRun(t, "replay", "billing", "-c", file, "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "shared by subscriptions") || !strings.Contains(errOut, subName("billing-sub")) ||
		!strings.Contains(errOut, subName("shipping-sub")) || !strings.Contains(errOut, "--fan-out") {
		t.Fatalf("replay from a shared dead-letter topic: exit %d, want %d naming both subscriptions\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	url := func(sub string) string { return "pubsub://" + subName(sub) }
	for _, sub := range []string{"billing-sub", "shipping-sub"} {
		if code, out, errOut := dlqtest.DLQRun(t, "peek", url(sub), "--endpoint", addr, "-o", "json"); code != cmdutil.ExitOK || out != "" {
			t.Errorf("after the refusal %s: exit %d, holds\n%s%s", sub, code, out, errOut)
		}
	}
	if code, out, errOut := dlqtest.DLQRun(t, "stats", url("shared-dlq"), "--endpoint", addr); code != cmdutil.ExitOK || !strings.Contains(errOut, "1 counted, 1 read") {
		t.Fatalf("stats after the refusal: exit %d\n%s%s", code, out, errOut)
	}
}
