// Package pumptest is the test support the transports' integration tests
// share to run the pump over a real broker consumer: a pump started and
// stopped with the test (Start, RunPump), its events recorded and awaited
// (Events), its JSON log and the handler's invocations per message id kept
// (Run), the options of a lease test (Options), polling within a deadline
// (WaitUntil) and for a whole observation window (Stays), and the assertion on refused credentials every transport
// makes (NotAuthorizedBackOff).
//
// Each transport's tests bring their own consumer: this package knows no
// transport. It is for tests; no program uses it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker, internal/message, internal/polltest, internal/pump
//
// Imported by: internal/cmd/cmdtest
package pumptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// Variants is the table every pump behaviour runs over: both of Brighter's
// variants: every behaviour is proven in both, as the conformance ledger
// proves each row in both (docs/testing.md).
var Variants = []pump.Variant{pump.Reactor, pump.Proactor}

// Options returns the pump options of a lease test on subscription "lease":
// variant v, bufferSize messages in flight, a 1 s handler TimeOut, no
// redelivery budget (RequeueCount -1), 10 ms between empty polls and 100 ms
// after a channel failure. Tests set what they prove on the copy.
func Options(v pump.Variant, bufferSize int) pump.Options {
	return pump.Options{Subscription: "lease", Variant: v, BufferSize: bufferSize, TimeOut: time.Second,
		RequeueCount: -1, EmptyChannelDelay: 10 * time.Millisecond, ChannelFailureDelay: 100 * time.Millisecond}
}

// Events is a pump.Observer that keeps every event a pump reports and
// signals each arrival, so a test can wait for one (Await). It is safe for
// concurrent use; the zero value is not: use NewEvents.
type Events struct {
	mu     sync.Mutex
	events []pump.Event
	kinds  chan pump.EventKind
}

// NewEvents returns an empty event record.
func NewEvents() *Events { return &Events{kinds: make(chan pump.EventKind, 1024)} }

// Observe records e (pump.Observer).
func (l *Events) Observe(e pump.Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.kinds <- e.Kind:
	default:
	}
}

// Snapshot returns a copy of every event recorded so far, in order.
func (l *Events) Snapshot() []pump.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]pump.Event(nil), l.events...)
}

// Count returns how many events of kind k were recorded.
func (l *Events) Count(k pump.EventKind) int { return len(l.Of(k)) }

// Of returns the events of kind k recorded so far, in order.
func (l *Events) Of(k pump.EventKind) []pump.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []pump.Event
	for _, e := range l.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// First returns the first event of kind k, and false if there is none yet.
func (l *Events) First(k pump.EventKind) (pump.Event, bool) {
	if of := l.Of(k); len(of) > 0 {
		return of[0], true
	}
	return pump.Event{}, false
}

// Await waits up to within for an event of kind k that matches ok (nil:
// any) and returns it; it fails the test if none comes in time.
func (l *Events) Await(t *testing.T, k pump.EventKind, within time.Duration, ok func(pump.Event) bool) pump.Event {
	t.Helper()
	deadline := time.After(within)
	seen := 0
	for {
		l.mu.Lock()
		for ; seen < len(l.events); seen++ {
			if e := l.events[seen]; e.Kind == k && (ok == nil || ok(e)) {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
		select {
		case <-l.kinds:
		case <-deadline:
			t.Fatalf("no %s event within %s", k, within)
		}
	}
}

// Run is a pump started by Start over a transport's consumer: its events
// (the embedded Events), its JSON log at Debug and the handler's
// invocations per message id are kept.
type Run struct {
	*Events
	mu     sync.Mutex
	logs   bytes.Buffer
	calls  map[string]int
	cancel context.CancelFunc
	done   chan error
}

// Write appends p to the run's log (the pump's slog JSON handler writes here).
func (r *Run) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.Write(p)
}

// LogText returns the run's log so far: one JSON record a line.
func (r *Run) LogText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

// Handled returns a copy of how many times the handler was invoked per
// message id.
func (r *Run) Handled() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.calls {
		out[k] = v
	}
	return out
}

