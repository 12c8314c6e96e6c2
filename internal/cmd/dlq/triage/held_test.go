package triage

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestDLQ_HeldByAnotherReaderIsSaid: messages another reader holds
// invisible (a killed replay or archive) cannot be read, so peek, stats,
// replay and archive each say how many were held when they began, rather
// than let a short or empty result pass for the whole dead-letter queue;
// with nothing held they say nothing of it (fauxqs; the other reader is a
// receive with a 60 s visibility timeout).
func TestDLQ_HeldByAnotherReaderIsSaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := fauxqsQueues(t, "hd", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	dir := t.TempDir()
	const note = "held invisible by another reader when this one began"
	peek := append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "1s"}, conn...)
	if code, out, errOut := cmdtest.BrighterExit(t, dir, peek...); code != cmdutil.ExitOK || strings.Contains(errOut, note) {
		t.Fatalf("peek of an empty queue nobody holds: exit %d, want %d and no held notice\n%s%s", code, cmdutil.ExitOK, out, errOut)
	}
	for i := range 3 {
		if err := p.Send(ctx, stamped(fmt.Sprintf("h%d-%s", i, run), dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	holdMessages(t, dlq, 2, 60*time.Second)
	want := "sqs://" + dlq + ": 2 more messages " + note
	for _, args := range [][]string{
		peek,
		append([]string{"dlq", "stats", "sqs://" + dlq, "--wait", "1s", "-o", "json"}, conn...),
		append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", filepath.Join(dir, "a.jsonl"), "--wait", "1s"}, conn...),
		append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--wait", "1s"}, conn...), // nothing left to confirm
	} {
		code, out, errOut := cmdtest.BrighterExit(t, dir, args...)
		if code != cmdutil.ExitOK || !strings.Contains(errOut, want) {
			t.Errorf("brighter %s: exit %d, want %d and %q on stderr\nstdout:\n%s\nstderr:\n%s", strings.Join(args[:2], " "), code, cmdutil.ExitOK, want, out, errOut)
		}
	}
}

// TestDLQTriage_TmuxSaysHeld: the console, in a real terminal
// (tmux, 80x24), says on its status line how many messages another reader
// held invisible when it read the dead-letter queue (fauxqs).
func TestDLQTriage_TmuxSaysHeld(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives the console in a real terminal; install it (make deps installs tmux)", err)
	}
	ctx := context.Background()
	run, p, conn := fauxqsQueues(t, "th", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	for i := range 2 {
		if err := p.Send(ctx, stamped(fmt.Sprintf("t%d-%s", i, run), dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	holdMessages(t, dlq, 1, 60*time.Second)
	exitFile := filepath.Join(t.TempDir(), "exit")
	command := fmt.Sprintf("%s dlq triage sqs://%s --to %s --visibility 30s %s; echo $? > %s", cmdtest.Bin(t), dlq, dest, strings.Join(conn, " "), exitFile)
	s := startTriage(t, run, command, []string{"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1"})
	s.AwaitText("1 more message held invisible by another reader")
	s.Keys(true, "q")
	s.AwaitExit(exitFile)
}

// holdMessages plays another reader of the shared fauxqs's queue: it
// receives n of its messages, each held invisible for visibility (whole
// seconds), and leaves them so.
func holdMessages(t *testing.T, queue string, n int, visibility time.Duration) {
	t.Helper()
	ctx := context.Background()
	c := sqs.NewClientsFromConfig(sqstest.Config(), cmdtest.SharedSQS(t).Endpoint)
	url, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for held := 0; held < n; {
		if time.Now().After(deadline) {
			t.Fatalf("another reader received %d of %d messages of %s in 30s", held, n, queue)
		}
		got, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: int32(min(n-held, 10)),
			VisibilityTimeout: int32(visibility / time.Second), WaitTimeSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		held += len(got.Messages)
	}
}
