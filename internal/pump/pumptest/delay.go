package pumptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// AppliedDelayReported runs a pump of variant v over c, whose channel holds
// a message, with a handler that defers it asking for asked, and reports
// an error unless the deferral's event (pump.EventDeferred) and its log
// line (pump.LogDeferred, its "delay" attribute in nanoseconds) carry
// want, the delay the broker applies (the broker's cap, at the cap's
// edge), never the delay asked for. The pump is stopped before it returns.
func AppliedDelayReported(t *testing.T, v pump.Variant, c broker.Consumer, asked, want time.Duration) {
	t.Helper()
	r := Start(t, c, Options(v, 1), func(context.Context, *message.Message) pump.Result {
		return pump.Result{Outcome: pump.Defer, Delay: asked}
	})
	e := r.Await(t, pump.EventDeferred, 60*time.Second, nil)
	r.Stop(t)
	if e.Delay != want {
		t.Errorf("deferred event's delay = %s for %s asked, want %s (applied by the broker)", e.Delay, asked, want)
	}
	found := false
	for _, line := range strings.Split(r.LogText(), "\n") {
		var rec struct {
			Msg   string `json:"msg"`
			Delay int64  `json:"delay"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != pump.LogDeferred {
			continue
		}
		found = true
		if time.Duration(rec.Delay) != want {
			t.Errorf("%q logged delay %s for %s asked, want %s (applied by the broker)", pump.LogDeferred, time.Duration(rec.Delay), asked, want)
		}
	}
	if !found {
		t.Errorf("no %q line in the log:\n%s", pump.LogDeferred, r.LogText())
	}
}

// DeferredThenStopped runs a pump of variant v over c, whose channel holds
// a message, with a handler that defers it asking for delay (requeueCount
// 3, drainTimeout 1 s), waits up to within for that deferral and for the
// pump to report it (pump.EventDeferred: the broker answered the requeue),
// then stops the pump and closes c. It fails the test if the handler never
// ran or the requeue was not reported within within, Run returns an error
// or Close fails, and returns when the handler deferred.
func DeferredThenStopped(t *testing.T, v pump.Variant, c broker.Consumer, delay, within time.Duration) time.Time {
	t.Helper()
	deferred := make(chan time.Time, 4)
	events := NewEvents()
	cancel, done := start(t, c, func(context.Context, *message.Message) pump.Result {
		deferred <- time.Now()
		return pump.Result{Outcome: pump.Defer}
	}, pump.Options{Subscription: "held", Variant: v, BufferSize: 1, TimeOut: time.Second, RequeueCount: 3, RequeueDelay: delay,
		DrainTimeout: time.Second, EmptyChannelDelay: 10 * time.Millisecond}, events)
	deadline := time.After(within)
	var at time.Time
	select {
	case at = <-deferred:
	case <-deadline:
		cancel()
		t.Fatal("the message was never handled")
	}
	// The stop comes once the broker has answered the requeue (the pump
	// reports EventDeferred after it), not a guessed time after the handler.
	for events.Count(pump.EventDeferred) == 0 {
		select {
		case <-events.kinds:
		case <-deadline:
			cancel()
			t.Fatalf("the pump did not report the deferral within %s; events: %d settle failures", within, events.Count(pump.EventSettleFailed))
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return at
}
