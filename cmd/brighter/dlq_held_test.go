package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
)

// TestDLQ_HeldByAnotherReaderIsSaid_Issue30: messages another reader holds
// invisible (a killed replay or archive) cannot be read, so peek, stats,
// replay and archive each say how many were held when they began, rather
// than let a short or empty result pass for the whole dead-letter queue;
// with nothing held they say nothing of it (fauxqs; the other reader is a
// receive with a 60 s visibility timeout).
func TestDLQ_HeldByAnotherReaderIsSaid_Issue30(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run, p, conn := fauxqsQueues(t, "hd", "dlq", "dest")
	dlq, dest := "dlq-"+run, "dest-"+run
	dir := t.TempDir()
	const note = "held invisible by another reader when this one began"
	peek := append([]string{"dlq", "peek", "sqs://" + dlq, "--wait", "1s"}, conn...)
	if code, out, errOut := brighterExit(t, dir, peek...); code != exitOK || strings.Contains(errOut, note) {
		t.Fatalf("peek of an empty queue nobody holds: exit %d, want %d and no held notice\n%s%s", code, exitOK, out, errOut)
	}
	for i := range 3 {
		if err := p.Send(ctx, stamped(fmt.Sprintf("h%d-%s", i, run), dest, dlq)); err != nil {
			t.Fatal(err)
		}
	}
	c := sqs.NewClientsFromConfig(sqstest.Config(), sharedSQS(t).Endpoint)
	url, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(dlq)})
	if err != nil {
		t.Fatal(err)
	}
	for held := 0; held < 2; {
		got, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: int32(2 - held), VisibilityTimeout: 60, WaitTimeSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		held += len(got.Messages)
	}
	want := "sqs://" + dlq + ": 2 more messages " + note
	for _, args := range [][]string{
		peek,
		append([]string{"dlq", "stats", "sqs://" + dlq, "--wait", "1s", "-o", "json"}, conn...),
		append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", filepath.Join(dir, "a.jsonl"), "--wait", "1s"}, conn...),
		append([]string{"dlq", "replay", "sqs://" + dlq, "--to", dest, "--wait", "1s"}, conn...), // nothing left to confirm
	} {
		code, out, errOut := brighterExit(t, dir, args...)
		if code != exitOK || !strings.Contains(errOut, want) {
			t.Errorf("brighter %s: exit %d, want %d and %q on stderr\nstdout:\n%s\nstderr:\n%s", strings.Join(args[:2], " "), code, exitOK, want, out, errOut)
		}
	}
}
