package dlqtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// DeadLetterAgain runs, until the returned stop is called, a consumer of
// the SQS queue dest (on the shared fauxqs) that dead-letters every message
// it receives back to the queue dlq, stamped with a delivery-error rejection
// ("again"): what a consumer beside a replay or an edit does to a copy whose
// handler still fails. stop waits for the consumer to end.
func DeadLetterAgain(t *testing.T, dest, dlq string) (stop func()) {
	t.Helper()
	ctx := context.Background()
	c := sqs.NewClientsFromConfig(sqstest.Config(), cmdtest.SharedSQS(t).Endpoint)
	k, err := sqs.NewConsumer(c, sqs.ConsumerOptions{Queue: dest, BufferSize: 10, VisibilityTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	back := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	bctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for bctx.Err() == nil {
			ms, err := k.Receive(bctx, 200*time.Millisecond)
			if err != nil {
				continue
			}
			for _, m := range ms {
				if err := back.Send(ctx, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "again"}, time.Now())); err != nil {
					t.Errorf("dead-letter %s again: %v", m.Header.MessageID, err)
					return
				}
				_ = k.Acknowledge(ctx, m)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
