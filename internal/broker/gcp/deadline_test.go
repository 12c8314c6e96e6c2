package gcp

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// TestBlackHoledCallsEndAtTheirBound_Issue31 (pull): every call kind the
// pump makes on Pub/Sub has a deadline of its own, the configured one,
// asserted on the held call through a gRPC interceptor in front of Google's
// emulator: an acknowledge (the Proactor's batch form included) and a
// requeue (ModifyAckDeadline) at callTimeout, a lease extension
// (ModifyAckDeadline) at a quarter of the lease clamped to [1 s, 10 s], a
// Pull at timeOut plus PullGrace. The held call fails (settle-failed,
// extension failed); a Pull cut off at its deadline reads as nothing
// arrived (the service answers an empty pull late, too), and the next Pull
// follows. Both variants.
func TestBlackHoledCallsEndAtTheirBound_Issue31(t *testing.T) {
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

// TestExtensionEconomy_Issue31 (pull): messages held for a few ack
// deadlines cost at most two ModifyAckDeadline calls a lease per receive
// batch, counted through the interceptor (NFR-3, ADR 0005). Both variants.
func TestExtensionEconomy_Issue31(t *testing.T) {
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
