package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// sqsLease is the visibility timeout of the lease tests: short, so CI stays
// fast; handler times are multiples of it.
const sqsLease = 2 * time.Second

// readAll receives everything visible on the queue with a fresh consumer.
func readAll(t *testing.T, c *Clients, queue string) []*message.Message {
	t.Helper()
	k, err := NewConsumer(c, ConsumerOptions{Queue: queue, BufferSize: 10, VisibilityTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var out []*message.Message
	for {
		ms, err := k.Receive(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			return out
		}
		out = append(out, ms...)
	}
}

// A deferring handler slower than half the visibility timeout, with
// messages waiting in the receive-ahead buffer: each message is handled
// exactly requeueCount times, dead-lettered once, and the source ends empty
// (R-4, R-5, issue 12: ChangeMessageVisibilityBatch keeps the leases).
func TestLeaseExtendedWhileBufferedAndHandled_R4_R5(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, budget = 3, 3
			c := testClients(t)
			q, dlq := uniq("lease-"+string(v)), uniq("lease-dlq-"+string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{BufferSize: msgs, VisibilityTimeout: sqsLease})
			for range msgs {
				send(t, c, ProducerOptions{}, newMessage(q))
			}
			opts := pumptest.Options(v, msgs)
			opts.RequeueCount = budget
			r := pumptest.Start(t, k, opts, func(ctx context.Context, m *message.Message) pump.Result {
				pumptest.SleepFor(ctx, sqsLease*11/20) // just over half the lease
				return pump.Result{Outcome: pump.Defer}
			})
			pumptest.WaitUntil(t, 90*time.Second, "every message rejected", func() bool { return r.Count(pump.EventRejected) >= msgs })
			r.Stop(t)
			pumptest.HandledEach(t, r, budget)
			copies := map[string]int{}
			for _, m := range readAll(t, c, dlq) {
				copies[m.Header.MessageID]++
			}
			pumptest.DeadLetteredOnce(t, "dead-letter queue", copies, msgs)
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
			pumptest.LeasesExtendedAndSettled(t, r)
		})
	}
}

// An acknowledging handler slower than the whole visibility timeout
// handles each message once (issue 12).
func TestAckHandlerSlowerThanVisibilityHandlesOnce_R4(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 2
			c := testClients(t)
			q := uniq("lease-ack-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: msgs, VisibilityTimeout: sqsLease})
			for range msgs {
				send(t, c, ProducerOptions{}, newMessage(q))
			}
			r := pumptest.Start(t, k, pumptest.Options(v, msgs), func(ctx context.Context, m *message.Message) pump.Result {
				pumptest.SleepFor(ctx, sqsLease*5/4)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			r.Stop(t)
			pumptest.HandledOnceEach(t, r, msgs)
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
		})
	}
}

// With handlers far shorter than half the visibility timeout, lease
// management makes no ChangeMessageVisibility call at all (NFR-1, NFR-3):
// the calls are counted on the wire.
func TestNoVisibilityCallWhenHandlersShort_NFR3(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 30
			var visibilityCalls atomic.Int64
			fc, _ := faultyClients(t, func(op, _ string) error {
				if strings.HasPrefix(op, "ChangeMessageVisibility") {
					visibilityCalls.Add(1)
				}
				return nil
			})
			c := testClients(t)
			q := uniq("lease-short-" + string(v))
			k := setup(t, fc, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: 10, VisibilityTimeout: 10 * time.Second})
			for range msgs {
				send(t, c, ProducerOptions{}, newMessage(q))
			}
			r := pumptest.Start(t, k, pumptest.Options(v, 10), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			r.Stop(t)
			if n := visibilityCalls.Load(); n != 0 {
				t.Errorf("ChangeMessageVisibility calls = %d, want 0", n)
			}
		})
	}
}

// A settle made with a receipt SQS no longer holds (the lease lapsed with
// extension off, and the message was received again) is logged at Warn
// with the message id and reported as broker.ErrStaleReceipt, not lost
// silently (issue 12).
func TestStaleSettleLoggedAtWarn(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("lease-stale-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: time.Second})
			m := newMessage(q)
			send(t, c, ProducerOptions{}, m)
			thief, err := NewConsumer(c, ConsumerOptions{Queue: q, VisibilityTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			opts := pumptest.Options(v, 1)
			opts.MaxLeaseExtension = -1 // off: the lease lapses under the handler
			var stolen atomic.Bool
			r := pumptest.Start(t, k, opts, func(ctx context.Context, got *message.Message) pump.Result {
				if stolen.Load() {
					return pump.Result{Outcome: pump.Ack}
				}
				// Another consumer takes the message once its lease lapsed.
				deadline := time.Now().Add(20 * time.Second)
				for time.Now().Before(deadline) {
					ms, err := thief.Receive(ctx, time.Second)
					if err == nil && len(ms) == 1 {
						stolen.Store(true)
						break
					}
				}
				return pump.Result{Outcome: pump.Defer}
			})
			pumptest.WaitUntil(t, 30*time.Second, "a failed settle", func() bool { return r.Count(pump.EventSettleFailed) > 0 })
			r.Stop(t)
			if !stolen.Load() {
				t.Fatal("the second consumer never received the message")
			}
			fails := r.Of(pump.EventSettleFailed)
			if !errors.Is(fails[0].Err, broker.ErrStaleReceipt) {
				t.Errorf("settle error %v does not wrap broker.ErrStaleReceipt", fails[0].Err)
			}
			logs := r.LogText()
			want := fmt.Sprintf(`"level":"WARN","msg":%q`, pump.LogStaleSettle)
			if !strings.Contains(logs, want) || !strings.Contains(logs, m.Header.MessageID) {
				t.Errorf("log lacks a WARN %q naming %s:\n%s", pump.LogStaleSettle, m.Header.MessageID, logs)
			}
		})
	}
}
