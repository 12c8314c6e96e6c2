package sqs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// redriveToSource moves one message from queue from to queue to as SQS's
// redrive to source (StartMessageMoveTask) does, which fauxqs does not
// offer: the same body and message attributes sent to the source, then
// deleted from the dead-letter queue. It returns the moved message.
func redriveToSource(t *testing.T, c *Clients, from, to string) types.Message {
	t.Helper()
	ctx := context.Background()
	sm := rawReceive(t, c, from)
	src, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(to)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: src.QueueUrl, MessageBody: sm.Body, MessageAttributes: sm.MessageAttributes}); err != nil {
		t.Fatalf("redrive to %s: %v", to, err)
	}
	dlq, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(from)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: dlq.QueueUrl, ReceiptHandle: sm.ReceiptHandle}); err != nil {
		t.Fatalf("delete from %s: %v", from, err)
	}
	return sm
}

// TestRedrivenCopyIsDeadLetteredAgain (fauxqs, both pump variants): a
// message dead-lettered to D and moved back to its source S as SQS's
// redrive to source moves it (its attributes, rejectionPath among them,
// kept) is dead-lettered to D again when rejected again, with its new
// rejection reason, not held as a rejection cycle: its path ends with D
// while it is read from S, which is not D as SQS resolves names (both
// names hold a '.', which SQS queue names spell '_'). Redriven twice;
// nothing else is sent and no cycle Error is logged (docs/adr/0004
// decision 12).
func TestRedrivenCopyIsDeadLetteredAgain(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			sink, logger := newSink()
			base := uniq("redrive")
			source, dead := base+".src", base+".dlq"
			k := setup(t, c, ChannelOptions{Queue: source, DeadLetter: dead},
				ConsumerOptions{BufferSize: 1, VisibilityTimeout: 30 * time.Second, Logger: logger})
			opts := pumptest.Options(v, 1)
			opts.Subscription = source
			var runs atomic.Int64
			run := pumptest.Start(t, k, opts, func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Reject, Reason: fmt.Sprintf("poison %d", runs.Add(1))}
			})
			defer run.Stop(t)
			m := newMessage(QueueName(source, false))
			send(t, c, ProducerOptions{}, m)
			dq := QueueName(dead, false)
			const redrives = 2
			for round := 0; ; round++ {
				pumptest.WaitUntil(t, 30*time.Second, fmt.Sprintf("dead-lettered %d times", round+1), func() bool {
					_, held := sink.find(slog.LevelError, broker.LogRoutingCycle)
					return held || depth(t, c, dq) == 1
				})
				if rec, held := sink.find(slog.LevelError, broker.LogRoutingCycle); held {
					t.Fatalf("the copy redriven %d times was held as a cycle: %v", round, rec.Attrs)
				}
				if round == redrives {
					break
				}
				sm := redriveToSource(t, c, dq, QueueName(source, false))
				got, err := Decode(sm, DecodeOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want := strings.TrimSuffix(strings.Repeat(dq+",", round+1), ",")
				if got.Header.MessageID != m.Header.MessageID || message.RejectionPath(got) != want ||
					got.Header.Bag[message.KeyRejectionMessage] != fmt.Sprintf("poison %d", round+1) {
					t.Fatalf("dead-lettered copy %d: id %s, rejectionPath %q, rejectionMessage %v; want %s, %q, poison %d",
						round+1, got.Header.MessageID, message.RejectionPath(got), got.Header.Bag[message.KeyRejectionMessage], m.Header.MessageID, want, round+1)
				}
			}
			got, err := Decode(rawReceive(t, c, dq), DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(strings.Repeat(dq+",", redrives+1), ",")
			// Its originalTopic names the source it was moved back to, not the
			// dead-letter queue whose topic the moved copy still carried.
			if message.RejectionPath(got) != want || got.Header.Bag[message.KeyRejectionMessage] != fmt.Sprintf("poison %d", redrives+1) ||
				got.Header.Bag[message.KeyRejectionReason] != message.ReasonDeliveryError.String() ||
				got.Header.Bag[message.KeyOriginalTopic] != m.Header.Topic {
				t.Errorf("copy dead-lettered after %d redrives: rejectionPath %q, bag %v; want %q, poison %d and originalTopic %s", redrives, message.RejectionPath(got), got.Header.Bag, want, redrives+1, m.Header.Topic)
			}
			if rec, held := sink.find(slog.LevelError, broker.LogRoutingCycle); held {
				t.Errorf("a redriven copy was held as a cycle: %v", rec.Attrs)
			}
			if n := depth(t, c, QueueName(source, false)); n != 0 {
				t.Errorf("%s holds %d messages, want none", source, n)
			}
		})
	}
}
