package sqs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker"
)

// TestReceiveFromADeletedQueueSaysWhatToDo: a queue deleted while
// consuming (fauxqs answers QueueDoesNotExist) fails the receive, not as
// a channel failure (the pump stops, consume exits 1), with an error that
// names the queue, says it does not exist and what to do: recreate it, or
// restart with makeChannels: create.
func TestReceiveFromADeletedQueueSaysWhatToDo(t *testing.T) {
	c := testClients(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q := uniq("deleted")
	out, err := c.SQS.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: &q})
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewConsumer(c, ConsumerOptions{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Receive(ctx, 0); err != nil {
		t.Fatalf("receive before the deletion: %v", err)
	}
	if _, err := c.SQS.DeleteQueue(ctx, &awssqs.DeleteQueueInput{QueueUrl: out.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	_, err = k.Receive(ctx, 0)
	t.Logf("receive: %v", err)
	if err == nil || errors.Is(err, broker.ErrChannelFailure) || !strings.Contains(err.Error(), "ReceiveMessage from "+q) || !strings.HasSuffix(err.Error(), QueueGoneFix) {
		t.Errorf("receive from the deleted queue = %v, want a failure (not a channel failure) naming %s and ending %q", err, q, QueueGoneFix)
	}
}
