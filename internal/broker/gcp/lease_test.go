package gcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// gcpLease is the ack deadline of the lease tests: short, so CI stays fast;
// handler times are fractions and multiples of it.
const gcpLease = 2 * time.Second

var variants = []pump.Variant{pump.Reactor, pump.Proactor}

// leaseRun is a pump over a Pub/Sub consumer with its events, its log and
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

// startLeasePump runs a pump over c; h's invocations are counted per id.
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

// waitUntil polls cond until it holds or within passes.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
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

// drain pulls and acknowledges everything sub holds now, returning the
// message ids (the Brighter id attribute, else the Pub/Sub id) it read.
func (e *env) drain(t *testing.T, sub string) []string {
	t.Helper()
	var ids []string
	for {
		ctx := ctxT(t, 10*time.Second)
		resp, err := e.client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: SubscriptionName(e.project, sub), MaxMessages: 100})
		if err != nil {
			t.Fatalf("pull %s: %v", sub, err)
		}
		if len(resp.ReceivedMessages) == 0 {
			return ids
		}
		var acks []string
		for _, rm := range resp.ReceivedMessages {
			m, _ := DecodeOrFailure(Wire{ID: rm.GetMessage().GetMessageId(), Data: rm.GetMessage().GetData(), Attributes: rm.GetMessage().GetAttributes()}, time.Now())
			ids = append(ids, m.Header.MessageID)
			acks = append(acks, rm.AckId)
		}
		if err := e.client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: SubscriptionName(e.project, sub), AckIds: acks}); err != nil {
			t.Fatalf("acknowledge on %s: %v", sub, err)
		}
	}
}

// The stream consumer leaves leases to the client's own lease management
// (MaxExtension): the pump must not extend them as well (issue 12, ADR 0005).
func TestStreamConsumerLeavesLeasesToTheClient(t *testing.T) {
	var c broker.Consumer = &StreamConsumer{}
	if _, ok := c.(broker.LeaseExtender); ok {
		t.Fatal("StreamConsumer implements broker.LeaseExtender; the pump would fight the client's MaxExtension")
	}
	var p broker.Consumer = &PullConsumer{}
	if _, ok := p.(broker.LeaseExtender); !ok {
		t.Fatal("PullConsumer does not implement broker.LeaseExtender")
	}
}

// Pull, a deferring handler slower than half the ack deadline, messages
// waiting in the buffer: each message is handled exactly requeueCount
// times, dead-lettered once, the native policy never fires and the source
// ends empty (R-4, R-5, issue 12: ModifyAckDeadline keeps the leases).
func TestPullLeaseExtendedWhileBufferedAndHandled_R4_R5(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, budget = 3, 3
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: budget, AckDeadline: gcpLease, DeadLetterTopic: "orders-dlq", DeadLetterPolicy: dlp("orders-native")})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: msgs, AckDeadline: gcpLease, DeadLetterTopic: "orders-dlq"})
			for i := range msgs {
				e.send(t, "orders", newMsg(fmt.Sprintf("x-%d", i)))
			}
			opts := leaseOptions(v, msgs)
			opts.RequeueCount = budget
			r := startLeasePump(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
				sleepFor(ctx, gcpLease*11/20) // just over half the lease
				return pump.Result{Outcome: pump.Defer}
			})
			waitUntil(t, 90*time.Second, "every message rejected", func() bool { return r.count(pump.EventRejected) >= msgs })
			r.stop(t)
			for id, n := range r.handled() {
				if n != budget {
					t.Errorf("%s handled %d times, want %d", id, n, budget)
				}
			}
			copies := map[string]int{}
			for _, id := range e.drain(t, "orders-dlq") {
				copies[id]++
			}
			if len(copies) != msgs {
				t.Errorf("dead-letter topic holds %d distinct messages, want %d", len(copies), msgs)
			}
			for id, n := range copies {
				if n != 1 {
					t.Errorf("%s dead-lettered %d times, want once", id, n)
				}
			}
			if left := e.drain(t, "orders-sub"); len(left) != 0 {
				t.Errorf("source still holds %v", left)
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

// An acknowledging handler slower than the whole ack deadline handles each
// message once, on both consumers: pull through the pump's
// ModifyAckDeadline, stream through the client's own extension (issue 12).
func TestAckHandlerSlowerThanAckDeadlineHandlesOnce_R4(t *testing.T) {
	t.Parallel()
	for _, md := range modes {
		for _, v := range variants {
			t.Run(string(md)+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				const msgs = 2
				e := newEnv(t)
				e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: gcpLease})
				c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", BufferSize: msgs, AckDeadline: gcpLease})
				for i := range msgs {
					e.send(t, "orders", newMsg(fmt.Sprintf("a-%d", i)))
				}
				r := startLeasePump(t, c, leaseOptions(v, msgs), func(ctx context.Context, m *message.Message) pump.Result {
					sleepFor(ctx, gcpLease*5/4)
					return pump.Result{Outcome: pump.Ack}
				})
				waitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.count(pump.EventAcknowledged) >= msgs })
				// A lapsed lease would bring a message back within the
				// subscription's ack deadline.
				time.Sleep(e.quietWindow(t, "orders-sub")) // observation window: nothing may come back
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
				if left := e.drain(t, "orders-sub"); len(left) != 0 {
					t.Errorf("source still holds %v", left)
				}
			})
		}
	}
}

