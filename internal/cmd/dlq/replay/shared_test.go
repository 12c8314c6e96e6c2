package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
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
	emu := cmdtest.SharedSQS(t)
	run := fmt.Sprintf("sh%d", time.Now().UnixNano()%1e9)
	q := func(n string) string { return n + "-" + run }
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	for _, n := range []string{"billing", "shipping"} {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q(n), Topic: q("placed")}).EnsureChannels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: q("dlq")}).EnsureChannels(ctx); err != nil {
		t.Fatal(err)
	}
	sub := func(name string) string {
		return "  - name: " + name + "\n    transport: sqs\n    routingKey: " + q("placed") + "\n    channelName: " + q(name) +
			"\n    sqs: {channelType: pubSub}\n    handler: {type: builtin, name: ack}\n    deadLetterRoutingKey: " + q("dlq") + "\n"
	}
	file := writeYAML(t, fmt.Sprintf("connections:\n  aws:\n    region: %s\n    endpoint: %s\nsubscriptions:\n", sqstest.Region, emu.Endpoint)+
		sub("billing")+sub("shipping"))
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	if err := p.Send(ctx, stamped("m1-"+run, q("placed"), q("dlq"))); err != nil {
		t.Fatal(err)
	}
	peek := func(queue string) string {
		code, out, errOut := dlqRun(t, "peek", "sqs://"+queue, "--endpoint", emu.Endpoint, "--region", sqstest.Region, "-o", "json")
		if code != cmdutil.ExitOK {
			t.Fatalf("peek %s: exit %d\n%s%s", queue, code, out, errOut)
		}
		return out
	}
	code, out, errOut := dlqRun(t, "replay", "billing", "-c", file, "--yes")
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
	code, out, errOut = dlqRun(t, "replay", "sqs://"+q("dlq"), "--endpoint", emu.Endpoint, "--region", sqstest.Region, "--yes", "--to", q("billing"))
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

// pubsubShared starts a Pub/Sub emulator with topic placed read by
// billing-sub and shipping-sub, both dead-lettering into shared-dlq (read
// by the subscription shared-dlq), one dead letter m1 there, and a
// subscriptions file naming billing and shipping; it returns the file, the
// emulator's address and the full name of a subscription.
func pubsubShared(t *testing.T) (file, addr string, subName func(string) string) {
	t.Helper()
	ctx := context.Background()
	client, srv := gcptest.Start(t, "shared", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + n }
	subName = func(n string) string { return "projects/" + pj + "/subscriptions/" + n }
	for _, n := range []string{"placed", "shared-dlq"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
	}
	for sub, tp := range map[string]string{"billing-sub": "placed", "shipping-sub": "placed", "shared-dlq": "shared-dlq"} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: subName(sub), Topic: topic(tp), AckDeadlineSeconds: 60}); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(name string) string {
		return "  - name: " + name + "\n    transport: gcp\n    routingKey: placed\n    channelName: " + name + "-sub\n    deadLetterRoutingKey: shared-dlq\n    handler: {type: builtin, name: ack}\n"
	}
	file = writeYAML(t, fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, srv.Addr)+sub("billing")+sub("shipping"))
	if err := gcp.NewProducer(client, gcp.ProducerOptions{}).Send(ctx, stamped("m1", "placed", "shared-dlq")); err != nil {
		t.Fatal(err)
	}
	return file, srv.Addr, subName
}

