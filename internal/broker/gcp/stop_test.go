package gcp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// stopTimeOut is the pump's timeOut in the stop tests: a stop that let the
// receive in flight wait it out would take this long.
const stopTimeOut = 20 * time.Second

// A graceful stop of a pump over the stream consumer ends the Receive
// waiting on the idle stream at once (broker.InterruptibleReceiver), in
// both variants, rather than after the receive's timeOut.
func TestStreamStop_EndsTheIdleReceiveAtOnce(t *testing.T) {
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "idle", Subscription: "idle-sub", RequeueCount: -1})
			c := e.consumer(t, modeStream, ConsumerOptions{Subscription: "idle-sub"})
			if ir, ok := c.(broker.InterruptibleReceiver); !ok || !ir.ReceiveInterruptible() {
				t.Error("the stream consumer does not say its Receive may be interrupted")
			}
			opts := pumptest.Options(v, 10)
			opts.NoOfPerformers = 2
			opts.TimeOut = stopTimeOut
			p, err := pump.New(c, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} }, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			// The stop must find a Receive waiting: the first Receive starts
			// the stream (c.done), and with nothing published it waits out
			// its 20 s timeOut.
			sc := c.(*StreamConsumer)
			polltest.Until(t, 10*time.Second, "a Receive on the stream", func() bool {
				sc.mu.Lock()
				defer sc.mu.Unlock()
				return sc.done != nil
			})
			stopped := time.Now()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
				if took := time.Since(stopped); took > 2*time.Second {
					t.Errorf("the stop took %s: it waited for the receive in flight (timeOut %s)", took, stopTimeOut)
				}
			case <-time.After(stopTimeOut + 10*time.Second):
				t.Fatal("Run did not return")
			}
		})
	}
}

// A graceful stop of a pump over the stream consumer while messages keep
// arriving loses none, in both variants: every message published is either
// handled by the stopped pump or delivered again to a consumer after it
// (what its interrupted receives left in the client is released).
func TestStreamStop_WhileMessagesArriveLosesNone(t *testing.T) {
	for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
		t.Run(string(v), func(t *testing.T) {
			const n = 150
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "flow", Subscription: "flow-sub", RequeueCount: -1})
			c := e.consumer(t, modeStream, ConsumerOptions{Subscription: "flow-sub", BufferSize: 5})
			var mu sync.Mutex
			handled := map[string]bool{}
			opts := pumptest.Options(v, 5)
			opts.NoOfPerformers = 2
			opts.TimeOut = stopTimeOut
			p, err := pump.New(c, func(_ context.Context, m *message.Message) pump.Result {
				mu.Lock()
				handled[m.Header.MessageID] = true
				mu.Unlock()
				return pump.Result{Outcome: pump.Ack}
			}, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()

			prod := NewProducer(e.client, ProducerOptions{})
			defer prod.Close(context.Background())
			published := make(chan error, 1)
			go func() {
				for i := range n {
					m := newMsg(fmt.Sprintf("flow-%03d", i))
					m.Header.Topic = "flow"
					if err := prod.Send(ctxT(t, 10*time.Second), m); err != nil {
						published <- err
						return
					}
				}
				published <- nil
			}()
			polltest.Until(t, 20*time.Second, "a third of the messages handled", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(handled) >= n/3
			})
			cancel() // while the publisher still sends
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run = %v", err)
				}
			case <-time.After(stopTimeOut + 10*time.Second):
				t.Fatal("Run did not return")
			}
			if err := <-published; err != nil {
				t.Fatalf("publish: %v", err)
			}
			if err := c.Close(ctxT(t, 10*time.Second)); err != nil {
				t.Fatalf("Close: %v", err)
			}
			mu.Lock()
			first := len(handled)
			mu.Unlock()
			if first >= n {
				t.Fatalf("the stopped pump handled all %d messages: the stop came too late to test anything", n)
			}
			// The rest, from a consumer after it.
			after := e.consumer(t, modePull, ConsumerOptions{Subscription: "flow-sub"})
			deadline := time.Now().Add(60 * time.Second)
			for len(handled) < n && time.Now().Before(deadline) {
				ms, err := after.Receive(ctxT(t, 10*time.Second), time.Second)
				if err != nil {
					t.Fatalf("Receive after the stop: %v", err)
				}
				for _, m := range ms {
					handled[m.Header.MessageID] = true
					if err := after.Acknowledge(ctxT(t, 5*time.Second), m); err != nil {
						t.Fatalf("Acknowledge after the stop: %v", err)
					}
				}
			}
			if len(handled) < n {
				var missing []string
				for i := range n {
					if id := fmt.Sprintf("flow-%03d", i); !handled[id] {
						missing = append(missing, id)
					}
				}
				t.Fatalf("%d of %d messages neither handled before the stop (%d were) nor delivered after it: %v", len(missing), n, first, missing)
			}
			t.Logf("%d handled before the stop, %d after it", first, n-first)
		})
	}
}

