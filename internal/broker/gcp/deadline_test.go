package gcp

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestBlackHoledCallsEndAtTheirBound (pull): every call kind the
// pump makes on Pub/Sub has a deadline of its own, the configured one,
// asserted on the held call through a gRPC interceptor in front of Google's
// emulator: an acknowledge (the Proactor's batch form included) and a
// requeue (ModifyAckDeadline) at callTimeout, a lease extension
// (ModifyAckDeadline) at a quarter of the lease clamped to [1 s, 10 s], a
// Pull at timeOut plus PullGrace. The held call fails (settle-failed,
// extension failed); a Pull cut off at its deadline reads as nothing
// arrived once the probe that follows it is answered (a service may hold
// an idle Pull to its deadline), and the next Pull follows. Both variants.
func TestBlackHoledCallsEndAtTheirBound(t *testing.T) {
	t.Parallel()
	const callTimeout = 2500 * time.Millisecond
	cases := []struct {
		name, method string
		outcome      pump.Outcome
		hold         time.Duration // the handler's time
		event        pump.EventKind
		bound        time.Duration
	}{
		{"acknowledge", "Acknowledge", pump.Ack, 0, pump.EventSettleFailed, callTimeout},
		{"requeue", "ModifyAckDeadline", pump.Defer, 0, pump.EventSettleFailed, callTimeout},
		{"extend", "ModifyAckDeadline", pump.Ack, 3 * time.Second, pump.EventLeaseExtendFailed, time.Second},
		{"receive", "Pull", pump.Ack, 0, 0, time.Second + PullGrace},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: gcpLease})
				c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease})
				e.send(t, "orders", newMsg(fmt.Sprintf("bound-%s-%s", tc.name, v)))
				var hold atomic.Pointer[faultproxy.Hold]
				if tc.name == "receive" {
					hold.Store(e.faults.HoldCalls(tc.method))
				}
				events := pumptest.NewEvents()
				opts := pumptest.Options(v, 1)
				opts.CallTimeout = callTimeout
				pumptest.RunPump(t, c, func(ctx context.Context, _ *message.Message) pump.Result {
					if hold.Load() == nil {
						hold.Store(e.faults.HoldCalls(tc.method))
					}
					pumptest.SleepFor(ctx, tc.hold)
					return pump.Result{Outcome: tc.outcome}
				}, opts, events)
				if tc.event != 0 {
					events.Await(t, tc.event, 30*time.Second, nil)
				} else {
					// A second Pull held: the first ended.
					pumptest.WaitUntil(t, 30*time.Second, "a second Pull", func() bool { return len(hold.Load().Deadlines()) >= 2 })
				}
				e.faults.ReleaseCalls(tc.method)
				left := hold.Load().Deadlines()
				if len(left) == 0 {
					t.Fatalf("no %s call was held", tc.method)
				}
				for _, l := range left {
					if l <= 0 || l > tc.bound || l < tc.bound-time.Second {
						t.Errorf("%s arrived with %s left of its deadline, want %s (the configured bound)", tc.method, l.Round(time.Millisecond), tc.bound)
					}
				}
			})
		}
	}
}

