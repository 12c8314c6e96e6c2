package pump_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// unacceptable makes an MT_UNACCEPTABLE message, as a consumer returns one
// it could not decode.
func unacceptable(id string) *message.Message {
	return message.New(id, srcQueue, message.MTUnacceptable, []byte("\x00not json"))
}

// An MT_UNACCEPTABLE message from the consumer is rejected Unacceptable to the
// invalid-message queue without reaching the handler (R-16;
// docs/wire-format.md#pump).
func TestUnacceptableMessageRejectedToInvalidQueue_R16(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, Invalid: invQueue, StopWhenEmpty: true})
		e.publishMsg(t, srcQueue, unacceptable("bad"))
		e.start(t, fastOptions(v), ack)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 0 {
			t.Errorf("handler invocations = %d, want 0", got)
		}
		rej := e.events.Of(pump.EventRejected)
		if len(rej) != 1 || rej[0].Reason != message.ReasonUnacceptable || rej[0].Route != broker.RouteInvalidMessage {
			t.Fatalf("rejections = %+v, want one Unacceptable to the invalid-message route", rej)
		}
		inv := e.receiveAll(t, invQueue)
		if len(inv) != 1 {
			t.Fatalf("invalid queue holds %d, want 1", len(inv))
		}
		requireFiveKeys(t, inv[0], "Unacceptable")
		if got, _ := inv[0].Header.Bag.String(message.KeyOriginalMessageType); got != "MT_UNACCEPTABLE" {
			t.Errorf("originalMessageType = %q, want MT_UNACCEPTABLE", got)
		}
		if e.b.Depth(dlqQueue) != 0 || e.b.Depth(srcQueue) != 0 {
			t.Errorf("dlq depth %d, source depth %d, want 0 and 0", e.b.Depth(dlqQueue), e.b.Depth(srcQueue))
		}
	})
}

// unacceptableMessageLimit: the pump stops with ErrUnacceptableLimit, says
// why, and leaves the messages it did not reject on the broker (NFR-8; as
// Brighter .NET's unacceptable-message limit stops its pump).
func TestUnacceptableMessageLimitStopsPump_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{Invalid: invQueue})
		for i := range 5 {
			e.publishMsg(t, srcQueue, unacceptable(fmt.Sprintf("bad-%d", i)))
		}
		opts := fastOptions(v)
		opts.UnacceptableMessageLimit = 3
		e.start(t, opts, ack)
		err := e.wait(t, 10*time.Second)
		if !errors.Is(err, pump.ErrUnacceptableLimit) {
			t.Fatalf("Run = %v, want ErrUnacceptableLimit", err)
		}
		for _, want := range []string{"subscription test", "3 unacceptable messages", "unacceptableMessageLimit 3"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		stopped := withMsg(e.logs.records(t), pump.LogStopped)
		if len(stopped) != 1 || stopped[0]["level"] != "ERROR" || !strings.Contains(attr(stopped[0], "error"), "unacceptableMessageLimit 3") {
			t.Errorf("stop records = %v, want one Error naming the limit", stopped)
		}
		if got := e.b.Depth(invQueue); got != 3 {
			t.Errorf("invalid queue depth = %d, want 3", got)
		}
		if got := e.b.Depth(srcQueue); got != 2 {
			t.Errorf("source depth = %d, want the 2 unrejected messages kept", got)
		}
	})
}

// unacceptableMessageLimitWindow: unacceptable messages spaced further apart
// than the window never reach the limit; inside the window they do.
func TestUnacceptableMessageLimitWindow_NFR8(t *testing.T) {
	cases := []struct {
		name     string
		window   time.Duration
		wantStop bool
	}{
		{"spaced beyond window", 40 * time.Millisecond, false},
		{"inside window", time.Minute, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{Invalid: invQueue, StopWhenEmpty: true})
				for i := range 3 {
					m := unacceptable(fmt.Sprintf("bad-%d", i))
					m.Header.Delay = time.Duration(i) * 200 * time.Millisecond
					e.publishMsg(t, srcQueue, m)
				}
				opts := fastOptions(v)
				opts.UnacceptableMessageLimit = 2
				opts.UnacceptableMessageLimitWindow = tc.window
				e.start(t, opts, ack)
				err := e.wait(t, 10*time.Second)
				if tc.wantStop {
					if !errors.Is(err, pump.ErrUnacceptableLimit) {
						t.Fatalf("Run = %v, want ErrUnacceptableLimit", err)
					}
					if got := e.b.Depth(invQueue); got != 2 {
						t.Errorf("invalid depth = %d, want 2", got)
					}
					return
				}
				if err != nil {
					t.Fatalf("Run = %v, want nil: the window reset the count", err)
				}
				if got := e.b.Depth(invQueue); got != 3 {
					t.Errorf("invalid depth = %d, want 3", got)
				}
			})
		})
	}
}

