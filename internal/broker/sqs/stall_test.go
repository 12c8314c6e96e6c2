package sqs

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// blackHole is HTTP middleware that, while on, holds the requests of the
// chosen operations until their context ends, as a server that accepts a
// connection and never answers does. Nothing reaches the
// emulator, so a held receive takes no message and a held delete leaves
// the message on the queue.
type blackHole struct {
	inner aws.HTTPClient
	ops   map[string]bool
	on    atomic.Bool
	held  atomic.Int64

	mu        sync.Mutex
	deadlines map[string][]time.Duration // per operation held: how long its context allowed when it arrived
}

func (b *blackHole) Do(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	if b.on.Load() && b.ops[op] {
		b.held.Add(1)
		var left time.Duration // 0: no deadline
		if dl, ok := r.Context().Deadline(); ok {
			left = time.Until(dl)
		}
		b.mu.Lock()
		if b.deadlines == nil {
			b.deadlines = map[string][]time.Duration{}
		}
		b.deadlines[op] = append(b.deadlines[op], left)
		b.mu.Unlock()
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return b.inner.Do(r)
}

// assertBound fails unless some call of ops was held, and every held call
// arrived with a deadline of at most want and more than want-slack: the
// configured bound, not some deadline (the SDK's own, DefaultCallDeadline,
// is 15 s).
func (b *blackHole) assertBound(t *testing.T, ops []string, want time.Duration) {
	t.Helper()
	const slack = time.Second
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, op := range ops {
		for _, left := range b.deadlines[op] {
			n++
			if left <= 0 || left > want || left < want-slack {
				t.Errorf("%s arrived with %s left of its deadline, want %s (the configured bound)", op, left.Round(time.Millisecond), want)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no %v call was held", ops)
	}
}

func blackHoled(t testing.TB, ops ...string) (*Clients, *blackHole) {
	t.Helper()
	b := &blackHole{inner: awshttp.NewBuildableClient(), ops: map[string]bool{}}
	for _, op := range ops {
		b.ops[op] = true
	}
	b.on.Store(true)
	cfg := sqstest.Config()
	cfg.HTTPClient = b
	cfg.RetryMaxAttempts = 1
	return NewClientsFromConfig(cfg, endpoint), b
}

// TestBlackHoledReceiveTimesOutAndRecovers: a ReceiveMessage the
// broker never answers is abandoned at timeOut + receiveMargin as a
// channel failure (backing off, the timeout in its error); after stallAfter
// the subscription is stalled and readiness says so; once the fault is
// lifted the channel recovers, readiness returns, and the message waiting
// on the queue is handled: nothing lost. Both variants.
func TestBlackHoledReceiveTimesOutAndRecovers(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c, hole := blackHoled(t, "ReceiveMessage")
			q := uniq("hole-recv-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
			m := newMessage(q)
			send(t, testClients(t), ProducerOptions{}, m)
			events := pumptest.NewEvents()
			health := observe.NewHealth()
			health.SetReady()
			pumptest.RunPump(t, k, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} },
				pump.Options{Subscription: q, Variant: v, TimeOut: time.Second, ReceiveMargin: 300 * time.Millisecond,
					ChannelFailureDelay: 20 * time.Millisecond, MaxChannelFailureDelay: 100 * time.Millisecond, StallAfter: 2 * time.Second, RequeueCount: 3},
				health, events) // health first: observers run in order, so it has seen each event before await returns
			f := events.Await(t, pump.EventChannelFailure, 20*time.Second, nil)
			if !errors.Is(f.Err, context.DeadlineExceeded) || !strings.Contains(f.Err.Error(), "no answer within") {
				t.Fatalf("channel failure error = %v, want the receive deadline", f.Err)
			}
			if f.Delay <= 0 {
				t.Fatalf("channel failure delay = %s, want a back-off", f.Delay)
			}
			events.Await(t, pump.EventStalled, 20*time.Second, nil)
			if ok, why := health.Ready(); ok || !strings.Contains(why, "subscription "+q+": no successful broker call since") {
				t.Fatalf("readiness while stalled = %v %q", ok, why)
			}
			hole.on.Store(false)
			events.Await(t, pump.EventChannelRecovered, 20*time.Second, nil)
			if ok, why := health.Ready(); !ok {
				t.Fatalf("not ready after recovery: %s", why)
			}
			got := events.Await(t, pump.EventAcknowledged, 20*time.Second, nil)
			if got.MessageID() != m.Header.MessageID {
				t.Fatalf("acknowledged %s, want %s", got.MessageID(), m.Header.MessageID)
			}
			if hole.held.Load() == 0 {
				t.Fatal("no receive was held by the black hole")
			}
		})
	}
}

