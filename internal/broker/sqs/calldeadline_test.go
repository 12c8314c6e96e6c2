package sqs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
)

// TestCallWithoutDeadlineGetsDefaultCallDeadline: an SQS call made with a
// context that has no deadline (dlq, send, lint --live, channel making)
// reaches the wire with DefaultCallDeadline of its own, a ReceiveMessage
// with its long-poll wait on top; a call whose context has a deadline keeps
// that one. A host that never answers is given up on at that bound, not
// after the SDK's attempts of its response-header timeout (fauxqs behind
// an HTTP client that holds the calls; the deadline each arrived with is
// recorded, so the test need not wait it out).
func TestCallWithoutDeadlineGetsDefaultCallDeadline(t *testing.T) {
	t.Parallel()
	const slack = 2 * time.Second
	cases := []struct {
		name     string
		op       string
		call     func(ctx context.Context, c *Clients) error
		deadline time.Duration // the caller's; 0 for none
		want     time.Duration
	}{
		{"GetQueueUrl", "GetQueueUrl", func(ctx context.Context, c *Clients) error {
			_, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("held")})
			return err
		}, 0, DefaultCallDeadline},
		{"ReceiveMessage", "ReceiveMessage", func(ctx context.Context, c *Clients) error {
			_, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(endpoint + "/000000000000/held"), WaitTimeSeconds: 5})
			return err
		}, 0, DefaultCallDeadline + 5*time.Second},
		{"caller's deadline", "GetQueueUrl", func(ctx context.Context, c *Clients) error {
			_, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("held")})
			return err
		}, 4 * time.Second, 4 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, hole := blackHoled(t, tc.op)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.deadline > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tc.deadline)
			}
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, c) }()
			for hole.held.Load() == 0 {
				select {
				case err := <-done:
					t.Fatalf("%s ended before it was held: %v", tc.op, err)
				case <-time.After(10 * time.Millisecond):
				}
			}
			cancel() // the held call has recorded its deadline: end it now
			<-done
			hole.mu.Lock()
			defer hole.mu.Unlock()
			left := hole.deadlines[tc.op]
			if len(left) != 1 || left[0] <= 0 || left[0] > tc.want || left[0] < tc.want-slack {
				t.Errorf("%s arrived with %v left of its deadline, want about %s", tc.op, left, tc.want)
			}
		})
	}
}

// TestRefusedConnectionNamesTheEndpoint: an SQS call to an endpoint where
// nothing listens (127.0.0.1:1 refuses every connection) fails at once with
// an error naming the endpoint and saying it refused the connection, so the
// one line an operator reads says where, not only the SDK's words.
func TestRefusedConnectionNamesTheEndpoint(t *testing.T) {
	t.Parallel()
	cfg := sqstest.Config()
	cfg.RetryMaxAttempts = 1
	c := NewClientsFromConfig(cfg, "http://127.0.0.1:1")
	start := time.Now()
	_, err := c.SQS.GetQueueUrl(context.Background(), &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	if err == nil || !strings.Contains(err.Error(), "SQS at http://127.0.0.1:1 refused the connection") {
		t.Errorf("GetQueueUrl at a refusing endpoint = %v, want it named as refusing the connection", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("GetQueueUrl at a refusing endpoint took %s, want at once", took.Round(time.Millisecond))
	}
}