// the route follows the reason; with no destination the
// message is acknowledged and a Warning names it.
func TestRejectionRoutingChoices_R16_R17(t *testing.T) {
	cases := []struct {
		name       string
		dlq, inv   string
		outcome    pump.Outcome
		wantRoute  broker.Route
		wantQueue  string
		wantReason string
		wantLog    string
	}{
		{"reject to dead-letter", dlqQueue, invQueue, pump.Reject, broker.RouteDeadLetter, dlqQueue, "DeliveryError", broker.LogRejected},
		{"unacceptable to invalid", dlqQueue, invQueue, pump.Unacceptable, broker.RouteInvalidMessage, invQueue, "Unacceptable", broker.LogRejected},
		{"unacceptable falls back to dead-letter", dlqQueue, "", pump.Unacceptable, broker.RouteDeadLetter, dlqQueue, "Unacceptable", broker.LogFallbackDeadLetter},
		{"reject with invalid only is discarded", "", invQueue, pump.Reject, broker.RouteNone, "", "DeliveryError", broker.LogDiscarded},
		{"no destination discards with warning", "", "", pump.Unacceptable, broker.RouteNone, "", "Unacceptable", broker.LogDiscarded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{DeadLetter: tc.dlq, Invalid: tc.inv, StopWhenEmpty: true})
				e.publish(t, srcQueue, "m1", "")
				e.start(t, fastOptions(v), func(context.Context, *message.Message) pump.Result {
					return pump.Result{Outcome: tc.outcome, Reason: "handler said no"}
				})
				if err := e.wait(t, 10*time.Second); err != nil {
					t.Fatalf("Run = %v", err)
				}
				rej := e.events.Of(pump.EventRejected)
				if len(rej) != 1 || rej[0].Route != tc.wantRoute || rej[0].Destination != tc.wantQueue || rej[0].Reason.String() != tc.wantReason {
					t.Fatalf("rejections = %+v, want route %s to %q reason %s", rej, tc.wantRoute, tc.wantQueue, tc.wantReason)
				}
				if e.b.Depth(srcQueue) != 0 {
					t.Errorf("source still holds the rejected message")
				}
				recs := withMsg(e.logs.records(t), tc.wantLog)
				if len(recs) != 1 || attr(recs[0], "message_id") != "m1" {
					t.Errorf("records %q = %v, want one naming m1", tc.wantLog, recs)
				}
				if tc.wantRoute == broker.RouteNone {
					if recs[0]["level"] != "WARN" || attr(recs[0], "reason") != tc.wantReason {
						t.Errorf("discard record = %v, want WARN with reason %s", recs[0], tc.wantReason)
					}
					if d := e.b.Depth(dlqQueue) + e.b.Depth(invQueue); d != 0 {
						t.Errorf("destinations hold %d, want 0", d)
					}
					return
				}
				got := e.receiveAll(t, tc.wantQueue)
				if len(got) != 1 {
					t.Fatalf("%s holds %d, want 1", tc.wantQueue, len(got))
				}
				requireFiveKeys(t, got[0], tc.wantReason)
				if s, _ := got[0].Header.Bag.String(message.KeyRejectionMessage); s != "handler said no" {
					t.Errorf("rejectionMessage = %q, want the handler's reason", s)
				}
			})
		})
	}
}

// a failed routing publish logs an Error naming the message, releases
// the original, and it is redelivered and routed on the next attempt,
// without a second handler run (a handler's rejection is final).
func TestRoutingPublishFailureReleasesMessage_R19(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		var fails atomic.Int64
		e.b.SetPublishFault(func(q string, m *message.Message) error {
			if q == dlqQueue && fails.Add(1) == 1 {
				return errors.New("dlq unavailable")
			}
			return nil
		})
		e.publish(t, srcQueue, "m1", "")
		e.start(t, fastOptions(v), func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Reject, Reason: "no"}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if got := e.calls.Load(); got != 1 {
			t.Errorf("handler invocations = %d, want 1 (released, redelivered, routed without a run)", got)
		}
		rej := e.events.Of(pump.EventRejected)
		if len(rej) != 2 || rej[0].Err == nil || rej[1].Err != nil {
			t.Fatalf("rejections = %+v, want a failed one then a routed one", rej)
		}
		recs := withMsg(e.logs.records(t), broker.LogRoutingFailed)
		if len(recs) != 1 || recs[0]["level"] != "ERROR" || attr(recs[0], "message_id") != "m1" || attr(recs[0], "reason") != "DeliveryError" {
			t.Errorf("routing-failed records = %v, want one Error naming m1 and DeliveryError", recs)
		}
		dl := e.receiveAll(t, dlqQueue)
		if len(dl) != 1 || dl[0].Header.HandledCount != 1 {
			t.Errorf("dead-letter = %v, want one copy presenting count 1 (second delivery)", dl)
		}
	})
}

