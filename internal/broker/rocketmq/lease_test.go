package rocketmq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// rmqLease is the invisible duration of the lease tests: short, so CI
// stays fast; handler times are fractions and multiples of it.
const rmqLease = 2 * time.Second

var variants = []pump.Variant{pump.Reactor, pump.Proactor}

// leaseRun is a pump over a RocketMQ consumer with its events, its log and
// the handler's invocations per message id kept.
type leaseRun struct {
	mu     sync.Mutex
	events []pump.Event
	logs   bytes.Buffer
	calls  map[string]int
	cancel context.CancelFunc
	done   chan error
}

func (r *leaseRun) Observe(e pump.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *leaseRun) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.Write(p)
}

func (r *leaseRun) count(k pump.EventKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func (r *leaseRun) logText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

func (r *leaseRun) handled() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.calls {
		out[k] = v
	}
	return out
}

func startLeasePump(t *testing.T, c broker.Consumer, opts pump.Options, h pump.Handler) *leaseRun {
	t.Helper()
	r := &leaseRun{calls: map[string]int{}, done: make(chan error, 1)}
	logger := slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug}))
	counted := func(ctx context.Context, m *message.Message) pump.Result {
		r.mu.Lock()
		r.calls[m.Header.MessageID]++
		r.mu.Unlock()
		return h(ctx, m)
	}
	p, err := pump.New(c, counted, opts, r, pump.LogObserver{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *leaseRun) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Error("the pump did not stop")
	}
}

func sleepFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func leaseOptions(v pump.Variant, bufferSize int) pump.Options {
	return pump.Options{Subscription: "lease", Variant: v, BufferSize: bufferSize, TimeOut: time.Second,
		RequeueCount: -1, EmptyChannelDelay: 10 * time.Millisecond, ChannelFailureDelay: 100 * time.Millisecond}
}

// copiesOn counts the messages stored on topic by Brighter message id.
func (e *env) copiesOn(topic string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, m := range e.srv.Messages(topic) {
		d, err := rocketmq.Decode(rocketmq.Wire{Topic: m.Topic, MessageID: m.MessageID, Tag: m.Tag, Keys: m.Keys, Properties: m.Properties, Body: m.Body}, time.Now())
		if err != nil {
			e.t.Errorf("copy on %s does not decode: %v", topic, err)
		}
		out[d.Header.MessageID]++
	}
	return out
}

// A deferring handler slower than half the invisible duration, messages
// waiting in the buffer: each message is handled exactly requeueCount
// times, dead-lettered once, and the group holds nothing of the source at
// the end (R-4, R-5, issue 12: ChangeInvisibleDuration keeps the leases).
func TestLeaseExtendedWhileBufferedAndHandled_R4_R5(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, budget = 3, 3
			e := newEnv(t, "t", "t.DLQ")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: msgs, InvisibleDuration: rmqLease, DeadLetterTopic: "t.DLQ"})
			for i := range msgs {
				e.send("t", fmt.Sprintf("x-%d", i))
			}
			opts := leaseOptions(v, msgs)
			opts.RequeueCount = budget
			r := startLeasePump(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
				sleepFor(ctx, rmqLease*11/20) // just over half the lease
				return pump.Result{Outcome: pump.Defer}
			})
			eventually(t, 90*time.Second, "every message rejected", func() bool { return r.count(pump.EventRejected) >= msgs })
			r.stop(t)
			for id, n := range r.handled() {
				if n != budget {
					t.Errorf("%s handled %d times, want %d", id, n, budget)
				}
			}
			copies := e.copiesOn("t.DLQ")
			if len(copies) != msgs {
				t.Errorf("dead-letter topic holds %d distinct messages, want %d", len(copies), msgs)
			}
			for id, n := range copies {
				if n != 1 {
					t.Errorf("%s dead-lettered %d times, want once", id, n)
				}
			}
			if n := e.srv.Pending("t", "g"); n != 0 {
				t.Errorf("group g still holds %d messages of the source", n)
			}
			if r.count(pump.EventLeaseExtended) == 0 {
				t.Error("no lease extended")
			}
			if n := r.count(pump.EventSettleFailed); n != 0 {
				t.Errorf("%d settles failed", n)
			}
		})
	}
}

