package sqs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// ChangeMessageVisibilityBatch keeps the leases).
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
// handles each message once (ADR 0005).
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
// silently.
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

// With visibilityTimeout 0 the consumer leaves the queue's own visibility
// timeout, and Resolve reads it so that the pump keeps leases of that
// length: an acknowledging handler slower than the queue's visibility
// timeout handles each message once, in both variants, with its lease
// extended: without lease management a second performer would handle
// the redelivered message at the same time.
func TestQueueOwnVisibilityTimeoutLeased(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 2
			c := testClients(t)
			q := uniq("lease-own-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q, VisibilityTimeout: sqsLease}, ConsumerOptions{BufferSize: msgs})
			if d := k.Lease(); d != 0 {
				t.Fatalf("lease %v before Resolve, want 0 (not read yet)", d)
			}
			if err := k.Resolve(t.Context()); err != nil {
				t.Fatal(err)
			}
			if d := k.Lease(); d != sqsLease {
				t.Fatalf("lease %v after Resolve, want the queue's own %v", d, sqsLease)
			}
			for range msgs {
				send(t, c, ProducerOptions{}, newMessage(q))
			}
			opts := pumptest.Options(v, msgs)
			opts.NoOfPerformers = 2 // a redelivery would be handled beside the first
			r := pumptest.Start(t, k, opts, func(ctx context.Context, m *message.Message) pump.Result {
				pumptest.SleepFor(ctx, sqsLease*3/2)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			r.Stop(t)
			pumptest.HandledOnceEach(t, r, msgs)
			if r.Count(pump.EventLeaseExtended) == 0 {
				t.Error("no lease extended with the queue's own visibility timeout")
			}
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
		})
	}
}

// When the queue's own visibility timeout cannot be read (the
// GetQueueAttributes fails), Resolve logs it at Warning naming the queue and
// still succeeds: the consumer works, its leases are not extended (Lease
// 0), and a later Resolve that can read it turns them on.
func TestQueueOwnVisibilityTimeoutUnread(t *testing.T) {
	var failing, urlFailing atomic.Bool
	failing.Store(true)
	urlFailing.Store(true)
	fc, _ := faultyClients(t, func(op, _ string) error {
		if op == "GetQueueAttributes" && failing.Load() {
			return errors.New("injected attributes fault")
		}
		if op == "GetQueueUrl" && urlFailing.Load() {
			return errors.New("injected lookup fault")
		}
		return nil
	})
	sink, logger := newSink()
	q := uniq("lease-unread")
	k := setup(t, fc, ChannelOptions{Queue: q, VisibilityTimeout: sqsLease}, ConsumerOptions{BufferSize: 1, Logger: logger})
	// The queue cannot even be looked up (a broker not answering yet):
	// Resolve returns that, and says the lease was not read.
	if err := k.Resolve(t.Context()); err == nil {
		t.Fatal("Resolve succeeded with every GetQueueUrl failing")
	}
	if rec, ok := sink.find(slog.LevelWarn, LogQueueLeaseUnread); !ok || !strings.Contains(rec.Attrs["error"], "injected lookup fault") {
		t.Fatalf("no Warning %q for the failed lookup: %+v", LogQueueLeaseUnread, rec)
	}
	urlFailing.Store(false)
	sink, logger = newSink()
	k = setup(t, fc, ChannelOptions{Queue: q, VisibilityTimeout: sqsLease}, ConsumerOptions{BufferSize: 1, Logger: logger})
	if err := k.Resolve(t.Context()); err != nil {
		t.Fatalf("Resolve: %v, want nil (the lease read is not a start-up failure)", err)
	}
	if d := k.Lease(); d != 0 {
		t.Fatalf("lease %v after a failed read, want 0", d)
	}
	rec, ok := sink.find(slog.LevelWarn, LogQueueLeaseUnread)
	if !ok || rec.Attrs["sqs_queue"] != q || !strings.Contains(rec.Attrs["error"], "injected attributes fault") {
		t.Fatalf("no Warning %q naming the queue and the error: %+v", LogQueueLeaseUnread, rec)
	}
	failing.Store(false)
	if err := k.Resolve(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := k.Lease(); d != sqsLease {
		t.Fatalf("lease %v after a read that worked, want %v", d, sqsLease)
	}
}

// TestExtensionEconomy_AtMostTwoChangeMessageVisibilityBatchCallsALeasePerBatch:
// messages held for a few visibility timeouts cost at most two
// ChangeMessageVisibilityBatch calls a lease per receive batch, counted on the
// wire (NFR-3, ADR 0005). Both variants.
func TestExtensionEconomy_AtMostTwoChangeMessageVisibilityBatchCallsALeasePerBatch(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 4
			k, calls := extensionCounted(t, "lease-economy-"+string(v), msgs, sqsLease)
			pumptest.ExtensionEconomy(t, v, k, msgs, sqsLease, sqsLease*5/4, calls, false)
		})
	}
}

// TestExtensionEconomyAtAnEconomicalLease: at a 10 s visibility
// timeout (long enough for ADR 0005's economical schedule), messages held
// for 3.5 leases cost about one ChangeMessageVisibilityBatch call a lease
// per receive batch, counted on the wire (NFR-3). Both variants.
func TestExtensionEconomyAtAnEconomicalLease(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			k, calls := extensionCounted(t, "lease-economical-"+string(v), 2, pumptest.EconomicalLease)
			pumptest.ExtensionEconomyLong(t, v, k, calls, false)
		})
	}
}

// extensionCounted makes a queue named from prefix holding msgs messages,
// and a consumer of it leasing them for lease whose
// ChangeMessageVisibility(Batch) calls are counted on the wire; it returns
// the consumer and the count's reader.
func extensionCounted(t *testing.T, prefix string, msgs int, lease time.Duration) (*Consumer, func() int64) {
	t.Helper()
	var calls atomic.Int64
	fc, _ := faultyClients(t, func(op, _ string) error {
		if strings.HasPrefix(op, "ChangeMessageVisibility") {
			calls.Add(1)
		}
		return nil
	})
	q := uniq(prefix)
	k := setup(t, fc, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: msgs, VisibilityTimeout: lease})
	for range msgs {
		send(t, testClients(t), ProducerOptions{}, newMessage(q))
	}
	return k, calls.Load
}
