package pump_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// singleAcks hides every optional interface of the consumer it wraps (the
// batch acknowledgement among them): the pump acknowledges one message per
// call, as it does on RocketMQ.
type singleAcks struct{ broker.Consumer }

// A handler's Ack is final: when its acknowledgement fails, the message's
// later deliveries to this process are acknowledged without a handler run,
// each retry failing again keeping the record, until one succeeds. The
// redelivery budget has no say (the handler said Ack): a budget of 1
// reached by the retries' deliveries, or a message deferred up to its
// budget and then acknowledged, is never dead-lettered for it. Both
// variants, with the batched and the single acknowledgement, budget
// enforced or not.
func TestFailedAcknowledgementRetriedWithoutAHandlerRun(t *testing.T) {
	cases := []struct {
		name     string
		budget   int
		defers   int // handler runs that defer before the one that acks
		ackFails int // acknowledgements of m1 that fail, the handler's first
	}{
		{"budget-1-three-failures", 1, 0, 3},
		{"no-budget-two-failures", -1, 0, 2},
		{"deferred-to-the-budget-then-acked", 3, 2, 1},
	}
	for _, tc := range cases {
		for _, single := range []bool{false, true} {
			name := tc.name + "/batched"
			if single {
				name = tc.name + "/single"
			}
			t.Run(name, func(t *testing.T) {
				forEachVariant(t, func(t *testing.T, v pump.Variant) {
					e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, VisibilityTimeout: 100 * time.Millisecond, StopWhenEmpty: true})
					var acks atomic.Int64
					e.b.SetAcknowledgeFault(func(_ string, m *message.Message) error {
						if m.Header.MessageID == "m1" && acks.Add(1) <= int64(tc.ackFails) {
							return errors.New("injected: connection reset by peer")
						}
						return nil
					})
					e.publish(t, srcQueue, "m1", "")
					opts := fastOptions(v)
					opts.RequeueCount = tc.budget
					var c broker.Consumer = e.c
					if single {
						c = singleAcks{e.c}
					}
					var runs atomic.Int64
					e.startWith(t, c, opts, func(context.Context, *message.Message) pump.Result {
						if runs.Add(1) <= int64(tc.defers) {
							return pump.Result{Outcome: pump.Defer}
						}
						return pump.Result{Outcome: pump.Ack}
					})
					// StopWhenEmpty: Run returns once the queue is empty.
					if err := e.wait(t, 10*time.Second); err != nil {
						t.Fatalf("Run = %v", err)
					}
					if got, want := e.calls.Load(), int64(tc.defers+1); got != want {
						t.Errorf("handler ran %d times, want %d (an acknowledged message is not handled again because its acknowledgement failed)", got, want)
					}
					checkAckRetried(t, e, tc.ackFails)
				})
			})
		}
	}
}

// checkAckRetried checks the events and logs of a run in which m1's
// handler acknowledged it and fails of its acknowledgements failed: fails
// settle failures, all but the first retries; one acknowledgement, a retry
// with no handler duration, logged at Info with the message id; no budget
// judgement, no rejection, nothing dead-lettered.
func checkAckRetried(t *testing.T, e *env, fails int) {
	t.Helper()
	sf := e.events.Of(pump.EventSettleFailed)
	if len(sf) != fails {
		t.Errorf("settle-failed events = %d, want %d (each failed acknowledgement)", len(sf), fails)
	}
	for i, ev := range sf {
		if ev.MessageID() != "m1" || ev.Outcome != pump.Ack || ev.Retry != (i > 0) {
			t.Errorf("settle failure %d: %s, outcome %v, retry %v; want m1's acknowledgement, retried after the first", i+1, ev.MessageID(), ev.Outcome, ev.Retry)
		}
	}
	acked := e.events.Of(pump.EventAcknowledged)
	if len(acked) != 1 || !acked[0].Retry || acked[0].Duration != 0 || acked[0].MessageID() != "m1" {
		t.Errorf("acknowledged events = %+v, want one of m1, marked Retry, no handler duration", acked)
	}
	if n := e.events.Count(pump.EventReceived); n != fails+1+e.events.Count(pump.EventDeferred) {
		t.Errorf("received events = %d, want the handler's deliveries and %d redeliveries after failed acknowledgements", n, fails)
	}
	if n := e.events.Count(pump.EventBudgetExhausted) + e.events.Count(pump.EventRejected); n != 0 {
		t.Errorf("%d budget-exhausted or rejected events, want none: the handler acknowledged the message", n)
	}
	if dl := e.receiveAll(t, dlqQueue); len(dl) != 0 {
		t.Errorf("dead-letter queue holds %d, want none", len(dl))
	}
	recs := withMsg(e.logs.records(t), pump.LogAckRetried)
	if len(recs) != 1 || recs[0]["level"] != "INFO" || attr(recs[0], "message_id") != "m1" {
		t.Errorf("%q records = %v, want one Info naming m1", pump.LogAckRetried, recs)
	}
	retried := 0
	for _, r := range withMsg(e.logs.records(t), pump.LogSettleFailed) {
		if r["ack_retry"] == true {
			retried++
		}
	}
	if retried != fails-1 {
		t.Errorf("%d %q records marked ack_retry, want %d", retried, pump.LogSettleFailed, fails-1)
	}
}

// A handler's Defer or Reject is unaffected by the record of failed
// acknowledgements: another message's failed acknowledgement (a look-up
// every arrival then makes) changes nothing for a message deferred and
// then rejected.
func TestFailedAcknowledgementLeavesOtherOutcomesAlone(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, VisibilityTimeout: 100 * time.Millisecond, StopWhenEmpty: true})
		var failed atomic.Bool
		e.b.SetAcknowledgeFault(func(_ string, m *message.Message) error {
			if m.Header.MessageID == "m1" && failed.CompareAndSwap(false, true) {
				return errors.New("injected: connection reset by peer")
			}
			return nil
		})
		e.publish(t, srcQueue, "m1", "")
		e.publish(t, srcQueue, "m2", "")
		opts := fastOptions(v)
		opts.RequeueCount = 3
		var m2Runs atomic.Int64
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			if m.Header.MessageID == "m2" {
				if m2Runs.Add(1) == 1 {
					return pump.Result{Outcome: pump.Defer}
				}
				return pump.Result{Outcome: pump.Reject, Reason: "m2 rejected"}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := m2Runs.Load(); n != 2 {
			t.Errorf("m2 handled %d times, want 2 (deferred, then rejected)", n)
		}
		if n := e.calls.Load() - m2Runs.Load(); n != 1 {
			t.Errorf("m1 handled %d times, want 1", n)
		}
		dl := e.receiveAll(t, dlqQueue)
		if len(dl) != 1 || dl[0].Header.MessageID != "m2" {
			t.Errorf("dead-letter queue = %v, want m2 alone", dl)
		}
		for _, ev := range e.events.Of(pump.EventAcknowledged) {
			if ev.MessageID() == "m2" {
				t.Errorf("m2 acknowledged (retry %v): its handler deferred and rejected it", ev.Retry)
			}
		}
	})
}
