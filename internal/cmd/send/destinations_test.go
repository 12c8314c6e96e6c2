package send_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestSendThatCreatesAQueueSaysSo: on SQS with makeChannels create (the
// default), send to a --topic that names no queue creates it and logs one
// Info record naming the queue and why; a send to the queue it now finds
// logs no creation.
func TestSendThatCreatesAQueueSaysSo(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: send-src\n    handler: {type: builtin, name: ack}\n", sqstest.Region, emu.Endpoint)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := fmt.Sprintf("send-typo-%d", time.Now().UnixNano())
	send := func() string {
		var out, errOut bytes.Buffer
		streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
		if code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--topic", typo, "--body", "{}"}); code != cmdutil.ExitOK {
			t.Fatalf("send exited %d:\n%s", code, errOut.String())
		}
		return errOut.String()
	}
	first := send()
	want := fmt.Sprintf(`level=INFO msg="destination created" destination=%s transport=sqs reason="the queue did not exist and makeChannels is create"`, typo)
	if !strings.Contains(first, want) {
		t.Fatalf("the send that created %s logged no creation:\n%s", typo, first)
	}
	if again := send(); strings.Contains(again, "destination created") {
		t.Fatalf("a send to the existing queue logged a creation:\n%s", again)
	}
}

// TestSendToAMissingPubSubTopicSaysHowToMakeIt: on Google's emulator, send
// to a topic that does not exist fails (exit 1) naming the topic's full
// name and how to make it, not with a bare NotFound.
func TestSendToAMissingPubSubTopicSaysHowToMakeIt(t *testing.T) {
	_, srv := gcptest.Start(t, "send-missing", nil, gcp.Connect)
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := fmt.Sprintf("connections:\n  gcp: {projectId: %s, emulatorHost: %q}\nsubscriptions:\n  - name: payments\n    transport: gcp\n    channelName: payments\n    routingKey: payments\n    handler: {type: builtin, name: ack}\n", srv.Project, srv.Addr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
	code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "payments", "--body", "{}"})
	stderr := errOut.String()
	if code != cmdutil.ExitFailure {
		t.Fatalf("send to a missing topic exited %d, want %d:\n%s", code, cmdutil.ExitFailure, stderr)
	}
	for _, want := range []string{
		"projects/" + srv.Project + "/topics/payments",
		"run brighter consume on this subscriptions file once (makeChannels: create",
		"gcloud pubsub topics create payments --project " + srv.Project,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error does not say %q:\n%s", want, stderr)
		}
	}
}

// TestSendToAMissingSQSQueueSaysHowToMakeIt: on SQS, with makeChannels
// validate or assume, send to a queue (or, for channelType pubSub, an SNS
// topic) that does not exist fails (exit 1) naming it and how to make it,
// not with SQS's bare NonExistentQueue answer alone.
func TestSendToAMissingSQSQueueSaysHowToMakeIt(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, tc := range []struct {
		name, make, channelType, want string
	}{
		{"queue-validate", "validate", "pointToPoint", "aws sqs create-queue --queue-name "},
		{"queue-assume", "assume", "pointToPoint", "aws sqs create-queue --queue-name "},
		{"sns-topic-assume", "assume", "pubSub", "aws sns create-topic --name "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("send-missing-%d", time.Now().UnixNano())
			cfg := filepath.Join(t.TempDir(), "brighter.yaml")
			yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    routingKey: %s\n    makeChannels: %s\n    sqs: {channelType: %s}\n    handler: {type: builtin, name: ack}\n",
				sqstest.Region, emu.Endpoint, name, name, tc.make, tc.channelType)
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
			code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--body", "{}"})
			stderr := errOut.String()
			if code != cmdutil.ExitFailure {
				t.Fatalf("send to a missing destination exited %d, want %d:\n%s", code, cmdutil.ExitFailure, stderr)
			}
			for _, want := range []string{
				"does not exist: ",
				"makeChannels validate and assume never create it",
				"run brighter consume on this subscriptions file once with makeChannels: create",
				tc.want + name,
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("the error does not say %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// TestSendCountToAFIFOQueueDeliversEveryCopy: send --count 3 of one body
// to a FIFO queue with content-based deduplication (the default) puts
// three messages on the queue, each copy deduplicated by its own message
// id; SQS would otherwise drop the second and third as duplicates of the
// first body. Three sends with one --id stay one message.
func TestSendCountToAFIFOQueueDeliversEveryCopy(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"new-ids", []string{"--count", "3"}, "3"},
		{"one-id", []string{"--count", "3", "--id", "same-id"}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			queue := fmt.Sprintf("send-fifo-%d.fifo", time.Now().UnixNano())
			cfg := filepath.Join(t.TempDir(), "brighter.yaml")
			yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    routingKey: %s\n    sqs: {queueType: fifo}\n    handler: {type: builtin, name: ack}\n",
				sqstest.Region, emu.Endpoint, queue, queue)
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
			args := append([]string{"send", "-c", cfg, "-s", "src", "--body", `{"same":"body"}`, "--partition-key", "g1"}, tc.args...)
			if code := run(t.Context(), streams, args); code != cmdutil.ExitOK {
				t.Fatalf("send exited %d:\n%s", code, errOut.String())
			}
			c := awssqs.NewFromConfig(sqstest.Config(), func(o *awssqs.Options) { o.BaseEndpoint = aws.String(emu.Endpoint) })
			u, err := c.GetQueueUrl(t.Context(), &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.GetQueueAttributes(t.Context(), &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl,
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)]; got != tc.want {
				t.Fatalf("%s holds %s messages after send %v, want %s", queue, got, tc.args, tc.want)
			}
		})
	}
}

// TestSendNonBMPBodyRefusalSaysWhy: SQS's refusal of a message's characters
// (InvalidMessageContents, a 400) is said in words, never as the raw HTTP
// answer, and is a usage error (exit 2), the message being the user's
// input: a control character names itself and its byte; a character above
// U+FFFF, which AWS takes but fauxqs refuses, is named as such (fauxqs).
func TestSendNonBMPBodyRefusalSaysWhy(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	queue := fmt.Sprintf("send-chars-%d", time.Now().UnixNano())
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    routingKey: %s\n    makeChannels: create\n    handler: {type: builtin, name: ack}\n",
		sqstest.Region, emu.Endpoint, queue, queue)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{"x 𝄞", "the body holds characters above U+FFFF (U+1D11E at byte 2), which AWS takes but an emulator may refuse (fauxqs does)"},
		{"x\x01", "the body holds U+0001 at byte 1"},
	} {
		var out, errOut bytes.Buffer
		streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
		code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--body", tc.body})
		msg := errOut.String()
		if code != cmdutil.ExitUsage || !strings.Contains(msg, "SQS refused the message's characters (InvalidMessageContents): "+tc.want) || !strings.Contains(msg, "SQS takes #x9") ||
			strings.Contains(msg, "StatusCode") || strings.Contains(msg, "Invalid characters found") {
			t.Errorf("send --body %q: exit %d, want %d saying %q in words\n%s", tc.body, code, cmdutil.ExitUsage, tc.want, msg)
		}
	}
}
