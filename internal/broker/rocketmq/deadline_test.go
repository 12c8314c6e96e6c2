package rocketmq_test

import (
	"cmp"
	"context"
	"errors"
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
// context, so the call on the wire carries this deadline, and the consumer
// stops waiting for it at the call's own deadline (ErrCallAbandoned); every
// call the client makes with a context carries the shorter of the two.
const clientRequestTimeout = 3 * time.Second

// TestBlackHoledCallsEndAtTheirBound: every call kind the pump makes
// on RocketMQ has a deadline of its own, asserted on the held call at the
// test broker (the client's deadline travels with the gRPC call) and on
// how long the pump waited for it: an acknowledge (AckMessage) and the
// dead-letter publish of a rejection (SendMessage) at callTimeout; a
// requeue at callTimeout and a lease extension at the extension call's
// deadline (a quarter of the lease, at least 1 s), though their
// ChangeInvisibleDuration takes no context and carries the client's request
// timeout on the wire; a receive (ReceiveMessage) at the await duration plus
// the client's request timeout, after which the next receive follows. The
// held call fails (settle-failed, rejected with an error, extension
// failed). Both variants.
func TestBlackHoledCallsEndAtTheirBound(t *testing.T) {
	t.Parallel()
	const callTimeout = 1500 * time.Millisecond
	cases := []struct {
		name, method string
		outcome      pump.Outcome
		hold         time.Duration // the handler's time
		event        pump.EventKind
		bound        time.Duration // the held call's deadline
		waited       time.Duration // how long the pump waits for it (0: bound)
	}{
		{"acknowledge", "AckMessage", pump.Ack, 0, pump.EventSettleFailed, callTimeout, 0},
		{"reject", "SendMessage", pump.Reject, 0, pump.EventRejected, callTimeout, 0},
		{"requeue", "ChangeInvisibleDuration", pump.Defer, 0, pump.EventSettleFailed, clientRequestTimeout, callTimeout},
		{"extend", "ChangeInvisibleDuration", pump.Ack, 3 * time.Second, pump.EventLeaseExtendFailed, clientRequestTimeout, time.Second},
		{"receive", "ReceiveMessage", pump.Ack, 0, 0, testAwait + clientRequestTimeout, 0},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, "t", "t.DLQ")
				c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 1, InvisibleDuration: rmqLease, DeadLetterTopic: "t.DLQ"})
				e.send("t", fmt.Sprintf("bound-%s-%s", tc.name, v))
				var hold atomic.Pointer[faultproxy.Hold]
				if tc.name == "receive" {
					hold.Store(e.srv.HoldCalls(tc.method))
				}
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
				if tc.event == 0 {
					// A second ReceiveMessage held: the first ended.
					pumptest.WaitUntil(t, 30*time.Second, "a second ReceiveMessage", func() bool { return len(hold.Load().Deadlines()) >= 2 })
				} else {
					ev := events.Await(t, tc.event, 30*time.Second, func(ev pump.Event) bool { return tc.event != pump.EventRejected || ev.Err != nil })
					waited, want := ev.Time.Sub(hold.Load().Arrivals()[0]), cmp.Or(tc.waited, tc.bound)
					if waited < want-300*time.Millisecond || waited > want+time.Second {
						t.Errorf("the pump waited %s for the held %s, want about %s", waited.Round(time.Millisecond), tc.method, want)
					}
					if tc.waited != 0 && !errors.Is(ev.Err, rocketmq.ErrCallAbandoned) {
						t.Errorf("event error %v, want rocketmq.ErrCallAbandoned", ev.Err)
					}
				}
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