// A graceful stop while a deferred message waits out its requeue delay
// does not bring it back early, in both modes and both variants: pull's
// Requeue already set its ack deadline to the delay, and the stream
// consumer's Close keeps a hold that ends within its CloseTimeout and Nacks
// it as the delay ends (docs/commands/consume.md#pubsub-redelivery-gaps).
// Before, the stream's Close Nacked it at once and it came back about a
// second after the stop.
func TestStop_DeferredMessageStaysAwayForItsDelay(t *testing.T) {
	const delay = 6 * time.Second
	for _, md := range modes {
		for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
			t.Run(string(md)+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.channels(t, ChannelOptions{Topic: "held", Subscription: "held-sub", RequeueCount: -1})
				c := e.consumer(t, md, ConsumerOptions{Subscription: "held-sub"})
				deferred := make(chan time.Time, 4)
				opts := pumptest.Options(v, 10)
				opts.RequeueCount = 3
				opts.RequeueDelay = delay
				opts.DrainTimeout = time.Second
				events := pumptest.NewEvents()
				p, err := pump.New(c, func(context.Context, *message.Message) pump.Result {
					deferred <- time.Now()
					return pump.Result{Outcome: pump.Defer}
				}, opts, events)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				e.send(t, "held", newMsg("held-1"))
				var at time.Time
				select {
				case at = <-deferred:
				case <-time.After(20 * time.Second):
					t.Fatal("the message was never handled")
				}
				// The stop comes once the requeue has returned (the pump
				// reports EventDeferred after it): the hold is under way.
				events.Await(t, pump.EventDeferred, 20*time.Second, nil)
				cancel()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("Run = %v", err)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("Run did not return")
				}
				closing := time.Now()
				if err := c.Close(ctxT(t, 15*time.Second)); err != nil {
					t.Fatalf("Close: %v", err)
				}
				t.Logf("Close took %s, returned %s after the deferral", time.Since(closing), time.Since(at))
				after := e.consumer(t, modePull, ConsumerOptions{Subscription: "held-sub"})
				for time.Since(at) < delay+50*time.Second { // a Nack that meets the closing stream on Google's emulator comes back after its ack deadline
					ms, err := after.Receive(ctxT(t, 10*time.Second), time.Second)
					if err != nil {
						t.Fatalf("Receive after the stop: %v", err)
					}
					if len(ms) == 0 {
						continue
					}
					// Measured as the Receive returns, up to its wait after the
					// arrival: the early Nack brought it back about 4 s early.
					if back := time.Since(at); back < delay {
						t.Fatalf("the deferred message came back %s after its deferral, before its delay %s", back, delay)
					}
					t.Logf("back after %s, attempt %d", time.Since(at), ms[0].DeliveryAttempt)
					return
				}
				t.Fatal("the deferred message never came back")
			})
		}
	}
}
