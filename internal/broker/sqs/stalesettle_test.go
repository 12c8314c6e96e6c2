package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// With lease extension off, one performer, bufferSize 1 and an
// acknowledging handler that takes two and a half visibility timeouts,
// the message is handled once in both variants and every acknowledgement
// sent with a receipt whose lease had lapsed is reported as a stale
// settle, never counted as acknowledged; nothing is dead-lettered.
func TestStaleAcknowledgementReportedNotCounted_ExtensionOff(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("stale-ack-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: 2 * time.Second})
			m := newMessage(q)
			send(t, c, ProducerOptions{}, m)
			opts := pumptest.Options(v, 1)
			opts.MaxLeaseExtension = -1
			opts.RequeueCount = 3
			var mu sync.Mutex
			var runs []int
			r := pumptest.Start(t, k, opts, func(ctx context.Context, m *message.Message) pump.Result {
				mu.Lock()
				runs = append(runs, m.DeliveryAttempt)
				mu.Unlock()
				pumptest.SleepFor(ctx, 5*time.Second)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 30*time.Second, "an acknowledgement reported as stale", func() bool { return lapsedAcks(r.Of(pump.EventStaleSettle)) > 0 })
			time.Sleep(8 * time.Second) // a later delivery would be back within a lease and a long poll
			r.Stop(t)
			mu.Lock()
			got := append([]int(nil), runs...)
			mu.Unlock()
			if len(got) != 1 {
				t.Errorf("handler ran for deliveries %v, want once", got)
			}
			if n := r.Count(pump.EventAcknowledged); n > 1 {
				t.Errorf("acknowledged = %d, want at most 1 (the later delivery's own, live receipt)", n)
			}
			if n := r.Count(pump.EventRejected); n != 0 {
				t.Errorf("rejected %d times, want never: the handler acknowledged it", n)
			}
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
			logs := r.LogText()
			want := fmt.Sprintf(`"level":"WARN","msg":%q`, pump.LogLapsedSettle)
			if !strings.Contains(logs, want) || !strings.Contains(logs, m.Header.MessageID) {
				t.Errorf("log lacks a WARN %q naming %s:\n%s", pump.LogLapsedSettle, m.Header.MessageID, logs)
			}
		})
	}
}

// lapsedAcks counts the acknowledgements reported as stale because their
// receipt had lapsed by the pump's lease clock.
func lapsedAcks(es []pump.Event) int {
	n := 0
	for _, e := range es {
		if e.EndsFlight && e.Outcome == pump.Ack && errors.Is(e.Err, pump.ErrLapsedReceipt) {
			n++
		}
	}
	return n
}

// An acknowledgement begun well inside its lease whose DeleteMessageBatch
// reaches the queue only after the visibility timeout (a slow network, a
// retried call) may remove nothing: the queue had handed the message out
// again, and answers the stale receipt's delete with success. With the
// first delete held back past the lease, in both variants, the handler
// runs once; that acknowledgement is reported as a stale settle, never
// counted, and the later delivery is acknowledged without the handler and
// counted once; the queue ends empty.
func TestAcknowledgementAnsweredAfterLapseReportedStale(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const visibility = 2 * time.Second
			var held atomic.Bool
			c, _ := faultyClients(t, func(op, _ string) error {
				if (op == "DeleteMessageBatch" || op == "DeleteMessage") && held.CompareAndSwap(false, true) {
					time.Sleep(visibility + 2*time.Second) // sent once the queue has handed the message out again
				}
				return nil
			})
			q := uniq("late-answer-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: visibility})
			m := newMessage(q)
			send(t, testClients(t), ProducerOptions{}, m)
			opts := pumptest.Options(v, 1)
			opts.RequeueCount = 3
			opts.CallTimeout = 4 * visibility
			var runs atomic.Int32
			r := pumptest.Start(t, k, opts, func(context.Context, *message.Message) pump.Result {
				runs.Add(1)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 30*time.Second, "an acknowledgement reported as stale", func() bool { return lapsedAcks(r.Of(pump.EventStaleSettle)) > 0 })
			pumptest.WaitUntil(t, 30*time.Second, "the later delivery acknowledged", func() bool { return r.Count(pump.EventAcknowledged) > 0 })
			r.Stop(t)
			if left := readAll(t, testClients(t), q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want once", n)
			}
			if n := r.Count(pump.EventAcknowledged); n != 1 {
				t.Errorf("acknowledged = %d, want 1 (the later delivery's, with its live receipt)", n)
			}
			if !held.Load() {
				t.Error("no delete was held back: the test proved nothing")
			}
		})
	}
}

