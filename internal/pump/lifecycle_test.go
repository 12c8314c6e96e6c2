package pump_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// stamps records the times of receive calls through the receive fault hook.
type stamps struct {
	mu sync.Mutex
	ts []time.Time
}

func (s *stamps) add() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ts = append(s.ts, time.Now())
	return len(s.ts)
}

func (s *stamps) get() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.ts...)
}

// Channel failure: a receive failing with broker.ErrChannelFailure emits a
// channel-failure event, the pump backs off by channelFailureDelay between
// receives, and it recovers when the channel does.
func TestChannelFailureBacksOffAndRecovers_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		const failures = 3
		const backoff = 60 * time.Millisecond
		var calls stamps
		e.b.SetReceiveFault(func(string, *message.Message) error {
			if calls.add() <= failures {
				return errors.New("connection refused")
			}
			return nil
		})
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.ChannelFailureDelay = backoff
		e.start(t, opts, ack)
		polltest.Until(t, 10*time.Second, "recovery", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
		ts := calls.get()
		if len(ts) < failures+1 {
			t.Fatalf("receive calls = %d, want at least %d", len(ts), failures+1)
		}
		for i := 1; i <= failures; i++ {
			if gap := ts[i].Sub(ts[i-1]); gap < backoff {
				t.Errorf("receive %d came %v after failed receive %d, want at least %v", i+1, gap, i, backoff)
			}
		}
		cf := e.events.Of(pump.EventChannelFailure)
		if len(cf) != failures {
			t.Fatalf("channel-failure events = %d, want %d", len(cf), failures)
		}
		if !errors.Is(cf[0].Err, broker.ErrChannelFailure) || cf[0].Delay != backoff {
			t.Errorf("channel-failure event = %+v, want ErrChannelFailure with Delay %v", cf[0], backoff)
		}
		if recs := withMsg(e.logs.records(t), pump.LogChannelFailure); len(recs) != failures {
			t.Errorf("channel-failure records = %d, want %d", len(recs), failures)
		}
		if err := e.stop(t); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

// Empty-channel delay: after an empty receive the pump waits
// emptyChannelDelay before receiving again.
func TestEmptyChannelDelay_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		const delay = 50 * time.Millisecond
		var calls stamps
		e.b.SetReceiveFault(func(string, *message.Message) error { calls.add(); return nil })
		opts := fastOptions(v)
		opts.EmptyChannelDelay = delay
		e.start(t, opts, ack)
		polltest.Until(t, 10*time.Second, "4 receives", func() bool { return len(calls.get()) >= 4 })
		if err := e.stop(t); err != nil {
			t.Fatalf("Run = %v", err)
		}
		ts := calls.get()
		for i := 1; i < 4; i++ {
			if gap := ts[i].Sub(ts[i-1]); gap < delay+opts.TimeOut {
				t.Errorf("receive %d came %v after empty receive %d, want at least %v", i+1, gap, i, delay+opts.TimeOut)
			}
		}
	})
}

// Graceful stop: cancelling the context while a handler runs lets it
// finish, and the messages already received but not dispatched are handed
// to the handler within the drain timeout instead of being released (each
// release would cost a delivery the broker counts, with no handler run);
// every one is acknowledged and Run returns nil.
func TestGracefulStopHandlesWhatIsBufferedWithinTheDrain_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 6})
		for i := range 6 {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		started := make(chan struct{})
		release := make(chan struct{})
		opts := fastOptions(v)
		opts.BufferSize = 6
		var once sync.Once
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			once.Do(func() { close(started) })
			<-release
			return pump.Result{Outcome: pump.Ack}
		})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("handler never started")
		}
		e.run() // the stop signal, five messages buffered behind the running one
		close(release)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if got := e.calls.Load(); got != 6 {
			t.Errorf("handler invocations = %d, want 6 (the running one and the five buffered)", got)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 6 {
			t.Errorf("acknowledged = %d, want 6", n)
		}
		if left := e.receiveAll(t, srcQueue); len(left) != 0 {
			t.Errorf("receivable after the stop = %d, want 0 (every buffered message handled, none released)", len(left))
		}
	})
}

