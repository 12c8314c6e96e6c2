package rocketmq_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// rmqLease is the invisible duration of the lease tests: short, so CI
// stays fast; handler times are fractions and multiples of it.
const rmqLease = 2 * time.Second

// copiesOn counts the messages stored on topic by Brighter message id.
func (e *env) copiesOn(topic string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, m := range e.srv.Messages(topic) {
		d, err := rocketmq.Decode(rocketmq.Wire{Topic: m.Topic, MessageID: m.MessageID, Tag: m.Tag, Keys: m.Keys, Properties: m.Properties, Body: m.Body}, time.Now())
		if err != nil {
			e.t.Errorf("copy on %s does not decode: %v", topic, err)
		}
		out[d.Header.MessageID]++
	}
	return out
}

// A deferring handler slower than half the invisible duration, messages
// waiting in the buffer: each message is handled exactly requeueCount
// times, dead-lettered once, and the group holds nothing of the source at
// the end (R-4, R-5: ChangeInvisibleDuration keeps the leases).
func TestLeaseExtendedWhileBufferedAndHandled_R4_R5(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, budget = 3, 3
			e := newEnv(t, "t", "t.DLQ")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: msgs, InvisibleDuration: rmqLease, DeadLetterTopic: "t.DLQ"})
			for i := range msgs {
				e.send("t", fmt.Sprintf("x-%d", i))
			}
			opts := pumptest.Options(v, msgs)
			opts.RequeueCount = budget
			r := pumptest.Start(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
				pumptest.SleepFor(ctx, rmqLease*11/20) // just over half the lease
				return pump.Result{Outcome: pump.Defer}
			})
			pumptest.WaitUntil(t, 90*time.Second, "every message rejected", func() bool { return r.Count(pump.EventRejected) >= msgs })
			r.Stop(t)
			pumptest.HandledEach(t, r, budget)
			copies := e.copiesOn("t.DLQ")
			pumptest.DeadLetteredOnce(t, "dead-letter topic", copies, msgs)
			if n := e.srv.Pending("t", "g"); n != 0 {
				t.Errorf("group g still holds %d messages of the source", n)
			}
			pumptest.LeasesExtendedAndSettled(t, r)
		})
	}
}

// An acknowledging handler slower than the whole invisible duration
// handles each message once (ADR 0005).
func TestAckHandlerSlowerThanInvisibleDurationHandlesOnce_R4(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 2
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: msgs, InvisibleDuration: rmqLease})
			for i := range msgs {
				e.send("t", fmt.Sprintf("a-%d", i))
			}
			r := pumptest.Start(t, c, pumptest.Options(v, msgs), func(ctx context.Context, m *message.Message) pump.Result {
				pumptest.SleepFor(ctx, rmqLease*5/4)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			pumptest.WaitUntil(t, 10*time.Second, "the group to hold nothing", func() bool { return e.srv.Pending("t", "g") == 0 })
			r.Stop(t)
			pumptest.HandledOnceEach(t, r, msgs)
		})
	}
}

// With handlers far shorter than half the invisible duration, lease
// management makes no ChangeInvisibleDuration call at all (NFR-1, NFR-3);
// the broker counts the calls it serves.
func TestNoChangeInvisibleDurationWhenHandlersShort_NFR3(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 30
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 10, InvisibleDuration: 10 * time.Second})
			for i := range msgs {
				e.send("t", fmt.Sprintf("s-%d", i))
			}
			r := pumptest.Start(t, c, pumptest.Options(v, 10), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			r.Stop(t)
			if n := e.srv.Calls("ChangeInvisibleDuration"); n != 0 {
				t.Errorf("ChangeInvisibleDuration calls = %d, want 0", n)
			}
			if e.srv.Calls("AckMessage") == 0 {
				t.Error("the broker counted no AckMessage: the counter does not see this consumer")
			}
		})
	}
}