// Two consumers of one queue whose handler (acknowledging, slower than
// the lease) outlives the lease even extended (maxLeaseExtension caps it):
// each consumer's acknowledgement is sent with a lapsed receipt and
// reported as stale, and when the message comes back to a consumer whose
// handler acknowledged it, that consumer acknowledges the delivery without
// running the handler again and without judging its budget (a Proactor
// may instead receive it while its handler runs, and acknowledge with
// that delivery's receipt). The handler runs at most once per consumer,
// the message is never dead-lettered though its delivery count passes
// requeueCount, and the queue ends empty; both variants.
func TestStaleAcknowledgementNeverRunsTheHandlerAgainInItsProcess(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("stale-two-" + string(v))
			ch := ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}
			co := ConsumerOptions{BufferSize: 1, VisibilityTimeout: 2 * time.Second}
			m := newMessage(q)
			opts := pumptest.Options(v, 1)
			opts.RequeueCount = 1 // the second delivery would reach it, were it judged
			opts.MaxLeaseExtension = time.Second
			runs := map[string]int{} // consumer -> handler runs
			var mu sync.Mutex
			var running atomic.Int32
			handler := func(name string) pump.Handler {
				return func(ctx context.Context, _ *message.Message) pump.Result {
					running.Add(1)
					defer running.Add(-1)
					mu.Lock()
					runs[name]++
					mu.Unlock()
					pumptest.SleepFor(ctx, 5*time.Second) // past the lease and its capped extension
					return pump.Result{Outcome: pump.Ack}
				}
			}
			a := pumptest.Start(t, setup(t, c, ch, co), opts, handler("a"))
			send(t, c, ProducerOptions{}, m)
			b := pumptest.Start(t, setup(t, c, ch, co), opts, handler("b"))
			t.Cleanup(func() {
				if t.Failed() {
					for name, r := range map[string]*pumptest.Run{"a": a, "b": b} {
						for _, e := range r.Snapshot() {
							t.Logf("%s: %s count=%d retry=%v err=%v", name, e.Kind, e.DeliveryCount, e.Retry, e.Err)
						}
					}
				}
			})
			// The message goes with an acknowledgement made with a live
			// receipt: a later delivery acknowledged without a handler run
			// (the Reactor), or one the Proactor received while its
			// handler ran, whose receipt the handler's acknowledgement
			// used.
			pumptest.WaitUntil(t, 60*time.Second, "an acknowledgement with a live receipt", func() bool {
				return a.Count(pump.EventAcknowledged)+b.Count(pump.EventAcknowledged) > 0
			})
			pumptest.WaitUntil(t, 30*time.Second, "no handler running", func() bool { return running.Load() == 0 })
			a.Stop(t)
			b.Stop(t)
			mu.Lock()
			got := map[string]int{"a": runs["a"], "b": runs["b"]}
			mu.Unlock()
			if got["a"] > 1 || got["b"] > 1 {
				t.Errorf("handler runs per consumer %v, want at most one each: a consumer whose handler acknowledged the message ran it again", got)
			}
			if n := a.Count(pump.EventRejected) + b.Count(pump.EventRejected); n != 0 {
				t.Errorf("rejected %d times, want never: every handler run acknowledged it", n)
			}
			if left := readAll(t, c, q+"-dlq"); len(left) != 0 {
				t.Errorf("the dead-letter queue holds %d messages, want none", len(left))
			}
			if left := readAll(t, c, q); len(left) != 0 {
				t.Errorf("source still holds %d messages", len(left))
			}
		})
	}
}

// A stop on fauxqs whose buffer holds, unstarted, a message that arrived
// with its budget spent by handlers (a stamped count at requeueCount)
// routes it to the dead-letter queue with its rejection metadata instead
// of releasing it: released, its next receive could pass a native redrive
// limit and reach SQS's own dead-letter queue without a reason. The message
// whose handler the stop cut off is released to the source; both variants.
func TestStopRoutesABufferedMessageWhoseBudgetIsSpent(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q := uniq("stop-spent-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}, ConsumerOptions{BufferSize: 2, VisibilityTimeout: 30 * time.Second})
			slow := newMessage(q)
			spent := newMessage(q)
			spent.Header.HandledCount = 3
			send(t, c, ProducerOptions{}, slow)
			send(t, c, ProducerOptions{}, spent)
			opts := pumptest.Options(v, 2)
			opts.RequeueCount = 3
			opts.DrainTimeout = 200 * time.Millisecond
			started := make(chan string, 2)
			r := pumptest.Start(t, k, opts, func(ctx context.Context, m *message.Message) pump.Result {
				started <- m.Header.MessageID
				<-ctx.Done() // held until the stop cuts it off
				return pump.Result{Outcome: pump.Defer}
			})
			var first string
			select {
			case first = <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("no handler started")
			}
			if first != slow.Header.MessageID {
				t.Fatalf("the handler started on %s first, want %s (the spent message waits behind it)", first, slow.Header.MessageID)
			}
			r.Stop(t)
			dl := readAll(t, c, q+"-dlq")
			if len(dl) != 1 || dl[0].Header.MessageID != spent.Header.MessageID || !dl[0].HasRejectionMetadata() {
				t.Fatalf("dead-letter queue holds %d messages (%v), want the spent one with its rejection metadata", len(dl), dl)
			}
			left := readAll(t, c, q)
			if len(left) != 1 || left[0].Header.MessageID != slow.Header.MessageID {
				t.Errorf("source holds %v, want only the cut-off message, released", left)
			}
			select {
			case id := <-started:
				t.Errorf("a handler ran on %s too; the spent message must be routed without one", id)
			default:
			}
		})
	}
}
