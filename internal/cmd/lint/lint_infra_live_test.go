package lint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/lint"
)

// TestLintInfraMatchesLive seeds fauxqs and Google's Pub/Sub emulator with
// queues and subscriptions, writes a .tf file and a Terraform plan JSON
// that declare the same settings, and lints one subscriptions file with
// --live and with --infra on each: the rules all sources run
// (native-limit-drift, budget-outranked, budget-cannot-run-down,
// destination-message-size, dead-letter-topic-unsubscribed) give the same
// findings, rule, subscription and field, whether the settings in force are
// read from the brokers, from the configuration or from the plan.
func TestLintInfraMatchesLive(t *testing.T) {
	ctx := context.Background()
	prefix := fmt.Sprintf("eq%d", time.Now().UnixNano()%1_000_000_000)
	emu := cmdtest.SharedSQS(t)
	sc := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	arn := func(name string) string { return "arn:aws:sqs:" + sqstest.Region + ":000000000000:" + name }
	for _, q := range []struct {
		name  string
		attrs map[string]string
	}{
		{"-orders-native", nil},
		{"-orders-dlq", map[string]string{"MaximumMessageSize": "1024"}},
		{"-orders", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn(prefix+"-orders-native") + `","maxReceiveCount":"5"}`}},
	} {
		if _, err := sc.SQS.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(prefix + q.name), Attributes: q.attrs}); err != nil {
			t.Fatalf("create queue %s: %v", q.name, err)
		}
	}
	client, srv := gcptest.Start(t, "infra", nil, gcp.Connect)
	pj := srv.Project
	topic := func(n string) string { return "projects/" + pj + "/topics/" + prefix + n }
	for _, n := range []string{"-payments", "-payments-dlq", "-invoices", "-invoices-dlq"} {
		if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic(n)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*pubsubpb.Subscription{
		{Name: "projects/" + pj + "/subscriptions/" + prefix + "-payments-sub", Topic: topic("-payments"),
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: topic("-payments-dlq"), MaxDeliveryAttempts: 5}},
		{Name: "projects/" + pj + "/subscriptions/" + prefix + "-refunds-sub", Topic: topic("-payments")},
		{Name: "projects/" + pj + "/subscriptions/" + prefix + "-payments-dlq-sub", Topic: topic("-payments-dlq")},
		// Nothing reads the invoices' dead-letter topic.
		{Name: "projects/" + pj + "/subscriptions/" + prefix + "-invoices-sub", Topic: topic("-invoices"),
			DeadLetterPolicy: &pubsubpb.DeadLetterPolicy{DeadLetterTopic: topic("-invoices-dlq"), MaxDeliveryAttempts: 10}},
	} {
		if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, s); err != nil {
			t.Fatalf("create subscription %s: %v", s.Name, err)
		}
	}
	creds, err := sqstest.Config().Credentials.Retrieve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)

	dir := t.TempDir()
	yaml := filepath.Join(dir, "brighter.yaml")
	writeFile(t, yaml, `connections:
  aws:
    region: `+sqstest.Region+`
    endpoint: `+emu.Endpoint+`
  gcp:
    projectId: `+pj+`
    emulatorHost: `+srv.Addr+`
subscriptions:
  - name: orders
    transport: sqs
    channelName: `+prefix+`-orders
    makeChannels: validate
    requeueCount: 6
    handler: {type: builtin, name: ack}
    deadLetterRoutingKey: `+prefix+`-orders-dlq
    sqs:
      redrivePolicy:
        deadLetterQueue: `+prefix+`-orders-native
        maxReceiveCount: 10
  - name: payments
    transport: gcp
    channelName: `+prefix+`-payments-sub
    routingKey: `+prefix+`-payments
    makeChannels: validate
    requeueCount: 6
    handler: {type: builtin, name: ack}
    deadLetterRoutingKey: `+prefix+`-payments-dlq
    gcp:
      deadLetterPolicy:
        topic: `+prefix+`-payments-dlq
        maxDeliveryAttempts: 10
  - name: refunds
    transport: gcp
    channelName: `+prefix+`-refunds-sub
    routingKey: `+prefix+`-payments
    makeChannels: validate
    requeueCount: 3
    handler: {type: builtin, name: ack}
    deadLetterRoutingKey: `+prefix+`-payments-dlq
    gcp:
      deadLetterPolicy:
        topic: `+prefix+`-payments-dlq
        maxDeliveryAttempts: 10
  - name: invoices
    transport: gcp
    channelName: `+prefix+`-invoices-sub
    routingKey: `+prefix+`-invoices
    makeChannels: assume
    requeueCount: 3
    handler: {type: builtin, name: ack}
    deadLetterRoutingKey: `+prefix+`-invoices-dlq
    gcp:
      deadLetterPolicy:
        topic: `+prefix+`-invoices-dlq
        maxDeliveryAttempts: 10
`)
	tf := filepath.Join(dir, "main.tf")
	writeFile(t, tf, strings.ReplaceAll(strings.ReplaceAll(`variable "project" {
  type    = string
  default = "PROJECT"
}

resource "aws_sqs_queue" "orders_native" {
  name = "PREFIX-orders-native"
}

resource "aws_sqs_queue" "orders_dlq" {
  name             = "PREFIX-orders-dlq"
  max_message_size = 1024
}

resource "aws_sqs_queue" "orders" {
  name = "PREFIX-orders"
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.orders_native.arn
    maxReceiveCount     = 5
  })
}

resource "google_pubsub_topic" "payments" {
  name    = "PREFIX-payments"
  project = var.project
}

resource "google_pubsub_topic" "payments_dlq" {
  name    = "PREFIX-payments-dlq"
  project = var.project
}

resource "google_pubsub_subscription" "payments" {
  name    = "PREFIX-payments-sub"
  project = var.project
  topic   = google_pubsub_topic.payments.id

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.payments_dlq.id
    max_delivery_attempts = 5
  }
}

resource "google_pubsub_subscription" "refunds" {
  name    = "PREFIX-refunds-sub"
  project = var.project
  topic   = google_pubsub_topic.payments.id
}

resource "google_pubsub_subscription" "payments_dlq" {
  name    = "PREFIX-payments-dlq-sub"
  project = var.project
  topic   = google_pubsub_topic.payments_dlq.id
}

resource "google_pubsub_topic" "invoices" {
  name    = "PREFIX-invoices"
  project = var.project
}

resource "google_pubsub_topic" "invoices_dlq" {
  name    = "PREFIX-invoices-dlq"
  project = var.project
}

resource "google_pubsub_subscription" "invoices" {
  name    = "PREFIX-invoices-sub"
  project = var.project
  topic   = google_pubsub_topic.invoices.id

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.invoices_dlq.id
    max_delivery_attempts = 10
  }
}
`, "PREFIX", prefix), "PROJECT", pj))

	// The same declarations as `terraform show -json` prints their plan
	// against the deployed queues and subscriptions, which the brokers
	// hold: nothing to change, defaults filled in, every value known (the
	// queues exist, so their ARNs and the redrive policy are).
	gtopic := func(n string) string { return "projects/" + pj + "/topics/" + prefix + n }
	queue := func(addr, name string, size int, redrive string) planResource {
		return planResource{addr: addr, after: map[string]any{"name": prefix + name, "arn": arn(prefix + name), "max_message_size": size,
			"message_retention_seconds": 345600, "visibility_timeout_seconds": 30, "fifo_queue": false, "redrive_policy": redrive}}
	}
	ptopic := func(addr, name string) planResource {
		return planResource{addr: addr, after: map[string]any{"name": prefix + name, "project": pj, "id": gtopic(name)}}
	}
	psub := func(addr, name, topic, dlq string, attempts int) planResource {
		dl := []any{}
		if dlq != "" {
			dl = []any{map[string]any{"dead_letter_topic": gtopic(dlq), "max_delivery_attempts": attempts}}
		}
		return planResource{addr: addr, after: map[string]any{"name": prefix + name, "project": pj, "topic": gtopic(topic),
			"ack_deadline_seconds": 10, "enable_message_ordering": false, "message_retention_duration": "604800s", "dead_letter_policy": dl}}
	}
	plan := filepath.Join(dir, "plan.json")
	writeFile(t, plan, planJSON(t, []planResource{
		queue("aws_sqs_queue.orders_native", "-orders-native", 262144, ""),
		queue("aws_sqs_queue.orders_dlq", "-orders-dlq", 1024, ""),
		queue("aws_sqs_queue.orders", "-orders", 262144, `{"deadLetterTargetArn":"`+arn(prefix+"-orders-native")+`","maxReceiveCount":5}`),
		ptopic("google_pubsub_topic.payments", "-payments"),
		ptopic("google_pubsub_topic.payments_dlq", "-payments-dlq"),
		psub("google_pubsub_subscription.payments", "-payments-sub", "-payments", "-payments-dlq", 5),
		psub("google_pubsub_subscription.refunds", "-refunds-sub", "-payments", "", 0),
		psub("google_pubsub_subscription.payments_dlq", "-payments-dlq-sub", "-payments-dlq", "", 0),
		ptopic("google_pubsub_topic.invoices", "-invoices"),
		ptopic("google_pubsub_topic.invoices_dlq", "-invoices-dlq"),
		psub("google_pubsub_subscription.invoices", "-invoices-sub", "-invoices", "-invoices-dlq", 10),
	}))

	compared := []string{lint.RuleNativeLimitDrift, lint.RuleBudgetOutranked, lint.RuleBudgetCannotRunDown, lint.RuleDestinationMessageSize, lint.RuleDeadLetterTopicUnsubscribed}
	keys := func(args ...string) []string {
		t.Helper()
		io, out, errOut := cmdtest.FakeIO("", false)
		run(ctx, io, append([]string{"lint", "-o", "json", "--fail-on", "none"}, args...))
		var rep struct {
			Findings []struct{ Rule, Subscription, Field, Message, File string } `json:"findings"`
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("lint %v: %v\n%s\n%s", args, err, out, errOut)
		}
		var ks []string
		for _, f := range rep.Findings {
			if f.Rule == lint.RuleLiveCheckFailed {
				t.Errorf("lint %v: %s", args, f.Message)
			}
			if slices.Contains(compared, f.Rule) {
				ks = append(ks, f.Rule+" "+f.Subscription+" "+f.Field)
			}
		}
		slices.Sort(ks)
		return ks
	}
	live := keys("--live", yaml)
	for _, src := range []string{tf, plan} {
		infra := keys("--infra", src, yaml)
		if !slices.Equal(live, infra) {
			t.Errorf("--live and --infra %s disagree on the same settings:\n--live:  %q\n--infra: %q", filepath.Base(src), live, infra)
		}
	}
	for _, r := range compared {
		if !slices.ContainsFunc(live, func(k string) bool { return strings.HasPrefix(k, r+" ") }) {
			t.Errorf("no %s finding: the comparison would not cover it (%q)", r, live)
		}
	}
}

