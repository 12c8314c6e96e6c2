package live_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/rules"
)

func parse(t *testing.T, yaml string) *config.File {
	t.Helper()
	f, err := config.Parse("brighter.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func find(fs []lint.Finding, sub, rule string) *lint.Finding {
	for i := range fs {
		if fs[i].Subscription == sub && fs[i].RuleID == rule {
			return &fs[i]
		}
	}
	return nil
}

func dump(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s: %s %s: %s", f.Pos, f.Severity, f.RuleID, f.Message)
	}
	return b.String()
}

// TestMain stops the Google Pub/Sub emulator the GCP test starts.
func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }

// TestGCPDrift_R10 seeds a drift in the Pub/Sub emulator: the file says
// maxDeliveryAttempts 10, the broker has 5; requeueCount 6 passes the file's
// R-10 check but not the broker's.
func TestGCPDrift_R10(t *testing.T) {
	ctx := context.Background()
	client, srv := gcptest.Start(t, "demo", nil, gcp.Connect)
	pj := srv.Project
	for _, topic := range []string{"payments", "payments-native", "refunds", "audit"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + pj + "/topics/" + topic}); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(name, topic string, dlp *pubsubpb.DeadLetterPolicy) {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name: "projects/" + pj + "/subscriptions/" + name, Topic: "projects/" + pj + "/topics/" + topic, AckDeadlineSeconds: 30, DeadLetterPolicy: dlp,
		}); err != nil {
			t.Fatal(err)
		}
	}
	mk("payments-sub", "payments", &pubsubpb.DeadLetterPolicy{DeadLetterTopic: "projects/" + pj + "/topics/payments-native", MaxDeliveryAttempts: 5})
	mk("refunds-sub", "refunds", nil)
	mk("audit-sub", "audit", &pubsubpb.DeadLetterPolicy{DeadLetterTopic: "projects/" + pj + "/topics/payments-native", MaxDeliveryAttempts: 10})

	f := parse(t, `connections:
  gcp:
    projectId: `+pj+`
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    requeueCount: 6
    deadLetterRoutingKey: payments-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: payments-native
        maxDeliveryAttempts: 10
  - name: refunds
    transport: gcp
    channelName: refunds-sub
    requeueCount: 3
    deadLetterRoutingKey: refunds-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: refunds-native
        maxDeliveryAttempts: 10
  - name: audit
    transport: gcp
    channelName: audit-sub
    requeueCount: 3
    deadLetterRoutingKey: audit-dlq
    handler: {type: builtin, name: defer}
    gcp:
      deadLetterPolicy:
        topic: audit-native
        maxDeliveryAttempts: 10
  - name: missing
    transport: gcp
    channelName: missing-sub
    handler: {type: builtin, name: ack}
`)
	probers := map[config.Transport]live.Prober{config.TransportGCP: live.GCP{
		Client: func(context.Context, *config.File, string) (*pubsub.Client, error) { return client, nil },
	}}
	fs := live.Check(ctx, f, probers, rules.Default())

	if d := find(fs, "payments", lint.RuleNativeLimitDrift); d == nil || !strings.Contains(d.Message, "maxDeliveryAttempts 10 but the broker has 5") || d.Pos.Line != 14 {
		t.Errorf("payments drift finding = %+v%s", d, dump(fs))
	}
	if o := find(fs, "payments", lint.RuleBudgetOutranked); o == nil || !strings.Contains(o.Message, "requeueCount 6 >= gcp.deadLetterPolicy.maxDeliveryAttempts 5 on the broker") {
		t.Errorf("payments R-10 on the broker = %+v%s", o, dump(fs))
	}
	if d := find(fs, "refunds", lint.RuleNativeLimitDrift); d == nil || !strings.Contains(d.Message, "broker has no native limit") {
		t.Errorf("refunds drift = %+v%s", d, dump(fs))
	}
	if find(fs, "refunds", lint.RuleBudgetOutranked) != nil {
		t.Errorf("refunds has no native limit on the broker; R-10 reported%s", dump(fs))
	}
	// Without the policy on the broker, Pub/Sub fills no
	// delivery_attempt, so refunds' budget can never be reached.
	if c := find(fs, "refunds", lint.RuleBudgetCannotRunDown); c == nil || !strings.Contains(c.Message, "refunds-sub has no dead-letter policy") {
		t.Errorf("refunds budget counter = %+v%s", c, dump(fs))
	}
	for _, rule := range []string{lint.RuleNativeLimitDrift, lint.RuleBudgetOutranked, lint.RuleLiveCheckFailed} {
		if find(fs, "audit", rule) != nil {
			t.Errorf("audit agrees with the broker; %s reported%s", rule, dump(fs))
		}
	}
	// The emulator's NOT_FOUND is an answer: the check was made, nothing
	// to report (CheckChannels reports the missing channel).
	if m := find(fs, "missing", lint.RuleLiveCheckFailed); m != nil {
		t.Errorf("a subscription the broker says does not exist is live-check-failed: %+v%s", m, dump(fs))
	}
	if _, _, err := probers[config.TransportGCP].NativeLimit(ctx, f, f.Subscriptions[3]); !errors.Is(err, live.ErrChannelNotFound) || !strings.Contains(err.Error(), "missing-sub does not exist") {
		t.Errorf("NativeLimit of a missing subscription = %v, want ErrChannelNotFound naming it", err)
	}
	if len(fs) != 4 {
		t.Errorf("findings = %d, want 4%s", len(fs), dump(fs))
	}
}

