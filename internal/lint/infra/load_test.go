package infra_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// TestDetect_TellsTheFormatByContentNotByFileName tells each format by content,
// whatever the file is named.
func TestDetect_TellsTheFormatByContentNotByFileName(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       infra.Format
	}{
		{"plan.json", `{"format_version":"1.2","terraform_version":"1.9.5","planned_values":{}}`, infra.FormatTerraformPlan},
		{"main.tf", "# empty\n", infra.FormatTerraform},
		{"queues.hcl", "resource \"aws_sqs_queue\" \"q\" {\n}\n", infra.FormatTerraform},
		{"t.json", `{"AWSTemplateFormatVersion":"2010-09-09","Resources":{}}`, infra.FormatCloudFormation},
		{"t.yaml", "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n", infra.FormatCloudFormation},
		{"k.yaml", "apiVersion: pubsub.cnrm.cloud.google.com/v1beta1\nkind: PubSubTopic\n", infra.FormatKubernetes},
	} {
		got, err := infra.Detect(c.name, []byte(c.data))
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, data := range []string{"subscriptions:\n  - name: a\n", `{"files":[]}`, ""} {
		if _, err := infra.Detect("x", []byte(data)); !errors.Is(err, infra.ErrNotInfrastructure) {
			t.Errorf("%q: %v, want ErrNotInfrastructure", data, err)
		}
	}
}

// TestLoad_WalksDirectoriesAndRefusesUnknownFiles: a directory is walked
// (hidden directories and files of no format skipped), a file named
// directly must be of a known format, and a file over the size limit is
// refused with its name before it is read.
func TestLoad_WalksDirectoriesAndRefusesUnknownFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("main.tf", "resource \"x\" \"y\" {}\n")
	write(".terraform/modules/m/main.tf", "resource \"x\" \"z\" {}\n")
	write("brighter.yaml", "subscriptions: []\n")
	notes := write("notes.txt", "hello\n")
	var read []string
	readers := infra.Readers{infra.FormatTerraform: func(name string, _ []byte) ([]infra.Resource, error) {
		read = append(read, filepath.Base(filepath.Dir(name))+"/"+filepath.Base(name))
		return []infra.Resource{{Kind: infra.KindSQSQueue, Address: "x.y", Pos: config.Position{File: name, Line: 1, Column: 1}}}, nil
	}}
	set, err := infra.Load([]string{dir}, readers, nil)
	if err != nil || len(read) != 1 || len(set.Resources) != 1 || len(set.Files) != 1 {
		t.Fatalf("walk: read %v, set %+v, err %v; want main.tf only", read, set, err)
	}
	if _, err := infra.Load([]string{notes}, readers, nil); !errors.Is(err, infra.ErrNotInfrastructure) {
		t.Errorf("a named file of no format: %v", err)
	}
	big := write("big.tf", strings.Repeat("#", infra.MaxFileSize+1))
	_, err = infra.Load([]string{big}, readers, nil)
	var ie *infra.Error
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a file over the size limit: %v", err)
	}
	if _, err := infra.ReadData("x.yaml", []byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"), false, readers); err == nil || !strings.Contains(err.Error(), "not read by this build") {
		t.Errorf("a format without a reader: %v", err)
	}
}

// TestSet_FindsByNameARNAndFullName matches a queue by name and ARN and a
// Pub/Sub subscription by id and full resource name, within its project,
// and follows a reference by address.
func TestSet_FindsByNameARNAndFullName(t *testing.T) {
	known := func(s string) infra.Value[string] { return infra.Value[string]{V: s, State: infra.Known} }
	set := &infra.Set{}
	set.Add("main.tf", []infra.Resource{
		{Kind: infra.KindSQSQueue, Address: "aws_sqs_queue.q", Name: known("orders"), ARN: known("arn:aws:sqs:us-east-1:1:orders")},
		{Kind: infra.KindPubSubSubscription, Address: "google_pubsub_subscription.s", Name: known("payments-sub"), Project: known("p1")},
		{Kind: infra.KindPubSubTopic, Address: "google_pubsub_topic.t", Name: known("payments")},
	})
	for _, c := range []struct {
		kind infra.Kind
		name string
		want string
	}{
		{infra.KindSQSQueue, "orders", "aws_sqs_queue.q"},
		{infra.KindSQSQueue, "arn:aws:sqs:us-east-1:1:orders", "aws_sqs_queue.q"},
		{infra.KindSQSQueue, "arn:aws:sqs:eu-west-1:2:orders", ""},
		{infra.KindSQSQueue, "orders-dlq", ""},
		{infra.KindPubSubSubscription, "payments-sub", "google_pubsub_subscription.s"},
		{infra.KindPubSubSubscription, "projects/p1/subscriptions/payments-sub", "google_pubsub_subscription.s"},
		{infra.KindPubSubSubscription, "projects/p2/subscriptions/payments-sub", ""},
		{infra.KindPubSubTopic, "projects/p9/topics/payments", "google_pubsub_topic.t"},
	} {
		r, ok := set.Find(c.kind, c.name)
		got := ""
		if ok {
			got = r.Address
		}
		if got != c.want {
			t.Errorf("Find(%s, %s) = %q, want %q", c.kind, c.name, got, c.want)
		}
	}
	if r, ok := set.Resolve(infra.KindPubSubTopic, infra.Value[string]{State: infra.Unknown, Ref: "google_pubsub_topic.t"}); !ok || r.Address != "google_pubsub_topic.t" {
		t.Errorf("Resolve by reference: %v %v", r, ok)
	}
	if _, ok := set.Resolve(infra.KindSQSQueue, infra.Value[string]{State: infra.Unknown}); ok {
		t.Error("an unknown value without a reference resolved to a resource")
	}
}