// TestBlackHoledRejectionPublishEndsAtCallTimeout (pull): the
// routed copy's publish to the dead-letter topic is bounded by callTimeout.
// The Pub/Sub publisher makes the Publish RPC itself, under its own
// PublishSettings.Timeout, which consume sets to callTimeout
// (ProducerOptions.PublishTimeout); the Producer also waits for the result
// with the call's context (PublishResult.Get). A Publish held at the gRPC
// interceptor arrives with callTimeout as its deadline and ends the
// rejection at callTimeout: the message is released
// (left on the source, delivered again once the hold ends) and an Error
// with its id is logged. Both variants.
func TestBlackHoledRejectionPublishEndsAtCallTimeout(t *testing.T) {
	t.Parallel()
	const callTimeout = 2 * time.Second
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: gcpLease, DeadLetterTopic: "orders.DLQ"})
			// The routing producer as consume makes it: its Publish RPC
			// has callTimeout as its own deadline.
			p := NewProducer(e.client, ProducerOptions{EnableMessageOrdering: true, PublishTimeout: callTimeout})
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			c := NewPullConsumer(e.client, p, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease, DeadLetterTopic: "orders.DLQ", Logger: e.log})
			t.Cleanup(func() { _ = c.Close(context.Background()) })
			id := "bound-reject-" + string(v)
			e.send(t, "orders", newMsg(id))
			var calls atomic.Int32
			var rejectedAt atomic.Int64 // when the first handler call returned Reject
			hold := e.faults.HoldCalls("Publish")
			events := pumptest.NewEvents()
			opts := pumptest.Options(v, 1)
			opts.CallTimeout = callTimeout
			opts.RequeueCount = 3
			pumptest.RunPump(t, c, func(ctx context.Context, _ *message.Message) pump.Result {
				if calls.Add(1) == 1 {
					rejectedAt.Store(time.Now().UnixNano())
				}
				return pump.Result{Outcome: pump.Reject, Reason: "poison"}
			}, opts, events)
			ev := events.Await(t, pump.EventRejected, 30*time.Second, func(ev pump.Event) bool { return ev.Err != nil })
			took := ev.Time.Sub(time.Unix(0, rejectedAt.Load()))
			if took < callTimeout-200*time.Millisecond || took > callTimeout+3*time.Second {
				t.Errorf("the rejection with its Publish held ended after %s, want about %s (callTimeout)", took.Round(time.Millisecond), callTimeout)
			}
			left := hold.Deadlines()
			if len(left) == 0 {
				t.Fatal("no Publish call was held")
			}
			for _, l := range left {
				if l <= 0 || l > callTimeout || l < callTimeout-time.Second {
					t.Errorf("Publish arrived with %s left of its deadline, want %s (the configured bound)", l.Round(time.Millisecond), callTimeout)
				}
			}
			logged := false
			for _, rec := range e.logs.find(slog.LevelError, broker.LogRoutingFailed) {
				logged = logged || attr(rec, "message_id") == id
			}
			if !logged {
				t.Errorf("no Error %q with message_id %s", broker.LogRoutingFailed, id)
			}
			// Left on the source: once the hold ends, the message comes
			// back and its rejection reaches the dead-letter topic.
			e.faults.ReleaseCalls("Publish")
			// Delivered again, it is routed without a second handler run (a
			// handler's rejection is final).
			events.Await(t, pump.EventRejected, 30*time.Second, func(ev pump.Event) bool { return ev.Err == nil })
			if n := calls.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
		})
	}
}

// TestExtensionEconomy_AtMostTwoModifyAckDeadlineCallsALeasePerBatch (pull):
// messages held for a few ack deadlines cost at most two ModifyAckDeadline
// calls a lease per receive batch, counted through the interceptor (NFR-3, ADR
// 0005). Both variants.
func TestExtensionEconomy_AtMostTwoModifyAckDeadlineCallsALeasePerBatch(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 4
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: gcpLease})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: msgs, AckDeadline: gcpLease})
			for i := range msgs {
				e.send(t, "orders", newMsg(fmt.Sprintf("economy-%s-%d", v, i)))
			}
			calls := func() int64 { return e.faults.Calls("ModifyAckDeadline") }
			pumptest.ExtensionEconomy(t, v, c, msgs, gcpLease, gcpLease*5/4, calls, false)
		})
	}
}

// TestExtensionEconomyAtAnEconomicalLease (pull): at a 10 s ack
// deadline (Pub/Sub's shortest, long enough for ADR 0005's economical
// schedule), messages held for 3.5 leases cost about one ModifyAckDeadline
// call a lease per receive batch, counted through the interceptor (NFR-3).
// Both variants.
func TestExtensionEconomyAtAnEconomicalLease(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", AckDeadline: pumptest.EconomicalLease})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: 2, AckDeadline: pumptest.EconomicalLease})
			for i := range 2 {
				e.send(t, "orders", newMsg(fmt.Sprintf("economical-%s-%d", v, i)))
			}
			pumptest.ExtensionEconomyLong(t, v, c, func() int64 { return e.faults.Calls("ModifyAckDeadline") }, false)
		})
	}
}
