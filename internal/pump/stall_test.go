package pump_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// blackHoled is a consumer whose receives, once holed is set, are never
// answered: each waits for its deadline, as against a host that accepts a
// connection and says nothing.
type blackHoled struct {
	broker.Consumer
	holed atomic.Bool
}

func (c *blackHoled) Receive(ctx context.Context, wait time.Duration) ([]*message.Message, error) {
	if c.holed.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return c.Consumer.Receive(ctx, wait)
}

// TestStallClockStartsAtTheFirstFailingCall: when the channel is
// black-holed, the stall is reported StallAfter after the start of the
// first receive that got no answer (no call has succeeded since), not after
// the end of that receive (its deadline, ReceiveMargin later), nor when a
// later failure happens to be reported; and its Since says so. Here the
// receive deadline is shorter than StallAfter (as SQS's 30 s against the
// default 60 s): the first failure is known before the stall is due. Both
// variants.
func TestStallClockStartsAtTheFirstFailingCall(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		c := &blackHoled{Consumer: e.c}
		opts := fastOptions(v)
		opts.ReceiveMargin = 700 * time.Millisecond // a receive fails 0.7 s after it starts
		opts.StallAfter = time.Second
		e.startWith(t, c, opts, ack)
		e.publish(t, srcQueue, "m1", "")
		polltest.Until(t, 10*time.Second, "the message handled", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
		holed := time.Now()
		c.holed.Store(true)
		polltest.Until(t, 10*time.Second, "the stall", func() bool { return e.events.Count(pump.EventStalled) == 1 })
		st := e.events.Of(pump.EventStalled)[0]
		// The receive under way when the hole opened started before it;
		// the next one starts at most an emptyChannelDelay (1 ms) after.
		if st.Since.After(holed.Add(100 * time.Millisecond)) {
			t.Errorf("stall since %s, %s after the hole opened: the clock started at the end of the first failed call, not its start", st.Since.Format(time.RFC3339Nano), st.Since.Sub(holed))
		}
		if late := st.Time.Sub(st.Since); late > opts.StallAfter+300*time.Millisecond || late < opts.StallAfter {
			t.Errorf("stalled %s after the first failing call started, want %s (the documented bound), not when a failure was next reported", late, opts.StallAfter)
		}
		if st.Err == nil || st.Failures < 1 {
			t.Errorf("stall event %+v, want the failure and its count", st)
		}
		c.holed.Store(false)
		polltest.Until(t, 10*time.Second, "recovery", func() bool { return e.events.Count(pump.EventChannelRecovered) == 1 })
		if err := e.stop(t); err != nil {
			t.Errorf("Run = %v", err)
		}
		if n := e.events.Count(pump.EventStalled); n != 1 {
			t.Errorf("%d stall events, want 1", n)
		}
	})
}

// TestStallWhenTheDeadlineIsLongerThanStallAfter: when StallAfter
// is shorter than a receive's deadline, the stall is reported as soon as the
// first black-holed receive fails (the earliest it can be known), with
// Since at that receive's start.
func TestStallWhenTheDeadlineIsLongerThanStallAfter(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		c := &blackHoled{Consumer: e.c}
		c.holed.Store(true)
		opts := fastOptions(v)
		opts.ReceiveMargin = time.Second
		opts.StallAfter = 200 * time.Millisecond
		started := time.Now()
		e.startWith(t, c, opts, ack)
		polltest.Until(t, 10*time.Second, "the stall", func() bool { return e.events.Count(pump.EventStalled) == 1 })
		st := e.events.Of(pump.EventStalled)[0]
		cf := e.events.Of(pump.EventChannelFailure)
		if len(cf) == 0 || st.Time.Sub(cf[0].Time) > 100*time.Millisecond {
			t.Errorf("stalled at %s, first failure reported at %v: want the stall with the first failure", st.Time, cf)
		}
		if d := st.Since.Sub(started); d < 0 || d > 200*time.Millisecond {
			t.Errorf("since is %s after the pump started, want the first receive's start", d)
		}
	})
}
