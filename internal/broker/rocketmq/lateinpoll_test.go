package rocketmq_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// The shape of the late-in-a-long-poll test: a message published lateLag
// into both replicas' long polls, while each waits up to lateAwait, and a
// handler that holds it for lateHolds invisible durations of lateLease.
// The pump's lease clock starts at the receive call's start, as the
// consumer's does, so the message is extended at once; counted from its
// arrival (lateLag later), the first extension would come lateLease/2
// after arrival, past the consumer's lease end (lateLease - lateLag after
// arrival), and the consumer would refuse it as a stale receipt.
const (
	lateLease = 5 * time.Second
	lateAwait = 10 * time.Second
	lateLag   = 3 * time.Second
	lateHolds = 3
)

// A message the broker hands out seconds into a long-poll receive keeps
// its lease: both lease clocks (the pump's and the consumer's receipt
// deadline) start at the receive call's start, so every extension reaches
// the broker (ChangeInvisibleDuration counted there) before the invisible
// duration runs out, and the message is delivered once and handled once
// by one of two replicas, though its handler outlives three invisible
// durations. Both variants.
func TestMessageArrivingLateInALongPollKeepsItsLease(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "t")
			opts := rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 1, InvisibleDuration: lateLease, AwaitDuration: lateAwait}
			// Both consumers are made (each starts its client) before
			// either pump, so that their first long polls begin together.
			cs := []*rocketmq.Consumer{e.consumer(opts), e.consumer(opts)}
			popts := pumptest.Options(v, 1)
			popts.TimeOut = lateAwait
			var mu sync.Mutex
			handled := map[string]int{}
			handler := func(ctx context.Context, m *message.Message) pump.Result {
				mu.Lock()
				handled[m.Header.MessageID]++
				mu.Unlock()
				pumptest.SleepFor(ctx, lateHolds*lateLease)
				return pump.Result{Outcome: pump.Ack}
			}
			polls := e.srv.Calls("ReceiveMessage")
			runs := []*pumptest.Run{pumptest.Start(t, cs[0], popts, handler), pumptest.Start(t, cs[1], popts, handler)}
			pumptest.WaitUntil(t, 10*time.Second, "both replicas in a long poll", func() bool { return e.srv.Calls("ReceiveMessage") >= polls+2 })
			polling := time.Now()
			open := e.srv.Calls("ReceiveMessage")
			time.Sleep(lateLag)
			// No poll began since both were seen open, and both are still
			// open (lateAwait is far longer than lateLag): the broker hands
			// the message to a poll at least lateLag old.
			if n := e.srv.Calls("ReceiveMessage"); n != open {
				t.Fatalf("a replica began another receive while waiting (%d receive calls, %d before): the message would not arrive late in a poll", n, open)
			}
			e.send("t", "late-1")
			lag := time.Since(polling)
			pumptest.WaitUntil(t, 60*time.Second, "the message acknowledged", func() bool {
				return runs[0].Count(pump.EventAcknowledged)+runs[1].Count(pump.EventAcknowledged) >= 1
			})
			pumptest.WaitUntil(t, 10*time.Second, "the group to hold nothing", func() bool { return e.srv.Pending("t", "g") == 0 })
			for _, r := range runs {
				r.Stop(t)
			}
			t.Logf("published %s into the long polls", lag.Round(time.Millisecond))
			if n := handled["late-1"]; n != 1 {
				t.Errorf("late-1 handled %d times by the two replicas, want once (R-4): its lease lapsed while its handler ran", n)
			}
			if n := e.srv.Delivered(); n != 1 {
				t.Errorf("the broker delivered %d times, want once: the lease lapsed", n)
			}
			extended, failed := 0, 0
			for _, r := range runs {
				extended += r.Count(pump.EventLeaseExtended)
				failed += r.Count(pump.EventLeaseExtendFailed)
			}
			if calls := e.srv.Calls("ChangeInvisibleDuration"); calls < lateHolds || extended < lateHolds {
				t.Errorf("the broker served %d ChangeInvisibleDuration calls and the pumps reported %d extensions, want at least %d each: the extensions did not reach the broker",
					calls, extended, lateHolds)
			}
			if failed != 0 {
				var why []string
				for _, r := range runs {
					for _, ev := range r.Of(pump.EventLeaseExtendFailed) {
						why = append(why, fmt.Sprint(ev.Err))
					}
				}
				t.Errorf("%d extensions failed, want none: %v", failed, why)
			}
		})
	}
}