// Graceful stop whose drain ends while a handler still runs: the buffered
// messages that could not start before the drain ended are released at once
// (not lost); the running handler's acknowledgement still settles its
// message; Run returns nil.
func TestGracefulStopReleasesWhatCannotStartBeforeTheDrainEnds_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		// One receive returns the whole batch, so when the handler runs the
		// other five are held by the pump, undispatched.
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 6})
		for i := range 6 {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		started := make(chan struct{})
		release := make(chan struct{})
		var hctxErr atomic.Value
		opts := fastOptions(v)
		opts.BufferSize = 6
		opts.DrainTimeout = 300 * time.Millisecond
		var once sync.Once
		cut := make(chan struct{}) // closed when the first handler's context ends
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			once.Do(func() {
				close(started)
				go func() { <-ctx.Done(); close(cut) }()
			})
			<-release
			hctxErr.Store(fmt.Sprint(ctx.Err()))
			return pump.Result{Outcome: pump.Ack}
		})
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("handler never started")
		}
		e.run() // the stop signal
		select {
		case err := <-e.done:
			t.Fatalf("Run returned %v while a handler was still running", err)
		default:
		}
		select { // past the drain: the handler is cut off
		case <-cut:
		case <-time.After(10 * time.Second):
			t.Fatal("the drain's end never cancelled the running handler")
		}
		close(release)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if got := hctxErr.Load(); got != "context canceled" {
			t.Errorf("handler context error = %v, want it cancelled at the end of the drain", got)
		}
		if got := e.calls.Load(); got != 1 {
			t.Errorf("handler invocations = %d, want 1", got)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want the in-flight message acked", n)
		}
		left := e.receiveAll(t, srcQueue)
		if len(left) != 5 {
			t.Fatalf("receivable at once after the stop = %d, want the 5 undispatched messages released", len(left))
		}
		for _, m := range left {
			if m.Header.HandledCount != 1 {
				t.Errorf("%s presents %d, want 1 (second delivery)", m.Header.MessageID, m.Header.HandledCount)
			}
		}
	})
}

// Drain timeout: a handler still running when DrainTimeout expires has its
// context cancelled and Run returns; its message stays on the broker.
func TestDrainTimeoutCancelsHandler_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		e.publish(t, srcQueue, "m1", "")
		started := make(chan struct{})
		const drain = 100 * time.Millisecond
		opts := fastOptions(v)
		opts.DrainTimeout = drain
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			close(started)
			<-ctx.Done()
			return pump.Result{Outcome: pump.Defer, Err: ctx.Err()}
		})
		<-started
		t0 := time.Now()
		e.run()
		if err := e.wait(t, 5*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if took := time.Since(t0); took < drain {
			t.Errorf("Run returned %v after the stop, before the drain timeout %v", took, drain)
		}
		if d := e.b.Depth(srcQueue); d != 1 {
			t.Errorf("source depth = %d, want the message kept", d)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 0 {
			t.Errorf("acknowledged = %d, want 0", n)
		}
	})
}

// Drain timeout with a handler that ignores its context: Run still returns,
// leaving the unsettled message to the broker.
func TestDrainTimeoutLeavesStuckHandlerMessage_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		e.publish(t, srcQueue, "m1", "")
		started := make(chan struct{})
		stuck := make(chan struct{})
		t.Cleanup(func() { close(stuck) })
		opts := fastOptions(v)
		opts.DrainTimeout = 50 * time.Millisecond
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			close(started)
			<-stuck
			return pump.Result{Outcome: pump.Ack}
		})
		<-started
		e.run()
		if err := e.wait(t, 5*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if d := e.b.Depth(srcQueue); d != 1 {
			t.Errorf("source depth = %d, want the message left to the broker", d)
		}
	})
}

