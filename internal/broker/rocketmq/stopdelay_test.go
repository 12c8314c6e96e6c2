package rocketmq_test

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A graceful stop while a deferred message waits out its requeue delay
// leaves it invisible for the rest of the delay, in both variants: the
// deferral is one ChangeInvisibleDuration, and neither the pump's stop nor
// the consumer's Close touches it.
func TestStopDuringADeferralLeavesTheMessageAwayForItsDelay_R7(t *testing.T) {
	const delay = 4 * time.Second
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t, "orders")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", InvisibleDuration: time.Minute})
			e.send("orders", "held-1")
			deferred := make(chan time.Time, 4)
			p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
				deferred <- time.Now()
				return pump.Result{Outcome: pump.Defer}
			}, pump.Options{Subscription: "held", Variant: v, BufferSize: 1, TimeOut: time.Second, RequeueCount: 3, RequeueDelay: delay,
				DrainTimeout: time.Second, EmptyChannelDelay: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			var at time.Time
			select {
			case at = <-deferred:
			case <-time.After(30 * time.Second):
				cancel()
				t.Fatal("the message was never handled")
			}
			time.Sleep(500 * time.Millisecond) // the deferral's invisible duration set
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run = %v", err)
			}
			if err := c.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			after := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1"})
			m := e.receiveOne(after, delay+20*time.Second)
			// Measured as the Receive returns, up to its wait after the arrival.
			if back := time.Since(at); back < delay {
				t.Fatalf("the deferred message %s came back %s after its deferral, before its delay %s", m.Header.MessageID, back, delay)
			}
		})
	}
}
