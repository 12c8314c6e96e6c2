package rocketmq_test

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
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
			at := pumptest.DeferredThenStopped(t, v, c, delay, 30*time.Second)
			after := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1"})
			m := e.receiveOne(after, delay+20*time.Second)
			// Measured as the Receive returns, up to its wait after the arrival.
			if back := time.Since(at); back < delay {
				t.Fatalf("the deferred message %s came back %s after its deferral, before its delay %s", m.Header.MessageID, back, delay)
			}
		})
	}
}