// noOfPerformers: N performers run N handlers at once, never more.
func TestNoOfPerformersRunsConcurrently_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const n = 3
		e := newEnv(t, memory.ConsumerOptions{StopWhenEmpty: true})
		for i := range 4 * n {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		var cur, peak atomic.Int64
		release := make(chan struct{})
		opts := fastOptions(v)
		opts.NoOfPerformers = n
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			c := cur.Add(1)
			for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
			}
			<-release
			cur.Add(-1)
			return pump.Result{Outcome: pump.Ack}
		})
		polltest.Until(t, 10*time.Second, fmt.Sprintf("%d concurrent handlers", n), func() bool { return peak.Load() == n })
		close(release)
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if p := peak.Load(); p != n {
			t.Errorf("peak concurrency = %d, want %d", p, n)
		}
		if got := e.events.Count(pump.EventAcknowledged); got != 4*n {
			t.Errorf("acknowledged = %d, want %d", got, 4*n)
		}
	})
}

// The Proactor keeps per-partition-key order with several workers and
// bounds the messages it holds; the Reactor (one performer) keeps order
// too.
func TestPartitionKeyOrderAndBoundedInFlight_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		const perKey = 40
		keys := []string{"a", "b", "c", "d", "e"}
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 2, StopWhenEmpty: true})
		for i := range perKey {
			for _, k := range keys {
				e.publish(t, srcQueue, fmt.Sprintf("%s-%03d", k, i), k)
			}
		}
		cc := &countingConsumer{Consumer: e.c}
		opts := fastOptions(v)
		opts.BufferSize = 2
		if v == pump.Proactor {
			opts.NoOfPerformers = 3
		}
		var mu sync.Mutex
		last := map[string]string{}
		var disorder []string
		e.startWith(t, cc, opts, func(ctx context.Context, m *message.Message) pump.Result {
			k := m.Header.PartitionKey
			mu.Lock()
			if prev := last[k]; prev >= m.Header.MessageID {
				disorder = append(disorder, prev+" before "+m.Header.MessageID)
			}
			last[k] = m.Header.MessageID
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 20*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if len(disorder) > 0 {
			t.Errorf("per-key order broken: %v", disorder)
		}
		if got := e.events.Count(pump.EventAcknowledged); got != perKey*len(keys) {
			t.Errorf("acknowledged = %d, want %d", got, perKey*len(keys))
		}
		// Bound: lanes and shared queue (2 x n x bufferSize), one batch per
		// receiver, one message per worker, the settlers' queue (2 x n x
		// bufferSize) and a batch of 10 per settler (one per performer).
		n, b := int64(opts.NoOfPerformers), int64(opts.BufferSize)
		bound := 2*n*b + n*b + n + 2*n*b + 10*max(n, 1)
		if got := cc.maxOut.Load(); got > bound {
			t.Errorf("pump held %d unsettled messages at once, want at most %d", got, bound)
		}
	})
}

// enteringConsumer tells entered whenever a Receive begins and records
// whether a Receive saw its context cancelled.
type enteringConsumer struct {
	broker.Consumer
	entered   chan struct{}
	cancelled atomic.Bool
}

func (c *enteringConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	select {
	case c.entered <- struct{}{}:
	default:
	}
	ms, err := c.Consumer.Receive(ctx, timeout)
	if ctx.Err() != nil {
		c.cancelled.Store(true)
	}
	return ms, err
}

// A stop does not cancel a receive already waiting on the broker (a long
// poll abandoned by its client can still take a message on the broker's
// side and leave it invisible, a delivery spent): the receive runs to its
// end, and a message it brings is handed to the handler within the drain,
// not released with a delivery spent and no handler run (NFR-8, ADR 0004).
func TestStopLetsTheReceiveInProgressEndAndHandlesWhatItBrought_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1})
		c := &enteringConsumer{Consumer: e.c, entered: make(chan struct{}, 1)}
		opts := fastOptions(v)
		opts.TimeOut = 500 * time.Millisecond
		opts.NoOfPerformers = 2 // in the Reactor too: a second performer's receive must not take the released message
		e.startWith(t, c, opts, ack)
		select {
		case <-c.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("no receive began")
		}
		e.run() // the stop signal, while the receive waits on an empty queue
		e.publish(t, srcQueue, "late", "")
		if err := e.wait(t, 10*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if c.cancelled.Load() {
			t.Error("a receive saw its context cancelled by the stop")
		}
		if n := e.calls.Load(); n != 1 {
			t.Errorf("handler invocations = %d, want 1 (the late message handled within the drain)", n)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want 1", n)
		}
		if left := e.receiveAll(t, srcQueue); len(left) != 0 {
			t.Fatalf("receivable after the stop: %d messages %v, want none", len(left), left)
		}
	})
}

