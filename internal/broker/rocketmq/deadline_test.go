package rocketmq_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/faultproxy"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// clientRequestTimeout is the RocketMQ client's request timeout (its
// default; brighter does not change it): ChangeInvisibleDuration takes no
// context, so a requeue or a lease extension is bounded by it alone, and
// every call the client makes with a context by the shorter of the two.
const clientRequestTimeout = 3 * time.Second

// TestBlackHoledCallsEndAtTheirBound_Issue31: every call kind the pump makes
// on RocketMQ has a deadline of its own, asserted on the held call at the
// test broker (the client's deadline travels with the gRPC call): an
// acknowledge (AckMessage) and the dead-letter publish of a rejection
// (SendMessage) at callTimeout; a requeue and a lease extension
// (ChangeInvisibleDuration, which takes no context) at the client's
// request timeout. The held call fails (settle-failed, rejected with an
// error, extension failed). Both variants.
func TestBlackHoledCallsEndAtTheirBound_Issue31(t *testing.T) {
	t.Parallel()
	const callTimeout = 1500 * time.Millisecond
	cases := []struct {
		name, method string
		outcome      pump.Outcome
		hold         time.Duration // the handler's time
		event        pump.EventKind
		bound        time.Duration
	}{
		{"acknowledge", "AckMessage", pump.Ack, 0, pump.EventSettleFailed, callTimeout},
		{"reject", "SendMessage", pump.Reject, 0, pump.EventRejected, callTimeout},
		{"requeue", "ChangeInvisibleDuration", pump.Defer, 0, pump.EventSettleFailed, clientRequestTimeout},
		{"extend", "ChangeInvisibleDuration", pump.Ack, 3 * time.Second, pump.EventLeaseExtendFailed, clientRequestTimeout},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, "t", "t.DLQ")
				c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 1, InvisibleDuration: rmqLease, DeadLetterTopic: "t.DLQ"})
				e.send("t", fmt.Sprintf("bound-%s-%s", tc.name, v))
				var hold atomic.Pointer[faultproxy.Hold]
				events := pumptest.NewEvents()
				opts := pumptest.Options(v, 1)
				opts.CallTimeout = callTimeout
				opts.RequeueCount = 3
				pumptest.RunPump(t, c, func(ctx context.Context, _ *message.Message) pump.Result {
					if hold.Load() == nil {
						hold.Store(e.srv.HoldCalls(tc.method))
					}
					pumptest.SleepFor(ctx, tc.hold)
					return pump.Result{Outcome: tc.outcome, Reason: "poison"}
				}, opts, events)
				events.Await(t, tc.event, 30*time.Second, func(ev pump.Event) bool { return tc.event != pump.EventRejected || ev.Err != nil })
				e.srv.ReleaseCalls(tc.method)
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
