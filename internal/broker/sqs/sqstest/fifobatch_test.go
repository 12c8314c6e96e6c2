package sqstest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
)

// Through the FIFOBatcher a FIFO receive returns several messages
// of one group, in order, with their receive counts, as AWS does (stock
// fauxqs returns one per group); while they are in flight the group gives
// nothing more; released, the group comes back from its head.
func TestFIFOBatcherReturnsSeveralOfAGroupInOrder(t *testing.T) {
	emu, err := sqstest.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	b, err := sqstest.StartFIFOBatcher(emu.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	c := sqs.NewFromConfig(sqstest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(b.Endpoint()) })
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("batch.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(fmt.Sprint(i)), MessageGroupId: aws.String("g")}); err != nil {
			t.Fatal(err)
		}
	}
	receive := func() []types.Message {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Messages
	}
	ms := receive()
	if len(ms) != 3 {
		t.Fatalf("%d messages of group g in one receive, want 3", len(ms))
	}
	for i, m := range ms {
		if aws.ToString(m.Body) != fmt.Sprint(i) || m.Attributes["ApproximateReceiveCount"] != "1" || m.Attributes["MessageGroupId"] != "g" {
			t.Errorf("message %d: body %s, attributes %v; want body %d, count 1, group g", i, aws.ToString(m.Body), m.Attributes, i)
		}
	}
	if again := receive(); len(again) != 0 {
		t.Fatalf("%d messages while the group is in flight, want 0", len(again))
	}
	for _, m := range ms {
		if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}
	}
	back := receive()
	if len(back) != 3 || aws.ToString(back[0].Body) != "0" || back[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after the release: %d messages, first %v; want the 3 again from the head, count 2", len(back), back)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: ms[0].ReceiptHandle}); err != nil {
		t.Fatal(err) // a stale receipt: success, nothing deleted
	}
	for _, m := range back {
		if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	if left := receive(); len(left) != 0 {
		t.Fatalf("%d messages left after deleting all", len(left))
	}
}
