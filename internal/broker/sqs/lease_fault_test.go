package sqs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A ChangeMessageVisibilityBatch that fails (an HTTP fault before it reaches
// the emulator) is logged at Error with the message id and the message is
// released to the broker, never lost: once the fault is gone it is
// received again and acknowledged, and the queue ends empty (a fault in
// the lease extension loses nothing).
func TestFailedExtensionLoggedAndReleased(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			var failing atomic.Bool
			failing.Store(true)
			fc, _ := faultyClients(t, func(op, _ string) error {
				if op == "ChangeMessageVisibilityBatch" && failing.Load() {
					return errors.New("injected extension fault")
				}
				return nil
			})
			c := testClients(t)
			q := uniq("lease-fault-" + string(v))
			k := setup(t, fc, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: sqsLease})
			m := newMessage(q)
			send(t, c, ProducerOptions{}, m)
			var first atomic.Bool
			r := pumptest.Start(t, k, pumptest.Options(v, 1), func(ctx context.Context, _ *message.Message) pump.Result {
				if first.CompareAndSwap(false, true) {
					pumptest.SleepFor(ctx, sqsLease*3/2) // slower than the lease while every extension fails
				}
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 30*time.Second, "a failed extension", func() bool { return r.Count(pump.EventLeaseExtendFailed) > 0 })
			failing.Store(false)
			pumptest.WaitUntil(t, 60*time.Second, "the message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) > 0 })
			// The first handler's delete may have used a receipt SQS had
			// already replaced; whatever came back must be handled and
			// acknowledged too before the queue is read.
			pumptest.WaitUntil(t, 60*time.Second, "every handling settled", func() bool {
				return r.Count(pump.EventAcknowledged)+r.Count(pump.EventSettleFailed) >= r.Handled()[m.Header.MessageID]
			})
			r.Stop(t)
			pumptest.ExtendFailureLogged(t, r, m.Header.MessageID)
			if n := depth(t, c, q); n != 0 {
				t.Errorf("queue still holds %d messages (visible, in flight or delayed)", n)
			}
		})
	}
}