// sqsEmulator starts fauxqs for one test and returns a context bounding
// it, the clients, and mk, which creates a queue with attributes.
func sqsEmulator(t *testing.T) (context.Context, *sqs.Clients, func(name string, attrs map[string]string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	emu, err := sqstest.Start(ctx)
	if err != nil {
		t.Fatalf("start the SQS emulator: %v", err)
	}
	t.Cleanup(emu.Stop)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	return ctx, c, func(name string, attrs map[string]string) {
		if _, err := c.SQS.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQSDrift_R10 seeds a drift on the SQS emulator (fauxqs): the file says
// maxReceiveCount 5, the queue has 3.
func TestSQSDrift_R10(t *testing.T) {
	ctx, c, mk := sqsEmulator(t)
	run := fmt.Sprintf("live%d", time.Now().UnixNano()%1e9)
	mk(run+"-redrive", nil)
	arn := "arn:aws:sqs:us-east-1:000000000000:" + run + "-redrive"
	mk(run+"-orders", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":"3"}`})
	mk(run+"-refunds", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn + `","maxReceiveCount":5}`})

	// The file names the endpoint its findings name; the probe's client
	// reaches the emulator whatever the file says.
	f := parse(t, fmt.Sprintf(`connections:
  aws:
    region: us-east-1
    endpoint: http://user:secret@127.0.0.1:4566/
subscriptions:
  - name: orders
    transport: sqs
    channelName: %[1]s-orders
    requeueCount: 4
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: defer}
    sqs:
      redrivePolicy:
        deadLetterQueue: %[1]s-redrive
        maxReceiveCount: 5
  - name: refunds
    transport: sqs
    channelName: %[1]s-refunds
    requeueCount: 3
    deadLetterRoutingKey: refunds-dlq
    handler: {type: builtin, name: defer}
    sqs:
      redrivePolicy:
        deadLetterQueue: %[1]s-redrive
        maxReceiveCount: 5
  - name: gone
    transport: sqs
    channelName: %[1]s-gone
    handler: {type: builtin, name: ack}
`, run))
	probers := map[config.Transport]live.Prober{config.TransportSQS: live.SQS{
		Client: func(context.Context, *config.File) (live.SQSAPI, error) { return c.SQS, nil },
	}}
	fs := live.Check(ctx, f, probers, rules.Default())
	if d := find(fs, "orders", lint.RuleNativeLimitDrift); d == nil || !strings.Contains(d.Message, "maxReceiveCount 5 but the broker has 3") {
		t.Errorf("orders drift = %+v%s", d, dump(fs))
	}
	if o := find(fs, "orders", lint.RuleBudgetOutranked); o == nil || !strings.Contains(o.Message, "requeueCount 4 >= sqs.redrivePolicy.maxReceiveCount 3 on the broker") {
		t.Errorf("orders R-10 on the broker = %+v%s", o, dump(fs))
	}
	if find(fs, "refunds", lint.RuleNativeLimitDrift) != nil || find(fs, "refunds", lint.RuleBudgetOutranked) != nil {
		t.Errorf("refunds agrees with the broker (maxReceiveCount as a JSON number)%s", dump(fs))
	}
	// QueueDoesNotExist is an answer: the check was made, nothing to
	// report (CheckChannels reports the missing queue).
	if g := find(fs, "gone", lint.RuleLiveCheckFailed); g != nil {
		t.Errorf("a queue the broker says does not exist is live-check-failed: %+v%s", g, dump(fs))
	}
	_, _, err := probers[config.TransportSQS].NativeLimit(ctx, f, f.Subscriptions[2])
	if !errors.Is(err, live.ErrChannelNotFound) {
		t.Errorf("NativeLimit of a missing queue = %v, want ErrChannelNotFound", err)
	} else if want := "on SQS at http://REDACTED@127.0.0.1:4566/ (connections.aws.endpoint in the subscriptions file): "; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
		t.Errorf("the missing queue's error %q does not name the endpoint it asked (%q), its credentials redacted", err, want)
	}
	if len(fs) != 2 {
		t.Errorf("findings = %d, want 2%s", len(fs), dump(fs))
	}
}

// CheckChannels looks up the channels of validate and assume subscriptions
// only (create makes what is missing), reports a missing channel as an
// Error naming the subscription, and any other failure as
// live-check-failed.
func TestCheckChannelsSkipsCreateAndClassifies(t *testing.T) {
	f := parse(t, `subscriptions:
  - name: made
    transport: sqs
    makeChannels: create
    handler: {type: builtin, name: ack}
  - name: checked
    transport: sqs
    makeChannels: validate
    handler: {type: builtin, name: ack}
  - name: assumed
    transport: sqs
    makeChannels: assume
    handler: {type: builtin, name: ack}
`)
	asked := map[string]bool{}
	v := live.ValidateFunc(func(_ context.Context, _ *config.File, s *config.Subscription) error {
		asked[s.Name] = true
		if s.Name == "checked" {
			return fmt.Errorf("queue checked-dlq: %w", live.ErrMissingChannel)
		}
		return errors.New("access denied")
	})
	fs := live.CheckChannels(context.Background(), f, map[config.Transport]live.ChannelValidator{config.TransportSQS: v})
	if asked["made"] || !asked["checked"] || !asked["assumed"] {
		t.Errorf("looked up %v, want checked and assumed only", asked)
	}
	if m := find(fs, "checked", lint.RuleMissingDestination); m == nil || m.Severity != lint.SeverityError || !strings.Contains(m.Message, `"checked"`) || !strings.Contains(m.Message, "checked-dlq") {
		t.Errorf("no missing-destination error naming the subscription and the queue:%s", dump(fs))
	}
	if find(fs, "assumed", lint.RuleLiveCheckFailed) == nil || len(fs) != 2 {
		t.Errorf("want one live-check-failed for the failed look-up:%s", dump(fs))
	}
}

// TestSQSDestinationSmallerThanSource: on fauxqs, a dead-letter
// queue whose MaximumMessageSize is smaller than its source's is reported
// (destination-message-size); one as large, or a queue left at the
// defaults on both sides, is not; a destination not created yet is not
// this rule's business.
func TestSQSDestinationSmallerThanSource(t *testing.T) {
	ctx, c, mk := sqsEmulator(t)
	run := fmt.Sprintf("size%d", time.Now().UnixNano()%1e9)
	big := map[string]string{"MaximumMessageSize": "1048576"}
	mk(run+"-orders", big)
	mk(run+"-orders-dlq", map[string]string{"MaximumMessageSize": "262144"})
	mk(run+"-orders-invalid", big)
	mk(run+"-refunds", nil)
	mk(run+"-refunds-dlq", nil)
	f := parse(t, fmt.Sprintf(`subscriptions:
  - name: orders
    transport: sqs
    channelName: %[1]s-orders
    deadLetterRoutingKey: %[1]s-orders-dlq
    invalidMessageRoutingKey: %[1]s-orders-invalid
    handler: {type: builtin, name: ack}
  - name: refunds
    transport: sqs
    channelName: %[1]s-refunds
    deadLetterRoutingKey: %[1]s-refunds-dlq
    invalidMessageRoutingKey: %[1]s-refunds-not-yet
    handler: {type: builtin, name: ack}
`, run))
	probers := map[config.Transport]live.Prober{config.TransportSQS: live.SQS{
		Client: func(context.Context, *config.File) (live.SQSAPI, error) { return c.SQS, nil },
	}}
	fs := live.Check(ctx, f, probers, rules.Default())
	d := find(fs, "orders", lint.RuleDestinationMessageSize)
	if d == nil || !strings.HasSuffix(d.Field, "deadLetterRoutingKey") || !strings.Contains(d.Message, "up to 262144 bytes, smaller than the source's 1048576") {
		t.Errorf("orders: %+v%s", d, dump(fs))
	}
	if len(fs) != 1 {
		t.Errorf("findings = %d, want 1 (the invalid-message queue is as large; refunds has the defaults on both sides and a destination not made yet)%s", len(fs), dump(fs))
	}
}