// A handler cut off by the drain timeout did not get to decide: its message
// is released at once, neither counted nor judged, so a stop does not spend
// the redelivery budget the way a handler's Defer does (with requeueCount
// 1 a counted Defer would have exhausted it, and a slow handler's message
// was dead-lettered after two restarts).
func TestDrainTimeoutCutOff_ReleasesWithoutCountingOrRejecting_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue})
		e.publish(t, srcQueue, "slow", "")
		started := make(chan struct{})
		opts := fastOptions(v)
		opts.DrainTimeout = 50 * time.Millisecond
		opts.RequeueCount = 1
		e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
			close(started)
			<-ctx.Done()
			return pump.Result{Outcome: pump.Defer, Err: ctx.Err()}
		})
		<-started
		e.run()
		if err := e.wait(t, 5*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if n := e.events.Count(pump.EventRejected) + e.events.Count(pump.EventBudgetExhausted); n != 0 {
			t.Fatalf("%d rejection or budget events, want none for a cut-off handler", n)
		}
		cut := e.events.Of(pump.EventDeferred)
		if len(cut) != 1 || !errors.Is(cut[0].Err, pump.ErrCutOff) || cut[0].DeliveryCount != 0 {
			t.Fatalf("deferred events %+v, want one ErrCutOff with the count unchanged (0)", cut)
		}
		if d := e.b.Depth(dlqQueue); d != 0 {
			t.Fatalf("dead-letter queue holds %d, want 0", d)
		}
		if recs := withMsg(e.logs.records(t), pump.LogCutOff); len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["message_id"] != "slow" {
			t.Errorf("cut-off log records %v, want one Warn naming the message", recs)
		}
		if recs := withMsg(e.logs.records(t), pump.LogHandlerFailed); len(recs) != 0 {
			t.Errorf("a cut-off handler was logged as failed: %v", recs)
		}
		left := e.receiveAll(t, srcQueue)
		if len(left) != 1 || left[0].Header.MessageID != "slow" {
			t.Fatalf("source after the stop: %v, want 'slow' visible at once", left)
		}
	})
}

// The dead-letter copy of a message whose budget ran out says why the last
// delivery failed: the handler's Reason, or else its error (an exec
// handler's exit 1 and stderr, an http 500).
func TestBudgetExhausted_DescriptionCarriesTheLastError_R18(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue})
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.RequeueCount = 1
		e.start(t, opts, func(context.Context, *message.Message) pump.Result {
			return pump.Result{Outcome: pump.Defer, Err: errors.New("exit status 1: poison body")}
		})
		polltest.Until(t, 5*time.Second, "a rejection", func() bool { return e.events.Count(pump.EventRejected) == 1 })
		rj := e.events.Of(pump.EventRejected)[0]
		if !strings.HasPrefix(rj.Description, "redelivery budget exhausted: delivery count 1 reached requeueCount 1 (delivered 1 time, handled 1 time in this process)") ||
			!strings.HasSuffix(rj.Description, ": exit status 1: poison body") {
			t.Fatalf("description %q, want the budget text and the handler's error", rj.Description)
		}
		if rj.Duration <= 0 {
			t.Errorf("rejected event Duration %v, want the handler's run time", rj.Duration)
		}
	})
}

