package sqs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// The scale-out proof of leases (ADR 0005): two pumps on one queue, a
// deferring handler slower than half the visibility timeout, budget R. One
// pump is killed mid-run (from the broker's side as SIGKILL: every call of
// its process fails from that instant, so it settles, releases and extends
// nothing, and its messages return only when their leases lapse) and a
// fresh one is started in its place. Per message: at most R handler
// invocations in total (SQS counts the killed pump's receives, so even its
// cut-off invocations stay inside the budget), at least one dead-letter
// copy and exactly one except for the messages the killed pump was routing
// when it died (bounded by what one pump holds: noOfPerformers x bufferSize
// plus the one in its handler), and the source empty at the end.
func TestScaleOutTwoPumpsOneKilledAndRestarted_R4_R5(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, budget, bufferSize = 6, 3, 2
			c := testClients(t)
			q, dlq := uniq("scale-"+string(v)), uniq("scale-dlq-"+string(v))
			ch := ChannelOptions{Queue: q, DeadLetter: dlq}
			co := ConsumerOptions{BufferSize: bufferSize, VisibilityTimeout: sqsLease}

			var mu sync.Mutex
			calls := map[string]int{}
			handler := func(ctx context.Context, m *message.Message) pump.Result {
				mu.Lock()
				calls[m.Header.MessageID]++
				mu.Unlock()
				pumptest.SleepFor(ctx, sqsLease*11/20) // just over half the lease
				return pump.Result{Outcome: pump.Defer}
			}
			opts := pumptest.Options(v, bufferSize)
			opts.RequeueCount = budget

			// The victim's process: all its calls go through a client
			// that fails every request once it is killed.
			var killed atomic.Bool
			vc, _ := faultyClients(t, func(string, string) error {
				if killed.Load() {
					return errors.New("process killed")
				}
				return nil
			})
			survivor := pumptest.Start(t, setup(t, c, ch, co), opts, handler)
			victim := pumptest.Start(t, setup(t, vc, ch, co), opts, handler)
			for range msgs {
				send(t, c, ProducerOptions{}, newMessage(q))
			}
			pumptest.WaitUntil(t, 30*time.Second, "the victim handling a message", func() bool { return victim.Count(pump.EventDeferred) > 0 })
			killed.Store(true)
			victim.Stop(t) // its process is gone; nothing it does reaches SQS any more
			restarted := pumptest.Start(t, setup(t, c, ch, co), opts, handler)

			rejected := func() int {
				return survivor.Count(pump.EventRejected) + restarted.Count(pump.EventRejected) + victim.Count(pump.EventRejected)
			}
			pumptest.WaitUntil(t, 120*time.Second, "every message rejected", func() bool { return rejected() >= msgs })
			// Whatever the victim held comes back when its lease lapses:
			// wait for the queue to empty, then stop the pumps.
			pumptest.WaitUntil(t, 60*time.Second, "the source empty", func() bool { return depth(t, c, q) == 0 })
			survivor.Stop(t)
			restarted.Stop(t)

			mu.Lock()
			defer mu.Unlock()
			if len(calls) != msgs {
				t.Errorf("handled %d distinct messages, want %d", len(calls), msgs)
			}
			for id, n := range calls {
				if n > budget {
					t.Errorf("%s handled %d times in all, want at most %d (R-4)", id, n, budget)
				}
			}
			copies := map[string]int{}
			for _, m := range readAll(t, c, dlq) {
				copies[m.Header.MessageID]++
			}
			if len(copies) != msgs {
				t.Errorf("dead-letter queue holds %d distinct messages, want %d", len(copies), msgs)
			}
			extra := 0
			for _, n := range copies {
				extra += n - 1
			}
			if bound := bufferSize + 1; extra > bound {
				t.Errorf("%d extra dead-letter copies, want at most %d (what the killed pump held): %v", extra, bound, copies)
			}
			t.Logf("variant %s: invocations %v, dead-letter copies %v (%d duplicates after the kill)", v, calls, copies, extra)
		})
	}
}
