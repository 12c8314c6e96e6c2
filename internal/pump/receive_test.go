package pump_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// receiveTracker wraps the memory consumer to count the Receive calls in
// flight at once. With concurrent set it declares broker.ConcurrentReceiver
// (as the SQS consumer does); gate, when not nil, holds every Receive until
// it is closed (or the pump stops), so overlapping calls can be observed.
type receiveTracker struct {
	*memory.Consumer
	concurrent bool
	gate       chan struct{}
	calls      atomic.Int64
	inFlight   atomic.Int64
	peak       atomic.Int64
}

func (c *receiveTracker) ReceivesConcurrently() bool { return c.concurrent }

func (c *receiveTracker) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	cur := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	c.calls.Add(1)
	for p := c.peak.Load(); cur > p && !c.peak.CompareAndSwap(p, cur); p = c.peak.Load() {
	}
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, nil
		}
	}
	return c.Consumer.Receive(ctx, d)
}

var _ broker.ConcurrentReceiver = (*receiveTracker)(nil)

// A consumer that declares broker.ConcurrentReceiver gets its Receive calls
// (long polls) overlapped by the Proactor's receivers: all NoOfPerformers of
// them are in flight at once, and every message is still handled.
func TestProactorOverlapsReceivesOfConcurrentReceiver_NFR8(t *testing.T) {
	const n = 4
	e := newEnv(t, memory.ConsumerOptions{BufferSize: 2, StopWhenEmpty: true})
	for i := range 20 {
		e.publish(t, srcQueue, fmt.Sprintf("m%02d", i), "")
	}
	rc := &receiveTracker{Consumer: e.c, concurrent: true, gate: make(chan struct{})}
	opts := fastOptions(pump.Proactor)
	opts.NoOfPerformers = n
	opts.BufferSize = 2
	e.startWith(t, rc, opts, ack)
	polltest.Until(t, 10*time.Second, fmt.Sprintf("%d Receive calls in flight at once", n), func() bool { return rc.inFlight.Load() == n })
	close(rc.gate)
	if err := e.wait(t, 20*time.Second); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if p := rc.peak.Load(); p != n {
		t.Errorf("peak Receive calls in flight = %d, want %d", p, n)
	}
	if got := e.events.Count(pump.EventAcknowledged); got != 20 {
		t.Errorf("acknowledged = %d, want 20", got)
	}
}

// A consumer that does not declare it (the memory transport, whose queue does
// not hold a key's later messages back), or declares false, gets one Receive
// at a time from the Proactor, whatever NoOfPerformers, so receive-then-enqueue
// stays one step and per-key order holds (TestPartitionKeyOrderAndBoundedInFlight_NFR8).
func TestProactorSerialisesReceivesOtherwise_NFR8(t *testing.T) {
	for _, declared := range []bool{false, true} {
		name := "undeclared"
		if declared {
			name = "declares-false"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, memory.ConsumerOptions{BufferSize: 2})
			var c broker.Consumer = &countingReceiver{Consumer: e.c}
			rc := &receiveTracker{Consumer: e.c}
			if declared {
				c = rc // declares ReceivesConcurrently() == false
			} else {
				c.(*countingReceiver).tracker = rc
			}
			for i := range 20 {
				e.publish(t, srcQueue, fmt.Sprintf("m%02d", i), fmt.Sprintf("k%d", i%3))
			}
			opts := fastOptions(pump.Proactor)
			opts.NoOfPerformers = 4
			opts.BufferSize = 2
			e.startWith(t, c, opts, ack)
			// The queue empties, then the receivers keep long-polling it (5 ms
			// each): any overlap would show in the peak.
			polltest.Until(t, 10*time.Second, "20 acknowledgements and 50 Receive calls", func() bool {
				return e.events.Count(pump.EventAcknowledged) == 20 && rc.calls.Load() >= 50
			})
			if err := e.stop(t); err != nil {
				t.Fatalf("Run = %v", err)
			}
			if p := rc.peak.Load(); p != 1 {
				t.Errorf("peak Receive calls in flight = %d, want 1", p)
			}
		})
	}
}

// countingReceiver forwards Receive to a receiveTracker without itself
// implementing broker.ConcurrentReceiver: the pump sees a plain consumer.
type countingReceiver struct {
	*memory.Consumer
	tracker *receiveTracker
}

func (c *countingReceiver) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	return c.tracker.Receive(ctx, d)
}
