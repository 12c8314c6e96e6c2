package terraform_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/terraform"
)

const corpus = "../../../../testdata/infra/terraform"

func read(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus, path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func byAddress(t *testing.T, rs []infra.Resource, addr string) infra.Resource {
	t.Helper()
	for _, r := range rs {
		if r.Address == addr {
			return r
		}
	}
	t.Fatalf("no resource %s among %d", addr, len(rs))
	return infra.Resource{}
}

// TestReadHCL_ValuesUnknownsAndPositions: a .tf file's literal values,
// variables with a default and locals are Known at the attribute's line and
// column; a variable without a default is Unknown; a reference to another
// resource is Unknown and keeps that resource's address; jsonencode
// policies are read item by item.
func TestReadHCL_ValuesUnknownsAndPositions(t *testing.T) {
	rs, err := terraform.ReadHCL("orders.tf", read(t, "clean/orders.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d resources, want 4 (aws_sns_topic is not read)", len(rs))
	}
	q := byAddress(t, rs, "aws_sqs_queue.orders")
	if q.Kind != infra.KindSQSQueue || q.Name.V != "orders" || !q.Name.IsKnown() || q.Pos.Line != 30 || q.Pos.Column != 1 {
		t.Errorf("queue %+v", q)
	}
	if v := q.VisibilityTimeout; !v.IsKnown() || v.V != 60*time.Second || v.Pos.Line != 32 || v.Pos.Column != 3 {
		t.Errorf("visibility_timeout_seconds from the variable's default: %+v", v)
	}
	if v := q.MessageRetention; v.State != infra.Unknown || v.Pos.Line != 33 {
		t.Errorf("message_retention_seconds from a variable without default: %+v, want Unknown at line 33", v)
	}
	if q.Redrive == nil {
		t.Fatal("no redrive policy")
	}
	if v := q.Redrive.TargetARN; v.State != infra.Unknown || v.Ref != "aws_sqs_queue.orders_dlq" || v.Pos.Line != 37 || v.Pos.Column != 5 {
		t.Errorf("deadLetterTargetArn: %+v, want Unknown referring to aws_sqs_queue.orders_dlq at 37:5", v)
	}
	if v := q.Redrive.MaxReceiveCount; !v.IsKnown() || v.V != 10 || v.Pos.Line != 38 {
		t.Errorf("maxReceiveCount from a local: %+v", v)
	}
	if v := q.FIFO; v.State != infra.Unset || v.Pos != q.Pos {
		t.Errorf("fifo_queue unset: %+v, want Unset at the resource", v)
	}
	pol := byAddress(t, rs, "aws_sqs_queue_redrive_allow_policy.orders_dlq")
	if ra := pol.RedriveAllow; pol.Queue.Ref != "aws_sqs_queue.orders_dlq" || ra == nil || ra.Permission.V != "byQueue" || len(ra.SourceARNs) != 1 || ra.SourceARNs[0].Ref != "aws_sqs_queue.orders" {
		t.Errorf("aws_sqs_queue_redrive_allow_policy: %+v %+v", pol, ra)
	}
	// Attached to the queue it names once the files are read.
	set := &infra.Set{}
	set.Add("orders.tf", rs)
	set.Attach()
	if dlq, _ := set.ByAddress("aws_sqs_queue.orders_dlq"); dlq.RedriveAllow == nil || dlq.RedriveAllow.Permission.V != "byQueue" {
		t.Errorf("the allow policy declared apart is not the dead-letter queue's: %+v", dlq.RedriveAllow)
	}
	sub := byAddress(t, rs, "aws_sns_topic_subscription.orders")
	if sub.Kind != infra.KindSNSSubscription || sub.Protocol.V != "sqs" || !sub.RawMessageDelivery.V || sub.Endpoint.Ref != "aws_sqs_queue.orders" || sub.TopicARN.State != infra.Unknown {
		t.Errorf("SNS subscription %+v", sub)
	}

	rs, err = terraform.ReadHCL("payments.tf", read(t, "clean/payments.tf"))
	if err != nil {
		t.Fatal(err)
	}
	ps := byAddress(t, rs, "google_pubsub_subscription.payments")
	if ps.Name.V != "payments-sub" || ps.Project.V != "acme-prod" || ps.AckDeadline.V != time.Minute || ps.MessageRetention.V != 7*24*time.Hour ||
		ps.RetryMinBackoff.V != 10*time.Second || ps.RetryMaxBackoff.V != 10*time.Minute || !ps.Ordering.IsKnown() || ps.Ordering.V || !ps.ExactlyOnce.IsKnown() {
		t.Errorf("Pub/Sub subscription %+v", ps)
	}
	if d := ps.DeadLetter; d == nil || d.MaxDeliveryAttempts.V != 10 || d.Topic.Ref != "google_pubsub_topic.payments_dlq" || d.Pos.Line != 31 {
		t.Errorf("dead_letter_policy %+v", d)
	}
	if tp := byAddress(t, rs, "google_pubsub_topic.payments"); tp.Kind != infra.KindPubSubTopic || tp.Name.V != "payments" {
		t.Errorf("topic %+v", tp)
	}
}

// TestReadPlan_EveryResourceType reads a plan that creates every resource
// type: planned values are Known at their key's column, what the plan
// marks unknown is Unknown, and an unknown redrive policy refers to the
// queue its configuration expression references.
func TestReadPlan_EveryResourceType(t *testing.T) {
	data := read(t, "clean/plan.json")
	rs, err := terraform.ReadPlan("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[infra.Kind]int{}
	for _, r := range rs {
		kinds[r.Kind]++
		if r.Pos.Line != 1 || r.Pos.Column < 2 {
			t.Errorf("%s at %s, want a column of line 1 (terraform show -json writes one line)", r.Address, r.Pos)
		}
	}
	if kinds[infra.KindSQSQueue] != 2 || kinds[infra.KindSNSSubscription] != 1 || kinds[infra.KindPubSubSubscription] != 2 || kinds[infra.KindPubSubTopic] != 2 {
		t.Errorf("kinds %v", kinds)
	}
	q := byAddress(t, rs, "aws_sqs_queue.orders")
	if q.Redrive == nil || q.Redrive.TargetARN.State != infra.Unknown || q.Redrive.TargetARN.Ref != "aws_sqs_queue.orders_dlq" || q.Redrive.MaxReceiveCount.State != infra.Unknown {
		t.Errorf("unknown redrive policy: %+v", q.Redrive)
	}
	if q.ARN.State != infra.Unknown || !q.Name.IsKnown() || q.MaxMessageSize.V != 262144 {
		t.Errorf("queue %+v", q)
	}
	// The key's position: the column where "max_message_size" starts.
	at := q.MaxMessageSize.Pos.Column - 1
	if line := strings.SplitN(string(data), "\n", 2)[0]; !strings.HasPrefix(line[len(string([]rune(line)[:at])):], `"max_message_size":262144`) {
		t.Errorf("max_message_size at column %d: %.40q", q.MaxMessageSize.Pos.Column, line[at:])
	}
	ps := byAddress(t, rs, "google_pubsub_subscription.payments")
	if d := ps.DeadLetter; d == nil || d.MaxDeliveryAttempts.V != 10 || d.Topic.V != "projects/acme-prod/topics/payments-dlq" {
		t.Errorf("dead_letter_policy %+v", d)
	}
	if ps.AckDeadline.V != time.Minute || ps.RetryMaxBackoff.V != 10*time.Minute || !ps.RetryPolicy {
		t.Errorf("subscription %+v", ps)
	}
	if dlq := byAddress(t, rs, "google_pubsub_subscription.payments_dlq"); dlq.RetryPolicy {
		t.Errorf("retry_policy [] read as a declared retry policy: %+v", dlq)
	}
	// A retry policy decided at apply time is declared, its bounds Unknown.
	const known = `"retry_policy":[{"minimum_backoff":"10s","maximum_backoff":"600s"}],"terraform_labels":{},"timeouts":null,"topic":"projects/acme-prod/topics/payments"},"after_unknown":{}`
	if strings.Count(string(data), known) != 1 {
		t.Fatal("clean/plan.json changed: keep this test in step")
	}
	rs, err = terraform.ReadPlan("plan.json", []byte(strings.Replace(string(data), known,
		`"terraform_labels":{},"timeouts":null,"topic":"projects/acme-prod/topics/payments"},"after_unknown":{"retry_policy":true}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if p := byAddress(t, rs, "google_pubsub_subscription.payments"); !p.RetryPolicy || p.RetryMaxBackoff.State != infra.Unknown || p.RetryMinBackoff.State != infra.Unknown {
		t.Errorf("retry policy decided at apply time: %+v", p)
	}
	sns := byAddress(t, rs, "aws_sns_topic_subscription.orders")
	if sns.Endpoint.State != infra.Unknown || sns.Endpoint.Ref != "aws_sqs_queue.orders" || !sns.RawMessageDelivery.V {
		t.Errorf("SNS subscription %+v", sns)
	}

	// A known redrive policy (an update plan) is decoded from its JSON string.
	rs, err = terraform.ReadPlan("p.json", read(t, "native-limit-drift/trigger.json"))
	if err != nil {
		t.Fatal(err)
	}
	q = byAddress(t, rs, "aws_sqs_queue.orders")
	if q.Redrive == nil || q.Redrive.MaxReceiveCount.V != 5 || q.Redrive.TargetARN.V != "arn:aws:sqs:us-east-1:123456789012:orders-dlq" {
		t.Errorf("known redrive policy: %+v", q.Redrive)
	}
	if dlq := byAddress(t, rs, "aws_sqs_queue.orders_dlq"); dlq.Redrive != nil || dlq.RedriveAllow != nil {
		t.Errorf("an empty policy string is no policy: %+v %+v", dlq.Redrive, dlq.RedriveAllow)
	}
}

// TestReaders_RefuseHostileFiles: invalid, too deeply nested and
// non-plan files are *infra.Error values with a position, never a panic
// or a parse of unbounded depth.
func TestReaders_RefuseHostileFiles(t *testing.T) {
	deepJSON := `{"format_version":"1.2","terraform_version":"1.9.5","resource_changes":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}"
	deepHCL := "locals {\n  x = " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n}\n"
	for _, c := range []struct {
		name string
		read func(string, []byte) ([]infra.Resource, error)
		data string
		want string
	}{
		{"deep.json", terraform.ReadPlan, deepJSON, "nest deeper than 32"},
		{"deep.tf", terraform.ReadHCL, deepHCL, "nest deeper than 32"},
		{"bad.json", terraform.ReadPlan, `{"format_version":"1.2",` + "\n" + `"resource_changes":[}`, "bad.json:2:"},
		{"old.json", terraform.ReadPlan, `{"format_version":"3.0","terraform_version":"9.0.0"}`, "not a Terraform plan"},
		{"bad.tf", terraform.ReadHCL, "resource \"aws_sqs_queue\" \"q\" {\n  name = \"a\"\n", "bad.tf:"},
	} {
		_, err := c.read(c.name, []byte(c.data))
		var ie *infra.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an *infra.Error containing %q", c.name, err, c.want)
		}
	}
}

// FuzzReadPlan: any input is read or refused with an error, never a panic.
func FuzzReadPlan(f *testing.F) {
	for _, p := range []string{"clean/plan.json", "native-limit-drift/trigger.json", "budget-cannot-run-down/ok.json"} {
		f.Add(read(f, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := terraform.ReadPlan("fuzz.json", data)
		if err == nil {
			for _, r := range rs {
				if r.Address == "" || r.Pos.File != "fuzz.json" {
					t.Fatalf("resource without address or file: %+v", r)
				}
			}
		}
	})
}

// FuzzReadHCL: any input is read or refused with an error, never a panic.
func FuzzReadHCL(f *testing.F) {
	for _, p := range []string{"clean/orders.tf", "clean/payments.tf", "redrive-allow-forbids-source/trigger.tf"} {
		f.Add(read(f, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := terraform.ReadHCL("fuzz.tf", data)
		if err == nil {
			for _, r := range rs {
				if r.Address == "" || r.Pos.File != "fuzz.tf" {
					t.Fatalf("resource without address or file: %+v", r)
				}
			}
		}
	})
}
