package sqs

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/message"
)

// A consumer given its queue's URL (what makeChannels validate or create
// just looked up) makes no GetQueueUrl of its own: Resolve, a receive and
// an acknowledgement go straight to that URL, so consume's start-up looks
// its queue up once, not twice. Without the URL it looks the queue up once
// (Resolve), as before.
func TestConsumerGivenQueueURLLooksNothingUp(t *testing.T) {
	t.Parallel()
	for _, given := range []bool{true, false} {
		name := "looked-up"
		if given {
			name = "given"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := uniq("queue-url-" + name)
			cm := NewChannelMaker(testClients(t), ChannelOptions{Queue: q, MakeChannels: broker.MakeCreate, VisibilityTimeout: 30 * time.Second})
			if err := cm.EnsureChannels(context.Background()); err != nil {
				t.Fatalf("make channels: %v", err)
			}
			if cm.Result.QueueURL == "" {
				t.Fatal("makeChannels create left Result.QueueURL empty")
			}
			m := newMessage(q)
			send(t, testClients(t), ProducerOptions{}, m)
			rec := &recordedCalls{}
			c := NewCountedClientsFromConfig(sqstest.Config(), endpoint, rec)
			opts := ConsumerOptions{Queue: q, VisibilityTimeout: 30 * time.Second}
			if given {
				opts.QueueURL = cm.Result.QueueURL
			}
			k, err := NewConsumer(c, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Resolve(context.Background()); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			got := receiveOne(t, k, 10*time.Second)
			if got.Header.MessageID != m.Header.MessageID {
				t.Fatalf("received %s, want %s", got.Header.MessageID, m.Header.MessageID)
			}
			if errs := k.AcknowledgeBatch(context.Background(), []*message.Message{got}); errs[0] != nil {
				t.Fatalf("acknowledge: %v", errs[0])
			}
			want := 1
			if given {
				want = 0
			}
			if n := rec.byOperation()["GetQueueUrl"]; n != want {
				t.Errorf("GetQueueUrl called %d times (calls %v), want %d", n, rec.byOperation(), want)
			}
			if d := depth(t, testClients(t), q); d != 0 {
				t.Errorf("queue holds %d messages after the acknowledgement, want 0", d)
			}
		})
	}
}