// A ChangeInvisibleDuration that fails is logged at Error with the message
// id and the message is released to the broker, never lost: once the fault
// is gone it is delivered again and acknowledged, and the group holds
// nothing at the end (a fault in the lease extension loses nothing).
func TestFailedExtensionLoggedAndReleased(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 1, InvisibleDuration: rmqLease})
			injected := errors.New("extension refused")
			e.srv.FailChangeInvisibleDuration(func(string, string) error { return injected })
			e.send("t", "f-1")
			var first atomic.Bool
			r := pumptest.Start(t, c, pumptest.Options(v, 1), func(ctx context.Context, m *message.Message) pump.Result {
				if first.CompareAndSwap(false, true) {
					pumptest.SleepFor(ctx, rmqLease*3/2) // slower than the lease while every extension fails
				}
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 30*time.Second, "a failed extension", func() bool { return r.Count(pump.EventLeaseExtendFailed) > 0 })
			e.srv.FailChangeInvisibleDuration(nil)
			pumptest.WaitUntil(t, 60*time.Second, "the message acknowledged and gone", func() bool {
				return r.Count(pump.EventAcknowledged) > 0 && e.srv.Pending("t", "g") == 0
			})
			r.Stop(t)
			if n := r.Handled()["f-1"]; n < 1 {
				t.Errorf("f-1 handled %d times, want at least once", n)
			}
			pumptest.ExtendFailureLogged(t, r, "f-1")
		})
	}
}

// An extension of a message whose lease this consumer knows has lapsed is
// not sent and reports broker.ErrStaleReceipt (ADR 0005, decision 6).
func TestExtendAfterLapseIsStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "t")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", InvisibleDuration: 500 * time.Millisecond})
	e.send("t", "l-1")
	m := e.receiveOne(c, 10*time.Second)
	fresh := e.receiveOne(c, 10*time.Second) // delivered again: m's lease lapsed
	if err := c.ExtendLeases(e.ctx, []*message.Message{m}, time.Second)[0]; !errors.Is(err, broker.ErrStaleReceipt) {
		t.Fatalf("extending a lapsed lease = %v, want broker.ErrStaleReceipt", err)
	}
	if errs := c.ExtendLeases(e.ctx, []*message.Message{fresh}, rmqLease); errs[0] != nil {
		t.Fatalf("extending a current lease: %v", errs[0])
	}
	if err := c.Acknowledge(e.ctx, fresh); err != nil {
		t.Fatalf("acknowledge after an extension (new receipt handle): %v", err)
	}
}

// TestExtensionEconomy_AtMostTwoChangeInvisibleDurationCallsALease: messages
// held for a few invisible durations cost at most two ChangeInvisibleDuration
// calls a lease each (RocketMQ has no batch form), counted by the broker
// (NFR-3, ADR 0005). Both variants.
func TestExtensionEconomy_AtMostTwoChangeInvisibleDurationCallsALease(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 4
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: msgs, InvisibleDuration: rmqLease})
			for i := range msgs {
				e.send("t", fmt.Sprintf("x-%d", i))
			}
			calls := func() int64 { return int64(e.srv.Calls("ChangeInvisibleDuration")) }
			pumptest.ExtensionEconomy(t, v, c, msgs, rmqLease, rmqLease*5/4, calls, true)
		})
	}
}

// TestExtensionEconomyAtAnEconomicalLease: at a 10 s invisible
// duration (long enough for ADR 0005's economical schedule), messages held
// for 3.5 leases cost about one ChangeInvisibleDuration call a lease each
// (RocketMQ has no batch form), counted by the broker (NFR-3). Both
// variants.
func TestExtensionEconomyAtAnEconomicalLease(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 2, InvisibleDuration: pumptest.EconomicalLease})
			for i := range 2 {
				e.send("t", fmt.Sprintf("y-%d", i))
			}
			pumptest.ExtensionEconomyLong(t, v, c, func() int64 { return int64(e.srv.Calls("ChangeInvisibleDuration")) }, true)
		})
	}
}