// TestBlackHoledSettleTimesOutAndRecovers: an acknowledge the
// broker never answers fails at callTimeout (settle-failed, the deadline
// in its error) and the message stays on the queue; once the fault is
// lifted it is redelivered and acknowledged: nothing lost. Both variants
// (the Proactor acknowledges in batches).
func TestBlackHoledSettleTimesOutAndRecovers(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c, hole := blackHoled(t, "DeleteMessage", "DeleteMessageBatch")
			q := uniq("hole-settle-" + string(v))
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{VisibilityTimeout: time.Second})
			m := newMessage(q)
			send(t, testClients(t), ProducerOptions{}, m)
			events := pumptest.NewEvents()
			pumptest.RunPump(t, k, func(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} },
				pump.Options{Subscription: q, Variant: v, TimeOut: time.Second, CallTimeout: 300 * time.Millisecond, RequeueCount: 3}, events)
			f := events.Await(t, pump.EventSettleFailed, 20*time.Second, nil)
			if !errors.Is(f.Err, context.DeadlineExceeded) || f.MessageID() != m.Header.MessageID {
				t.Fatalf("settle failure = %s %v, want %s with a deadline", f.MessageID(), f.Err, m.Header.MessageID)
			}
			hole.on.Store(false)
			events.Await(t, pump.EventAcknowledged, 20*time.Second, func(e pump.Event) bool { return e.MessageID() == m.Header.MessageID })
			if n := depth(t, testClients(t), q); n != 0 {
				t.Fatalf("queue depth %d after the acknowledge, want 0", n)
			}
		})
	}
}

// opCounter is HTTP middleware counting the SQS operations that pass.
type opCounter struct {
	inner aws.HTTPClient
	mu    sync.Mutex
	ops   map[string]int
}

func (c *opCounter) Do(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	c.mu.Lock()
	c.ops[op]++
	c.mu.Unlock()
	return c.inner.Do(r)
}

// countedClients returns clients of the test's endpoint whose every call
// goes through an opCounter, and the counter.
func countedClients() (*Clients, *opCounter) {
	counter := &opCounter{inner: awshttp.NewBuildableClient(), ops: map[string]int{}}
	cfg := sqstest.Config()
	cfg.HTTPClient = counter
	return NewClientsFromConfig(cfg, endpoint), counter
}

func (c *opCounter) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops[op]
}