// TestDLQReplay_PubSubSharedDeadLetterTopic_Refused: two Pub/Sub
// subscriptions of one topic share a dead-letter topic; a replay without
// --to or --fan-out is refused (exit 2) naming both, and nothing is pulled
// or published: the dead letter stays, neither subscription gets a copy.
func TestDLQReplay_PubSubSharedDeadLetterTopic_Refused(t *testing.T) {
	t.Parallel()
	file, addr, subName := pubsubShared(t)
	code, out, errOut := dlqRun(t, "replay", "billing", "-c", file, "--yes")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "shared by subscriptions") || !strings.Contains(errOut, subName("billing-sub")) ||
		!strings.Contains(errOut, subName("shipping-sub")) || !strings.Contains(errOut, "--fan-out") {
		t.Fatalf("replay from a shared dead-letter topic: exit %d, want %d naming both subscriptions\nstdout:\n%s\nstderr:\n%s", code, cmdutil.ExitUsage, out, errOut)
	}
	url := func(sub string) string { return "pubsub://" + subName(sub) }
	for _, sub := range []string{"billing-sub", "shipping-sub"} {
		if code, out, errOut := dlqRun(t, "peek", url(sub), "--endpoint", addr, "-o", "json"); code != cmdutil.ExitOK || out != "" {
			t.Errorf("after the refusal %s: exit %d, holds\n%s%s", sub, code, out, errOut)
		}
	}
	if code, out, errOut := dlqRun(t, "stats", url("shared-dlq"), "--endpoint", addr); code != cmdutil.ExitOK || !strings.Contains(errOut, "1 counted, 1 read") {
		t.Fatalf("stats after the refusal: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDLQTriage_SharedDeadLetterTopic_OpensToLook: dlq triage on a
// dead-letter topic the fan-out guard refuses to replay from opens (its
// actions are made), loads the dead letters, marks their destination
// refused, and refuses only the replay, saying --to or --fan-out; the
// dead letter stays and can be archived. Each action writes an audit
// record (--log-file's): the user, the action, the ids, the destination
// and the outcome.
func TestDLQTriage_SharedDeadLetterTopic_OpensToLook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, _, _ := pubsubShared(t)
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}, Getenv: os.LookupEnv}
	o := &dlqTriageOptions{archiveFile: filepath.Join(t.TempDir(), "a.jsonl"), dlqReplayOptions: &dlqReplayOptions{dlqOptions: &dlqOptions{
		io: io, global: &factory.Factory{IOStreams: io, LogFormat: "text", LogLevel: "warn"}, transports: transport.Default(), now: time.Now,
		configPath: file, visibility: time.Minute, wait: 2 * time.Second}}}
	logger, err := o.global.Logger()
	if err != nil {
		t.Fatal(err)
	}
	a, err := o.actions(ctx, "billing", logger)
	if err != nil {
		t.Fatalf("triage on a shared dead-letter topic did not open: %v", err)
	}
	var audit strings.Builder
	a.audit = o.auditLogger(&audit)
	ms, err := a.Load(ctx)
	if err != nil || len(ms) != 1 || ms[0].Header.MessageID != "m1" {
		t.Fatalf("load: %d messages, %v; want m1", len(ms), err)
	}
	if d := a.ReplayDestinations(ms); len(d) != 1 || !strings.Contains(d[0], "refused") {
		t.Errorf("the confirmation's destinations %v do not mark the replay refused", d)
	}
	if _, err := a.Replay(ctx, []string{"m1"}, false, func(triage.Outcome) {}); err == nil || !strings.Contains(err.Error(), "--fan-out") {
		t.Fatalf("replay from the console: %v, want refused naming --fan-out", err)
	}
	if ms, err := a.Load(ctx); err != nil || len(ms) != 1 {
		t.Fatalf("after the refused replay the dead-letter topic holds %d, %v; want m1 still", len(ms), err)
	}
	if res, err := a.Archive(ctx, []string{"m1"}, false, func(triage.Outcome) {}); err != nil || res.Done != 1 {
		t.Fatalf("archive from the console: %+v, %v; want m1 archived", res, err)
	}
	lines := strings.Split(strings.TrimSpace(audit.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit records:\n%s\nwant one per action (2)", audit.String())
	}
	for i, want := range []string{"action=replay ids=m1 destination=originalTopic", "action=archive ids=m1 destination=" + o.archiveFile} {
		if !strings.Contains(lines[i], `msg="`+LogAudit+`"`) || !strings.Contains(lines[i], "user=") || !strings.Contains(lines[i], want) {
			t.Errorf("audit record %d %q lacks %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], "error=") || !strings.Contains(lines[1], "done=1 failed=0") {
		t.Errorf("the audit records do not carry the outcomes:\n%s", audit.String())
	}
}
