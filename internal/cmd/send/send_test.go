package send_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestSendCountOnTerminalDrawsProgress: send --count N with stdout on a
// terminal draws a progress bar on stderr instead of printing N ids, and
// logs one line for the lot (fauxqs as the broker).
func TestSendCountOnTerminalDrawsProgress(t *testing.T) {
	cfg, queue := srcConfig(t, cmdtest.SharedSQS(t).Endpoint, "send-bar")
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
			cfg, queue := srcConfig(t, emu.Endpoint, "send-type")
			var out, errOut bytes.Buffer
			streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
			if code := run(t.Context(), streams, []string{"send", "-c", cfg, "-s", "src", "--type", tc.given, "--body", "{}"}); code != cmdutil.ExitOK {
				t.Fatalf("send --type %s exited %d:\n%s", tc.given, code, errOut.String())
			}
			a, ok := receiveOne(t, emu.Endpoint, queue).MessageAttributes["message-type"]
			if !ok || aws.ToString(a.StringValue) != tc.want {
				t.Fatalf("send --type %s: message-type attribute = %q, want %q", tc.given, aws.ToString(a.StringValue), tc.want)
			}
		})
	}
}

// TestSendRefusesIdsAndHeadersThatCannotTravel: an --id or
// --correlation-id with a control character (newline, tab, another C0 or a
// C1 control, DEL), white space at either end or bytes that are not UTF-8,
// and a --header key or value with a C0 control other than tab, newline
// and carriage return, or bytes that are not UTF-8, and a --partition-key
// or --content-type held to the header's rule, are usage errors (exit
// 2) naming the rule, before the file is read or anything is published;
// nothing is printed on stdout.
func TestSendRefusesIdsAndHeadersThatCannotTravel(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--id", " "}, `--id " ": starts or ends with white space`},
		{[]string{"--id", " a"}, `--id " a": starts or ends with white space`},
		{[]string{"--id", "a\u00a0"}, `starts or ends with white space`},
		{[]string{"--id", "a\nb"}, `--id "a\nb": holds the control character U+000A: an id may hold no control character`},
		{[]string{"--id", "a\tb"}, `holds the control character U+0009`},
		{[]string{"--id", "a\rb"}, `holds the control character U+000D`},
		{[]string{"--id", "a\x00b"}, `holds the control character U+0000`},
		{[]string{"--id", "a\x7fb"}, `holds the control character U+007F`},
		{[]string{"--id", "a\u0085b"}, `holds the control character U+0085`},
		{[]string{"--id", "a\xffb"}, `not UTF-8 text`},
		{[]string{"--correlation-id", "c\nd"}, `--correlation-id "c\nd": holds the control character U+000A`},
		{[]string{"--correlation-id", "c "}, `--correlation-id "c ": starts or ends with white space`},
		{[]string{"--header", "k\x01=v"}, `--header "k\x01=v": key holds the control character U+0001`},
		{[]string{"--header", "k=a\x02b"}, `--header "k=a\x02b": value holds the control character U+0002`},
		{[]string{"--header", "k=a\x00"}, `value holds the control character U+0000`},
		{[]string{"--header", "k=\xff"}, `value is not UTF-8 text`},
		{[]string{"--partition-key", "g\x01"}, `--partition-key "g\x01": holds the control character U+0001`},
		{[]string{"--content-type", "text/plain\x00"}, `--content-type "text/plain\x00": holds the control character U+0000`},
	} {
		var out, errOut bytes.Buffer
		streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
		args := append([]string{"send", "-c", "no-such-file.yaml", "-s", "src", "--body", "{}"}, tc.args...)
		code := run(t.Context(), streams, args)
		if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", tc.args, code, cmdutil.ExitUsage, tc.want, errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("%q: stdout %q, want nothing", tc.args, out.String())
		}
	}
}

// TestSendHeaderWithNewlineTravels: what every transport carries is sent
// as it is (fauxqs, read back with the SDK): an --id with white space
// inside it, printed as the one line of stdout, and a --header value with
// a newline, a tab and a carriage return in it, in the bag.
func TestSendHeaderWithNewlineTravels(t *testing.T) {
	emu := cmdtest.SharedSQS(t)
	cfg, queue := srcConfig(t, emu.Endpoint, "send-hdr")
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: os.LookupEnv}
	args := []string{"send", "-c", cfg, "-s", "src", "--body", "{}", "--id", "order 42", "--correlation-id", "req 7", "--header", "note=line one\nline\ttwo\r"}
	if code := run(t.Context(), streams, args); code != cmdutil.ExitOK {
		t.Fatalf("send exited %d:\n%s", code, errOut.String())
	}
	if out.String() != "order 42\n" {
		t.Errorf("stdout = %q, want the id on one line", out.String())
	}
	attrs := receiveOne(t, emu.Endpoint, queue).MessageAttributes
	if id := aws.ToString(attrs["id"].StringValue); id != "order 42" {
		t.Errorf("id attribute = %q, want %q", id, "order 42")
	}
	if id := aws.ToString(attrs["correlation-id"].StringValue); id != "req 7" {
		t.Errorf("correlation-id attribute = %q, want %q", id, "req 7")
	}
	var bag map[string]any
	if err := json.Unmarshal([]byte(aws.ToString(attrs["bag"].StringValue)), &bag); err != nil {
		t.Fatalf("bag attribute: %v", err)
	}
	if v := bag["note"]; v != "line one\nline\ttwo\r" {
		t.Errorf("bag note = %q, want the value as given", v)
	}
}

// srcConfig sets static AWS credentials for t and writes a subscriptions
// file, in a temporary directory, of one SQS subscription, src, on the
// fauxqs at endpoint, whose channel is a queue named prefix-NANOSECONDS.
// It returns the file's path and the queue's name.
func srcConfig(t *testing.T, endpoint, prefix string) (cfg, queue string) {
	t.Helper()
	queue = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	cfg = filepath.Join(t.TempDir(), "brighter.yaml")
	yaml := fmt.Sprintf("connections:\n  aws: {region: %s, endpoint: %q}\nsubscriptions:\n  - name: src\n    transport: sqs\n    channelName: %s\n    handler: {type: builtin, name: ack}\n", sqstest.Region, endpoint, queue)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	return cfg, queue
}

// receiveOne receives from queue on the fauxqs at endpoint with the SDK
// (every message attribute, a long poll of 5s) and returns the message,
// failing t unless exactly one came.
func receiveOne(t *testing.T, endpoint, queue string) types.Message {
	t.Helper()
	c := awssqs.NewFromConfig(sqstest.Config(), func(o *awssqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
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
	return r.Messages[0]
}