// An acknowledging handler slower than the whole invisible duration
// handles each message once (issue 12).
func TestAckHandlerSlowerThanInvisibleDurationHandlesOnce_R4(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 2
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: msgs, InvisibleDuration: rmqLease})
			for i := range msgs {
				e.send("t", fmt.Sprintf("a-%d", i))
			}
			r := startLeasePump(t, c, leaseOptions(v, msgs), func(ctx context.Context, m *message.Message) pump.Result {
				sleepFor(ctx, rmqLease*5/4)
				return pump.Result{Outcome: pump.Ack}
			})
			eventually(t, 60*time.Second, "every message acknowledged", func() bool { return r.count(pump.EventAcknowledged) >= msgs })
			eventually(t, 10*time.Second, "the group to hold nothing", func() bool { return e.srv.Pending("t", "g") == 0 })
			r.stop(t)
			got := r.handled()
			if len(got) != msgs {
				t.Errorf("handled %d distinct messages, want %d", len(got), msgs)
			}
			for id, n := range got {
				if n != 1 {
					t.Errorf("%s handled %d times, want once", id, n)
				}
			}
		})
	}
}

// With handlers far shorter than half the invisible duration, lease
// management makes no ChangeInvisibleDuration call at all (NFR-1, NFR-3);
// the broker counts the calls it serves.
func TestNoChangeInvisibleDurationWhenHandlersShort_NFR3(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 30
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 10, InvisibleDuration: 10 * time.Second})
			for i := range msgs {
				e.send("t", fmt.Sprintf("s-%d", i))
			}
			r := startLeasePump(t, c, leaseOptions(v, 10), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			})
			eventually(t, 60*time.Second, "every message acknowledged", func() bool { return r.count(pump.EventAcknowledged) >= msgs })
			r.stop(t)
			if n := e.srv.Calls("ChangeInvisibleDuration"); n != 0 {
				t.Errorf("ChangeInvisibleDuration calls = %d, want 0", n)
			}
			if e.srv.Calls("AckMessage") == 0 {
				t.Error("the broker counted no AckMessage: the counter does not see this consumer")
			}
		})
	}
}

// A ChangeInvisibleDuration that fails is logged at Error with the message
// id and the message is released to the broker, never lost: once the fault
// is gone it is delivered again and acknowledged, and the group holds
// nothing at the end (issue 12 fault test).
func TestFailedExtensionLoggedAndReleased(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "t")
			c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", BufferSize: 1, InvisibleDuration: rmqLease})
			injected := errors.New("extension refused")
			e.srv.FailChangeInvisibleDuration(func(string, string) error { return injected })
			e.send("t", "f-1")
			var first atomic.Bool
			r := startLeasePump(t, c, leaseOptions(v, 1), func(ctx context.Context, m *message.Message) pump.Result {
				if first.CompareAndSwap(false, true) {
					sleepFor(ctx, rmqLease*3/2) // slower than the lease while every extension fails
				}
				return pump.Result{Outcome: pump.Ack}
			})
			eventually(t, 30*time.Second, "a failed extension", func() bool { return r.count(pump.EventLeaseExtendFailed) > 0 })
			e.srv.FailChangeInvisibleDuration(nil)
			eventually(t, 60*time.Second, "the message acknowledged and gone", func() bool {
				return r.count(pump.EventAcknowledged) > 0 && e.srv.Pending("t", "g") == 0
			})
			r.stop(t)
			if n := r.handled()["f-1"]; n < 1 {
				t.Errorf("f-1 handled %d times, want at least once", n)
			}
			logs := r.logText()
			want := fmt.Sprintf(`"level":"ERROR","msg":%q`, pump.LogLeaseExtendFailed)
			if !strings.Contains(logs, want) || !strings.Contains(logs, `"f-1"`) {
				t.Errorf("log lacks an ERROR %q naming f-1:\n%s", pump.LogLeaseExtendFailed, logs)
			}
		})
	}
}

// An extension of a message whose lease this consumer knows has lapsed is
// not sent and reports broker.ErrStaleReceipt (issue 12, ADR 0005 §6).
func TestExtendAfterLapseIsStale(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "t")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "t", ConsumerGroup: "g", InvisibleDuration: 500 * time.Millisecond})
	e.send("t", "l-1")
	m := e.receiveOne(c, 10*time.Second)
	fresh := e.receiveOne(c, 10*time.Second) // delivered again: m's lease lapsed
	if err := c.ExtendLeases(e.ctx, []*message.Message{m}, time.Second)[0]; !errors.Is(err, broker.ErrStaleReceipt) {
		t.Fatalf("extending a lapsed lease = %v, want broker.ErrStaleReceipt", err)
	}
	if errs := c.ExtendLeases(e.ctx, []*message.Message{fresh}, rmqLease); errs[0] != nil {
		t.Fatalf("extending a current lease: %v", errs[0])
	}
	if err := c.Acknowledge(e.ctx, fresh); err != nil {
		t.Fatalf("acknowledge after an extension (new receipt handle): %v", err)
	}
}