// Acknowledge failure: a settle-failed event, and the message stays on the
// broker and is redelivered when its visibility timeout lapses; the
// redelivery is acknowledged without a handler run (its handler acknowledged
// it already).
func TestAcknowledgeFailureRedelivers_R16(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{VisibilityTimeout: 100 * time.Millisecond, StopWhenEmpty: true})
		var fails atomic.Int64
		e.b.SetAcknowledgeFault(func(string, *message.Message) error {
			if fails.Add(1) == 1 {
				return errors.New("ack lost")
			}
			return nil
		})
		e.publish(t, srcQueue, "m1", "")
		var mu sync.Mutex
		var counts []int
		e.start(t, fastOptions(v), func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			counts = append(counts, m.Header.HandledCount)
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		sf := e.events.Of(pump.EventSettleFailed)
		if len(sf) != 1 || sf[0].MessageID() != "m1" || sf[0].Outcome != pump.Ack {
			t.Fatalf("settle-failed events = %+v, want one for m1's ack", sf)
		}
		if n := e.events.Count(pump.EventReceived); n != 2 {
			t.Errorf("received events = %d, want 2 (redelivered after the failed ack)", n)
		}
		if fmt.Sprint(counts) != "[0]" {
			t.Errorf("presented counts = %v, want [0] (the redelivery is acknowledged without a handler run)", counts)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged events = %d, want 1", n)
		}
		recs := withMsg(e.logs.records(t), pump.LogSettleFailed)
		if len(recs) != 1 || attr(recs[0], "message_id") != "m1" {
			t.Errorf("settle-failed records = %v, want one naming m1", recs)
		}
	})
}

// A handler panic is a Defer with an error: the message is never lost.
func TestHandlerPanicDefersNeverLost_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		e.publish(t, srcQueue, "m1", "")
		e.start(t, fastOptions(v), func(_ context.Context, m *message.Message) pump.Result {
			if m.Header.HandledCount == 0 {
				panic("boom")
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		d := e.events.Of(pump.EventDeferred)
		if len(d) != 1 || d[0].Err == nil || !strings.Contains(d[0].Err.Error(), "boom") {
			t.Fatalf("deferred events = %+v, want one carrying the panic", d)
		}
		if got := e.calls.Load(); got != 2 {
			t.Errorf("handler invocations = %d, want 2", got)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want 1", n)
		}
		recs := withMsg(e.logs.records(t), pump.LogHandlerFailed)
		if len(recs) != 1 || recs[0]["level"] != "ERROR" || attr(recs[0], "message_id") != "m1" {
			t.Errorf("handler-failed records = %v, want one Error naming m1", recs)
		}
	})
}

// A handler failure's log line ("handler failed; message deferred") says
// the redelivery budget as a plain deferral's ("message deferred") does:
// budget and budget_spent, so the operator sees the budget run down on
// the failures too.
func TestHandlerFailedLogSaysTheBudget(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, StopWhenEmpty: true})
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.RequeueCount = 3
		e.start(t, opts, func(_ context.Context, m *message.Message) pump.Result {
			if m.Header.HandledCount < 2 {
				return pump.Result{Outcome: pump.Defer, Err: errors.New("downstream refused")}
			}
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		recs := withMsg(e.logs.records(t), pump.LogHandlerFailed)
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprintf("%s/%s/%s", attr(r, "delivery_count"), attr(r, "budget"), attr(r, "budget_spent")))
		}
		if want := []string{"1/3/1", "2/3/2"}; !slices.Equal(got, want) {
			t.Errorf("handler-failed records as delivery_count/budget/budget_spent = %v, want %v", got, want)
		}
	})
}

// MT_QUIT stops the pump: Run returns nil, nothing after the quit is
// handled, and a message received before it is handled or released (never
// lost).
func TestQuitMessageStopsPump_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		e.publish(t, srcQueue, "before", "")
		e.publishMsg(t, srcQueue, message.New("quit", srcQueue, message.MTQuit, nil))
		e.publish(t, srcQueue, "after", "")
		var mu sync.Mutex
		var handled []string
		e.start(t, fastOptions(v), func(_ context.Context, m *message.Message) pump.Result {
			mu.Lock()
			handled = append(handled, m.Header.MessageID)
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		for _, id := range handled {
			if id != "before" {
				t.Errorf("handled %q after the quit", id)
			}
		}
		left := map[string]bool{}
		for _, m := range e.receiveAll(t, srcQueue) {
			left[m.Header.MessageID] = true
		}
		if !left["after"] {
			t.Errorf("message after the quit is not on the broker: %v", left)
		}
		if len(handled) == 0 && !left["before"] {
			t.Errorf("message before the quit was neither handled nor released")
		}
	})
}