// TestRoutingFailureReleaseBacksOff: with makeChannels assume and a
// dead-letter queue that does not exist, every rejection routing fails and
// the message is released with a delay that doubles with SQS's
// receive count (1 s, 2 s, 4 s, ...), so in the first 6 s its routing is
// tried a handful of times and costs a handful of SendMessage calls (it was
// 1,200 handler invocations in 10 s); the handler runs once, its rejection
// being final. Once the queue exists the next
// redelivery routes it: nothing lost. Both variants.
func TestRoutingFailureReleaseBacksOff(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c, counter := countedClients()
			q := uniq("route-backoff-" + string(v))
			dlq := q + "-dlq"
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{DeadLetter: dlq})
			m := newMessage(q)
			send(t, testClients(t), ProducerOptions{}, m)
			var handled atomic.Int64
			events := pumptest.NewEvents()
			start := time.Now()
			pumptest.RunPump(t, k, func(context.Context, *message.Message) pump.Result {
				handled.Add(1)
				return pump.Result{Outcome: pump.Reject, Reason: "cannot deliver"}
			}, pump.Options{Subscription: q, Variant: v, TimeOut: 500 * time.Millisecond, RequeueCount: 3}, events)
			first := events.Await(t, pump.EventRejected, 20*time.Second, nil)
			if first.Err == nil || first.Delay != time.Second {
				t.Fatalf("first rejection: err %v, release delay %s; want a routing failure released for 1s", first.Err, first.Delay)
			}
			// Poll the window out: the counts may only stay small.
			window := 6 * time.Second
			for time.Since(start) < window {
				if n := events.Count(pump.EventRejected); n > 4 {
					t.Fatalf("routed %d times in %s, want at most 4 (1 s, 2 s, 4 s back-off)", n, time.Since(start).Round(time.Millisecond))
				}
				time.Sleep(100 * time.Millisecond)
			}
			n, sends := events.Count(pump.EventRejected), counter.count("SendMessage")
			if n < 2 || n > 4 || sends > 4 {
				t.Fatalf("in %s: routed %d times, %d SendMessage calls; want 2..4 and at most 4", window, n, sends)
			}
			if h := handled.Load(); h != 1 {
				t.Fatalf("handled %d times, want 1: a rejection whose routing failed is routed again without a handler run", h)
			}
			var delays []time.Duration
			for _, e := range events.Of(pump.EventRejected) {
				delays = append(delays, e.Delay)
			}
			for i, d := range delays {
				if want := time.Second << i; d != want {
					t.Fatalf("release delays %v, want doubling from 1s", delays)
				}
			}
			if err := NewChannelMaker(testClients(t), ChannelOptions{Queue: dlq}).EnsureChannels(context.Background()); err != nil {
				t.Fatal(err)
			}
			events.Await(t, pump.EventRejected, 30*time.Second, func(e pump.Event) bool { return e.Err == nil && e.Destination == dlq })
			if d := depth(t, testClients(t), dlq); d != 1 {
				t.Fatalf("dead-letter queue depth %d, want 1", d)
			}
		})
	}
}

// TestOversizedRejectionEndsBounded: a 1,048,000-byte message can
// be received but its routed copy (the body plus rejection metadata) is over
// SQS's 1 MiB limit, so the routing can never succeed. The Router tries
// once more with the rejection message shortened (both refused before any
// SendMessage by checkLimits), then classifies the
// failure permanent: one Error, the message released for the longest delay
// (10 min), counted; it is not handled again within the test's window, and
// it is still on the queue (nothing lost). Both variants.
func TestOversizedRejectionEndsBounded(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c, counter := countedClients()
			q := uniq("oversized-" + string(v))
			dlq := q + "-dlq"
			if err := NewChannelMaker(testClients(t), ChannelOptions{Queue: dlq}).EnsureChannels(context.Background()); err != nil {
				t.Fatal(err)
			}
			sink, logger := newSink()
			k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{DeadLetter: dlq, Logger: logger})
			m := newMessage(q)
			m.Body = []byte(strings.Repeat("x", 1_048_000))
			send(t, testClients(t), ProducerOptions{}, m)
			var handled atomic.Int64
			events := pumptest.NewEvents()
			pumptest.RunPump(t, k, func(context.Context, *message.Message) pump.Result {
				handled.Add(1)
				return pump.Result{Outcome: pump.Reject, Reason: strings.Repeat("the downstream service refused it; ", 10)}
			}, pump.Options{Subscription: q, Variant: v, TimeOut: 500 * time.Millisecond, RequeueCount: 3}, events)
			rej := events.Await(t, pump.EventRejected, 30*time.Second, nil)
			if !rej.Permanent || !errors.Is(rej.Err, broker.ErrTooLarge) || rej.Delay != broker.RoutingRetryMax {
				t.Fatalf("rejected event: permanent %v, delay %s, err %v; want permanent, %s, too large", rej.Permanent, rej.Delay, rej.Err, broker.RoutingRetryMax)
			}
			if n := counter.count("SendMessage"); n != 0 {
				t.Fatalf("%d SendMessage calls, want 0 (the copy, then once shortened, both refused before the call by checkLimits)", n)
			}
			// Several receive timeouts: the released message must stay away.
			quiet := time.Now().Add(3 * time.Second)
			for time.Now().Before(quiet) {
				if n := handled.Load(); n != 1 {
					t.Fatalf("handled %d times, want once", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if n := counter.count("SendMessage"); n != 0 {
				t.Fatalf("%d SendMessage calls after the quiet window, want 0", n)
			}
			if d := depth(t, testClients(t), q); d != 1 {
				t.Fatalf("source depth %d, want 1: the message stays on the broker", d)
			}
			if d := depth(t, testClients(t), dlq); d != 0 {
				t.Fatalf("dead-letter depth %d, want 0", d)
			}
			if r, ok := sink.find(slog.LevelError, broker.LogRoutingPermanent); !ok || r.Attrs["message_id"] != m.Header.MessageID {
				t.Fatalf("no Error %q naming %s: %+v", broker.LogRoutingPermanent, m.Header.MessageID, r)
			}
		})
	}
}

