package sqs

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
)

// The emulator answers as AWS documents for a receipt handle superseded
// by a later receive: DeleteMessage succeeds and deletes nothing, so the
// stale-settle rows (R-4/lapse-redelivery, R-4/stale-settle) run against AWS's semantics on fauxqs,
// with no wrapper; a DeleteMessage with the newest receipt deletes. It
// uses the SDK alone, so an emulator upgrade that changes this is noticed
// here (docs/emulators.md#fauxqs-sqs-and-sns).
func TestStaleDeleteAnswersSuccessDeletesNothing(t *testing.T) {
	c := testClients(t)
	ctx := context.Background()
	q := uniq("stale-delete")
	out, err := c.SQS.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: &q, Attributes: map[string]string{"VisibilityTimeout": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	url := out.QueueUrl
	t.Cleanup(func() { _, _ = c.SQS.DeleteQueue(context.Background(), &awssqs.DeleteQueueInput{QueueUrl: url}) })
	if _, err := c.SQS.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	receive := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			r, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) == 1 {
				return aws.ToString(r.Messages[0].ReceiptHandle)
			}
		}
		t.Fatalf("%s: the message was not received within 20s", what)
		return ""
	}
	first := receive("first receive")
	second := receive("after the visibility timeout lapsed") // supersedes first
	if first == second {
		t.Fatal("the receipt handle did not change on the second receive")
	}
	if _, err := c.SQS.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: &first}); err != nil {
		t.Fatalf("DeleteMessage with the superseded receipt = %v, want success (as AWS answers)", err)
	}
	third := receive("after a delete with the superseded receipt: it deleted nothing")
	if _, err := c.SQS.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: &third}); err != nil {
		t.Fatalf("DeleteMessage with the newest receipt = %v", err)
	}
	r, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 0 {
		t.Error("the message is still there after a DeleteMessage with the newest receipt")
	}
}
