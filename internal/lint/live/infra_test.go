package live_test

import (
	"context"
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