// TestBlackHoledCallsEndAtTheirBound: every call kind the pump makes
// has a deadline of its own, the configured one (a call without
// one would be ended only by the SDK's 15 s default): an acknowledge
// (DeleteMessage; the Proactor's DeleteMessageBatch) and a requeue
// (ChangeMessageVisibility) at callTimeout, the dead-letter publish of a
// rejection (SendMessage) at callTimeout, a lease extension
// (ChangeMessageVisibilityBatch) at a quarter of the lease clamped to
// [1 s, 10 s], a receive at timeOut plus receiveMargin. The held call fails
// (settle-failed, rejected with an error, extension failed, channel
// failure) and the message stays on the queue. Both variants.
func TestBlackHoledCallsEndAtTheirBound(t *testing.T) {
	const callTimeout = 2500 * time.Millisecond
	cases := []struct {
		name    string
		ops     []string
		outcome pump.Outcome
		hold    time.Duration // the handler's time
		event   pump.EventKind
		bound   time.Duration
	}{
		{"acknowledge", []string{"DeleteMessage", "DeleteMessageBatch"}, pump.Ack, 0, pump.EventSettleFailed, callTimeout},
		{"requeue", []string{"ChangeMessageVisibility"}, pump.Defer, 0, pump.EventSettleFailed, callTimeout},
		{"reject", []string{"SendMessage"}, pump.Reject, 0, pump.EventRejected, callTimeout},
		{"extend", []string{"ChangeMessageVisibilityBatch"}, pump.Ack, 3 * time.Second, pump.EventLeaseExtendFailed, time.Second},
		{"receive", []string{"ReceiveMessage"}, pump.Ack, 0, pump.EventChannelFailure, time.Second + 300*time.Millisecond},
	}
	for _, tc := range cases {
		for _, v := range pumptest.Variants {
			t.Run(tc.name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				c, hole := blackHoled(t, tc.ops...)
				hole.on.Store(false)
				q := uniq("bound-" + tc.name + "-" + string(v))
				k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: q + "-dlq"}, ConsumerOptions{VisibilityTimeout: 2 * time.Second})
				m := newMessage(q)
				send(t, testClients(t), ProducerOptions{}, m)
				if tc.name == "receive" {
					hole.on.Store(true)
				}
				events := pumptest.NewEvents()
				pumptest.RunPump(t, k, func(ctx context.Context, _ *message.Message) pump.Result {
					hole.on.Store(true)
					pumptest.SleepFor(ctx, tc.hold)
					return pump.Result{Outcome: tc.outcome, Reason: "poison"}
				}, pump.Options{Subscription: q, Variant: v, TimeOut: time.Second, ReceiveMargin: 300 * time.Millisecond,
					CallTimeout: callTimeout, RequeueCount: 3, ChannelFailureDelay: 20 * time.Millisecond}, events)
				events.Await(t, tc.event, 30*time.Second, func(e pump.Event) bool { return tc.event != pump.EventRejected || e.Err != nil })
				hole.assertBound(t, tc.ops, tc.bound)
				if n := depth(t, testClients(t), q); n != 1 {
					t.Errorf("queue depth %d after the held %s, want 1: the message stays", n, tc.name)
				}
			})
		}
	}
}