// planResource is one managed resource of a Terraform plan: its address
// (type.name) and values.
type planResource struct {
	addr  string
	after map[string]any
}

// planJSON returns the `terraform show -json` output of a plan that leaves
// the deployed resources rs as they are (no-op changes, every value
// known), with what ReadPlan reads: resource_changes, planned_values and
// configuration.root_module.
func planJSON(t *testing.T, rs []planResource) string {
	t.Helper()
	var changes, planned, conf []any
	for _, r := range rs {
		typ, name, _ := strings.Cut(r.addr, ".")
		changes = append(changes, map[string]any{"address": r.addr, "mode": "managed", "type": typ, "name": name,
			"change": map[string]any{"actions": []string{"no-op"}, "before": r.after, "after": r.after, "after_unknown": map[string]any{}}})
		planned = append(planned, map[string]any{"address": r.addr, "mode": "managed", "type": typ, "name": name, "values": r.after})
		conf = append(conf, map[string]any{"address": r.addr, "mode": "managed", "type": typ, "name": name, "expressions": map[string]any{}})
	}
	b, err := json.Marshal(map[string]any{
		"format_version": "1.2", "terraform_version": "1.9.5",
		"planned_values":   map[string]any{"root_module": map[string]any{"resources": planned}},
		"resource_changes": changes,
		"configuration":    map[string]any{"root_module": map[string]any{"resources": conf}},
		"applyable":        true, "complete": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
