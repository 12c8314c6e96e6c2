package pump_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// A graceful stop whose drain waits only for a receive in flight (a long
// poll on an empty queue) says so through AwaitingReceive, in both
// variants: not before the stop, not while a handler still runs, yes once
// only the receive is left, and no more once Run has returned.
func TestAwaitingReceive_OnlyWhileTheDrainWaitsForAReceive(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		e.publish(t, srcQueue, "slow-1", "")
		started, release := make(chan struct{}), make(chan struct{})
		var receives atomic.Int32 // Receive calls begun (the broker's fault hook sees each)
		e.b.SetReceiveFault(func(string, *message.Message) error { receives.Add(1); return nil })
		opts := fastOptions(v)
		opts.NoOfPerformers = 2 // a Reactor performer polls while the other handles
		opts.TimeOut = 2 * time.Second
		p, err := pump.New(e.c, func(ctx context.Context, m *message.Message) pump.Result {
			close(started)
			<-release
			return pump.Result{Outcome: pump.Ack}
		}, opts, pump.LogObserver{Logger: e.logger})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		<-started
		// The receive after the one that took the message is waiting on
		// the empty queue.
		polltest.Until(t, 5*time.Second, "a second Receive call", func() bool { return receives.Load() >= 2 })
		if p.AwaitingReceive() {
			t.Fatal("AwaitingReceive before any stop")
		}
		cancel()
		polltest.Stays(t, 100*time.Millisecond, "AwaitingReceive while a handler still runs", func() bool { return !p.AwaitingReceive() })
		close(release)
		polltest.Until(t, time.Second, "AwaitingReceive once only the receive is left", p.AwaitingReceive)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its receive's timeOut")
		}
		if p.AwaitingReceive() {
			t.Error("AwaitingReceive after Run returned")
		}
	})
}
