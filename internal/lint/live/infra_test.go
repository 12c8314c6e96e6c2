package live_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/terraform"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// infraFindings lints yaml against the .tf file tf as --infra does and
// returns the rule ids found, each with the file it points into.
func infraFindings(t *testing.T, yaml, tf string) map[string]string {
	t.Helper()
	f, err := config.Parse("brighter.yaml", []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	rs, err := terraform.ReadHCL("main.tf", []byte(tf))
	if err != nil {
		t.Fatal(err)
	}
	set := &infra.Set{}
	set.Add("main.tf", rs)
	set.Attach()
	tr := rules.Default()
	fs := append(live.Check(context.Background(), f, live.InfraProbers(set), tr), live.CheckInfra(f, set, tr, live.InfraOptions{})...)
	got := map[string]string{}
	for _, fd := range fs {
		got[fd.RuleID] = fd.Pos.File
	}
	return got
}

const pullYAML = `connections:
  gcp:
    projectId: acme
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    makeChannels: validate
    requeueCount: 3
    deadLetterRoutingKey: payments-dlq
    maxLeaseExtension: 0s
    handler: {type: exec, command: ./pay, timeout: 20s}
    drainTimeout: 5m
    gcp:
      mode: pull
      ackDeadline: 60s
      deadLetterPolicy:
        topic: payments-dlq
        maxDeliveryAttempts: 10
`

// TestCheckInfra_PubSubLeaseIsTheShorter: a pulled message is held for the
// shorter of gcp.ackDeadline and the subscription's declared ack deadline,
// so a declared deadline shorter than the handler trips the lease rule in
// the .tf file, and a longer one leaves the file's own lease to judge.
func TestCheckInfra_PubSubLeaseIsTheShorter(t *testing.T) {
	tf := func(deadline string) string {
		return `resource "google_pubsub_subscription" "payments" {
  name                 = "payments-sub"
  project              = "acme"
  topic                = "payments"
  ack_deadline_seconds = ` + deadline + `
  dead_letter_policy {
    dead_letter_topic     = "projects/acme/topics/payments-dlq"
    max_delivery_attempts = 10
  }
}

resource "google_pubsub_subscription" "payments_dlq" {
  name    = "payments-dlq"
  project = "acme"
  topic   = "projects/acme/topics/payments-dlq"
}
`
	}
	if got := infraFindings(t, pullYAML, tf("10")); got[lint.RuleHandlerTimeoutExceedsLease] != "main.tf" {
		t.Errorf("ack deadline 10s under a 20s handler: %v, want handler-timeout-exceeds-lease in main.tf", got)
	}
	for _, d := range []string{"600", "var.unknown"} {
		if got := infraFindings(t, pullYAML, tf(d)); len(got) != 0 {
			t.Errorf("ack deadline %s: %v, want no finding", d, got)
		}
	}
}

// TestCheck_InfraUnknownsAreNotJudged: a redrive policy whose
// maxReceiveCount is decided at apply time gives no drift and no
// budget-outranked, and no live-check-failed either.
func TestCheck_InfraUnknownsAreNotJudged(t *testing.T) {
	yaml := `subscriptions:
  - name: orders
    transport: sqs
    channelName: orders
    makeChannels: validate
    requeueCount: 3
    deadLetterRoutingKey: orders-dlq
    handler: {type: builtin, name: ack}
    sqs:
      redrivePolicy:
        deadLetterQueue: orders-dlq
        maxReceiveCount: 10
`
	tf := `variable "max_receive_count" {
  type = number
}

resource "aws_sqs_queue" "orders" {
  name = "orders"
  redrive_policy = jsonencode({
    deadLetterTargetArn = "arn:aws:sqs:us-east-1:1:orders-dlq"
    maxReceiveCount     = var.max_receive_count
  })
}
`
	if got := infraFindings(t, yaml, tf); len(got) != 0 {
		t.Errorf("findings %v on a value decided at apply time, want none", got)
	}
}

// TestCheckInfra_DeadLetterTopicUnsubscribed: a dead-letter topic that no
// declared subscription reads is reported where the infrastructure names
// it, whether the file or only the declared dead-letter policy names it;
// a reader declared by reference or by name, a reader whose topic is
// decided at apply time, and makeChannels: create (consume makes the
// reader) are not.
func TestCheckInfra_DeadLetterTopicUnsubscribed(t *testing.T) {
	yaml := func(mk string) string {
		return `connections:
  gcp:
    projectId: acme
subscriptions:
  - name: payments
    transport: gcp
    channelName: payments-sub
    makeChannels: ` + mk + `
    requeueCount: 3
    deadLetterRoutingKey: payments-dlq
    handler: {type: builtin, name: ack}
    gcp:
      deadLetterPolicy:
        topic: payments-dlq
        maxDeliveryAttempts: 10
`
	}
	tf := func(policyTopic, readers string) string {
		return `variable "unknown" {
  type = string
}

resource "google_pubsub_topic" "payments_dlq" {
  name    = "payments-dlq"
  project = "acme"
}

resource "google_pubsub_topic" "payments_archive" {
  name    = "payments-archive"
  project = "acme"
}

resource "google_pubsub_subscription" "payments" {
  name    = "payments-sub"
  project = "acme"
  topic   = "payments"
  dead_letter_policy {
    dead_letter_topic     = ` + policyTopic + `
    max_delivery_attempts = 10
  }
}
` + readers
	}
	reader := func(topic string) string {
		return `
resource "google_pubsub_subscription" "reader_` + strings.NewReplacer(".", "_", "\"", "", "/", "_", "-", "_").Replace(topic) + `" {
  name    = "reader-` + strings.NewReplacer(".", "-", "\"", "", "/", "-", "_", "-").Replace(topic) + `"
  project = "acme"
  topic   = ` + topic + `
}
`
	}
	dlqRef, archiveRef := "google_pubsub_topic.payments_dlq.id", "google_pubsub_topic.payments_archive.id"
	for _, c := range []struct {
		name, mk, policy, readers string
		want                      bool
	}{
		{"nothing reads the topic", "validate", dlqRef, "", true},
		{"assume is judged too", "assume", dlqRef, "", true},
		{"read by reference", "validate", dlqRef, reader(dlqRef), false},
		{"read by full name", "validate", dlqRef, reader(`"projects/acme/topics/payments-dlq"`), false},
		{"read by id", "validate", `"payments-dlq"`, reader(`"payments-dlq"`), false},
		{"a reader whose topic is decided at apply time", "validate", dlqRef, reader("var.unknown"), false},
		{"create makes the reader", "create", dlqRef, "", false},
		{"the declared policy's topic, not the file's, is unread", "validate", archiveRef, reader(dlqRef), true},
		{"the declared policy's topic is read", "validate", archiveRef, reader(dlqRef) + reader(archiveRef), false},
	} {
		got := infraFindings(t, yaml(c.mk), tf(c.policy, c.readers))
		if file, ok := got[lint.RuleDeadLetterTopicUnsubscribed]; ok != c.want || ok && file != "main.tf" {
			t.Errorf("%s: findings %v, want dead-letter-topic-unsubscribed %v (in main.tf)", c.name, got, c.want)
		}
		if f, ok := got[lint.RuleLiveCheckFailed]; ok {
			t.Errorf("%s: live-check-failed %s", c.name, f)
		}
	}
}