// Start runs a pump over c with opts, h's invocations counted per message
// id, its events recorded and its log kept; the pump is stopped when the
// test ends if Stop has not stopped it before. It fails the test if
// pump.New refuses the options.
func Start(t *testing.T, c broker.Consumer, opts pump.Options, h pump.Handler) *Run {
	t.Helper()
	r := &Run{Events: NewEvents(), calls: map[string]int{}, done: make(chan error, 1)}
	logger := slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug}))
	counted := func(ctx context.Context, m *message.Message) pump.Result {
		r.mu.Lock()
		r.calls[m.Header.MessageID]++
		r.mu.Unlock()
		return h(ctx, m)
	}
	r.cancel, r.done = start(t, c, counted, opts, r, pump.LogObserver{Logger: logger})
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Stop cancels the pump and waits up to 40 s for Run to return, failing
// the test on an error or if it does not stop. A second Stop does nothing.
func (r *Run) Stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	stop(t, r.cancel, r.done, 40*time.Second)
	r.cancel = nil
}

// RunPump runs a pump over c with h, opts and the observers obs until the
// test ends, then cancels it and waits up to 30 s for it to stop, failing
// the test on an error or if it does not stop.
func RunPump(t *testing.T, c broker.Consumer, h pump.Handler, opts pump.Options, obs ...pump.Observer) {
	t.Helper()
	cancel, done := start(t, c, h, opts, obs...)
	t.Cleanup(func() { stop(t, cancel, done, 30*time.Second) })
}

// start builds the pump and runs it in a goroutine; done receives what
// Run returned.
func start(t *testing.T, c broker.Consumer, h pump.Handler, opts pump.Options, obs ...pump.Observer) (context.CancelFunc, chan error) {
	t.Helper()
	p, err := pump.New(c, h, opts, obs...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return cancel, done
}

// stop cancels the pump and waits up to within for its Run to return.
func stop(t *testing.T, cancel context.CancelFunc, done chan error, within time.Duration) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(within):
		t.Error("the pump did not stop")
	}
}

// WaitUntil is polltest.Until: it polls cond every polltest.Interval
// until it holds, failing the test with "timed out after <within> waiting
// for <what>" if within passes first.
func WaitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	polltest.Until(t, within, what, cond)
}

// Stays is polltest.Stays: it checks cond every polltest.Interval for the
// whole window and fails the test with "within <window>: <msg>" the first
// time it does not hold: a negative check (a message must NOT come back),
// failing at the first miss instead of after a blind wait. Callers derive
// window from the lease the broker grants.
func Stays(t testing.TB, window time.Duration, msg string, cond func() bool) {
	t.Helper()
	polltest.Stays(t, window, msg, cond)
}

// SleepFor waits d or until ctx ends, whichever is first: a handler's
// simulated work that stops when the pump cancels it.
func SleepFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// NotAuthorizedBackOff checks a run whose channel was reported stalled
// while the broker refused the credentials: every channel
// failure wraps broker.ErrNotAuthorized and broker.ErrChannelFailure with a
// back-off delay; there were a handful of them (2 to 20: 100 ms doubling to
// a 400 ms cap before a 500 ms StallAfter), not a hot loop; each was
// logged at Error naming the refused credentials; and the channel never
// recovered meanwhile. It fails the test at the first that does not hold.
func NotAuthorizedBackOff(t *testing.T, r *Run) {
	t.Helper()
	fails := r.Of(pump.EventChannelFailure)
	refused := 0
	for _, ev := range fails {
		// On a loaded machine a receive can also outrun its own deadline
		// before the broker's refusal arrives; that is a channel failure
		// too and must back off the same way, but it is not the refusal.
		if !errors.Is(ev.Err, broker.ErrChannelFailure) || ev.Delay <= 0 {
			t.Fatalf("channel failure %+v: want ErrChannelFailure with a back-off", ev)
		}
		if errors.Is(ev.Err, broker.ErrNotAuthorized) {
			refused++
		}
	}
	if refused < 2 {
		t.Fatalf("%d of %d channel failures wrap ErrNotAuthorized, want at least 2: the refusal was not classified", refused, len(fails))
	}
	// 100 ms doubling to a 400 ms cap: a handful, not a hot loop.
	if failures := len(fails); failures < 2 || failures > 20 {
		t.Fatalf("%d channel failures before the stall, want a few backed-off ones", failures)
	}
	logs := r.LogText()
	if want := fmt.Sprintf(`"level":"ERROR","msg":%q`, pump.LogChannelFailure); !strings.Contains(logs, want) || !strings.Contains(logs, "refused the credentials") {
		t.Fatalf("no Error %q naming the refused credentials in:\n%s", pump.LogChannelFailure, logs)
	}
	if n := r.Count(pump.EventChannelRecovered); n != 0 {
		t.Fatalf("%d recoveries while the credentials were refused: the channel flapped", n)
	}
}
