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

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestSendCountOnTerminalDrawsProgress: send --count N with stdout on a
// terminal draws a progress bar on stderr instead of printing N ids, and
// logs one line for the lot (fauxqs as the broker).
func TestSendCountOnTerminalDrawsProgress(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	queue := fmt.Sprintf("send-bar-%d", time.Now().UnixNano())
	yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    handler: {type: builtin, name: ack}\n", sqstest.Region, emu.Endpoint, queue)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: true, Getenv: os.LookupEnv}
	if code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--count", "20", "--body", "{}"}); code != cmdutil.ExitOK {
		t.Fatalf("send exited %d:\n%s", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout on a terminal = %q, want nothing (the bar shows progress)", out.String())
	}
	stderr := errOut.String()
	if !strings.Contains(stderr, "sending to "+queue) || !strings.Contains(stderr, "/20, ") {
		t.Errorf("stderr has no progress bar of 20:\n%q", stderr)
	}
	if n := strings.Count(stderr, `msg="message sent"`); n != 0 {
		t.Errorf("%d per-message log lines at Info, want 0", n)
	}
	if !strings.Contains(stderr, `msg="messages sent" count=20`) {
		t.Errorf("no summary log line:\n%s", stderr)
	}
}

// TestSendCountOutOfRangeIsAUsageError: --count 0 and a count over
// MaxCount are refused (exit 2) before anything is read or published,
// naming the range.
func TestSendCountOutOfRangeIsAUsageError(t *testing.T) {
	for _, n := range []string{"0", "100001", "999999999999"} {
		var out, errOut bytes.Buffer
		streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
		code := run(t.Context(), streams, []string{"send", "-c", "no-such-file.yaml", "-s", "src", "--count", n, "--body", "{}"})
		if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "must be 1 to 100000") {
			t.Errorf("--count %s: exit %d, want %d naming the range:\n%s", n, code, cmdutil.ExitUsage, errOut.String())
		}
	}
}

// TestSendTypeInAnyCaseTravelsCanonical: --type takes the standard names in
// any case, and the message carries the canonical name on the wire (the
// SQS message-type attribute, read back from fauxqs with the SDK), so a
// .NET Brighter consumer, whose readers are case-sensitive, reads it.
func TestSendTypeInAnyCaseTravelsCanonical(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	for _, tc := range []struct{ given, want string }{
		{"mt_command", "MT_COMMAND"},
		{"Mt_Document", "MT_DOCUMENT"},
		{"MT_EVENT", "MT_EVENT"},
	} {
		t.Run(tc.given, func(t *testing.T) {
			queue := fmt.Sprintf("send-type-%d", time.Now().UnixNano())
			cfg := filepath.Join(t.TempDir(), "brighter.yaml")
			yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    handler: {type: builtin, name: ack}\n", sqstest.Region, emu.Endpoint, queue)
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			var out, errOut bytes.Buffer
			streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
			if code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--type", tc.given, "--body", "{}"}); code != cmdutil.ExitOK {
				t.Fatalf("send --type %s exited %d:\n%s", tc.given, code, errOut.String())
			}
			c := awssqs.NewFromConfig(sqstest.Config(), func(o *awssqs.Options) { o.BaseEndpoint = aws.String(emu.Endpoint) })
			u, err := c.GetQueueUrl(t.Context(), &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.ReceiveMessage(t.Context(), &awssqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MessageAttributeNames: []string{"All"}, WaitTimeSeconds: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) != 1 {
				t.Fatalf("received %d messages from %s, want 1", len(r.Messages), queue)
			}
			a, ok := r.Messages[0].MessageAttributes["message-type"]
			if !ok || aws.ToString(a.StringValue) != tc.want {
				t.Fatalf("send --type %s: message-type attribute = %q, want %q", tc.given, aws.ToString(a.StringValue), tc.want)
			}
		})
	}
}