// With handlers far shorter than half the ack deadline, lease management
// makes no ModifyAckDeadline call at all (NFR-1, NFR-3); the calls are
// counted on the wire.
func TestPullNoModifyAckDeadlineWhenHandlersShort_NFR3(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs = 30
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 10 * time.Second})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: 10, AckDeadline: 10 * time.Second})
			calls := e.faults.Calls
			for i := range msgs {
				e.send(t, "orders", newMsg(fmt.Sprintf("s-%d", i)))
			}
			r := startLeasePump(t, c, leaseOptions(v, 10), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Ack}
			})
			waitUntil(t, 60*time.Second, "every message acknowledged", func() bool { return r.count(pump.EventAcknowledged) >= msgs })
			r.stop(t)
			if n := calls("ModifyAckDeadline"); n != 0 {
				t.Errorf("ModifyAckDeadline calls = %d, want 0", n)
			}
			if calls("Pull") == 0 || calls("Acknowledge") == 0 {
				t.Errorf("the counter saw no Pull (%d) or Acknowledge (%d): it does not see the consumer's calls", calls("Pull"), calls("Acknowledge"))
			}
		})
	}
}

// A ModifyAckDeadline that fails is logged at Error with the message id and
// the message is released to the broker, never lost: once the fault is
// gone it is delivered again and acknowledged, and the source ends empty
// (issue 12 fault test).
func TestPullFailedExtensionLoggedAndReleased(t *testing.T) {
	t.Parallel()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: gcpLease})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: 1, AckDeadline: gcpLease})
			e.faults.FailModifyAckDeadline(true)
			e.send(t, "orders", newMsg("f-1"))
			var first atomic.Bool
			r := startLeasePump(t, c, leaseOptions(v, 1), func(ctx context.Context, m *message.Message) pump.Result {
				if first.CompareAndSwap(false, true) {
					// Slower than the lease while every extension fails.
					sleepFor(ctx, gcpLease*3/2)
				}
				return pump.Result{Outcome: pump.Ack}
			})
			waitUntil(t, 30*time.Second, "a failed extension", func() bool { return r.count(pump.EventLeaseExtendFailed) > 0 })
			e.faults.FailModifyAckDeadline(false)
			waitUntil(t, 60*time.Second, "the message acknowledged", func() bool { return r.count(pump.EventAcknowledged) > 0 })
			time.Sleep(e.quietWindow(t, "orders-sub")) // observation window: a lost or unsettled message would come back
			r.stop(t)
			if n := r.handled()["f-1"]; n < 1 {
				t.Errorf("f-1 handled %d times, want at least once", n)
			}
			logs := r.logText()
			want := fmt.Sprintf(`"level":"ERROR","msg":%q`, pump.LogLeaseExtendFailed)
			if !strings.Contains(logs, want) || !strings.Contains(logs, `"f-1"`) {
				t.Errorf("log lacks an ERROR %q naming f-1:\n%s", pump.LogLeaseExtendFailed, logs)
			}
			if left := e.drain(t, "orders-sub"); len(left) != 0 {
				t.Errorf("source still holds %v", left)
			}
		})
	}
}