// Every event that ends a handler run carries how long it took, including
// acknowledgements settled in batches by the Proactor's settlers.
func TestOutcomeEventsCarryHandlerDuration(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		for i := range 3 {
			e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
		}
		e.start(t, fastOptions(v), func(context.Context, *message.Message) pump.Result {
			time.Sleep(2 * time.Millisecond) // the handler's work, measured
			return pump.Result{Outcome: pump.Ack}
		})
		polltest.Until(t, 5*time.Second, "three acknowledgements", func() bool { return e.events.Count(pump.EventAcknowledged) == 3 })
		for _, ev := range e.events.Of(pump.EventAcknowledged) {
			if ev.Duration < 2*time.Millisecond {
				t.Errorf("%s acknowledged with Duration %v, want the handler's >= 2ms", ev.MessageID(), ev.Duration)
			}
		}
	})
}

// CutOff (consume's second signal) stops the run and cancels running
// handlers at once, without waiting for the drain timeout; the cut-off
// message is released, not counted.
func TestCutOffStopsAndCancelsHandlersAtOnce_NFR8(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		e.publish(t, srcQueue, "slow", "")
		started := make(chan struct{})
		opts := fastOptions(v)
		opts.DrainTimeout = time.Minute
		c := e.c
		h := func(ctx context.Context, m *message.Message) pump.Result {
			close(started)
			<-ctx.Done()
			return pump.Result{Outcome: pump.Defer, Err: ctx.Err()}
		}
		p, err := pump.New(c, h, opts, e.events)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(context.Background()) }()
		<-started
		p.CutOff()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return soon after CutOff (drain timeout is a minute)")
		}
		cut := e.events.Of(pump.EventDeferred)
		if len(cut) != 1 || !errors.Is(cut[0].Err, pump.ErrCutOff) {
			t.Fatalf("deferred events %+v, want one ErrCutOff", cut)
		}
		if left := e.receiveAll(t, srcQueue); len(left) != 1 {
			t.Fatalf("source holds %d visible, want the cut-off message released", len(left))
		}
	})
}

// TestRepeatedChannelFailuresBackOffExponentiallyAndStall: a
// channel that keeps failing is retried after a pause that doubles up to
// maxChannelFailureDelay (not channelFailureDelay for ever); once it has
// failed for stallAfter the pump reports it stalled, once; when it
// answers again the pump reports it recovered and handles the message.
func TestRepeatedChannelFailuresBackOffExponentiallyAndStall(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{})
		const failures = 6
		var calls stamps
		e.b.SetReceiveFault(func(string, *message.Message) error {
			if calls.add() <= failures {
				return errors.New("no credentials")
			}
			return nil
		})
		e.publish(t, srcQueue, "m1", "")
		opts := fastOptions(v)
		opts.ChannelFailureDelay = 5 * time.Millisecond
		opts.MaxChannelFailureDelay = 40 * time.Millisecond
		opts.StallAfter = 30 * time.Millisecond
		e.start(t, opts, ack)
		polltest.Until(t, 10*time.Second, "recovery", func() bool { return e.events.Count(pump.EventAcknowledged) == 1 })
		cf := e.events.Of(pump.EventChannelFailure)
		if len(cf) != failures {
			t.Fatalf("channel-failure events = %d, want %d", len(cf), failures)
		}
		for i, f := range cf {
			want := min(opts.ChannelFailureDelay<<i, opts.MaxChannelFailureDelay)
			if f.Failures != i+1 || f.Delay < want/2 || f.Delay > want || f.Delay < opts.ChannelFailureDelay {
				t.Errorf("failure %d: failures %d, delay %s; want %d and a delay within [%s, %s]", i+1, f.Failures, f.Delay, i+1, want/2, want)
			}
			if !f.Since.Equal(cf[0].Since) {
				t.Errorf("failure %d: since %s, want the episode's start %s", i+1, f.Since, cf[0].Since)
			}
		}
		if st := e.events.Of(pump.EventStalled); len(st) != 1 || st[0].Err == nil {
			t.Errorf("stalled events = %+v, want one with the last error", st)
		}
		rec := e.events.Of(pump.EventChannelRecovered)
		if len(rec) != 1 || rec[0].Failures != failures {
			t.Errorf("recovered events = %+v, want one after %d failures", rec, failures)
		}
		if err := e.stop(t); err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}
