package conformance

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// DispatchCounter counts handler invocations per original message id
// (x-original-message-id, else the message id). Read it after the pump has
// been quit and awaited (R-27(c)).
type DispatchCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// Wrap returns h counting each invocation.
func (d *DispatchCounter) Wrap(h pump.Handler) pump.Handler {
	return func(ctx context.Context, m *message.Message) pump.Result {
		d.mu.Lock()
		if d.counts == nil {
			d.counts = map[string]int{}
		}
		d.counts[m.OriginalID()]++
		d.mu.Unlock()
		return h(ctx, m)
	}
}

// Count returns how many times the message with this original id was
// dispatched.
func (d *DispatchCounter) Count(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts[id]
}

// Reset forgets every count.
func (d *DispatchCounter) Reset() {
	d.mu.Lock()
	d.counts = nil
	d.mu.Unlock()
}

// RejectCall records one Reject made through a RecordingConsumer.
type RejectCall struct {
	ID        string
	Rejection message.Rejection
	Result    broker.RejectResult
}

// RecordingConsumer decorates a real consumer: it records the integer
// delivery count presented at each receive and counts Requeue and Reject
// calls, keyed by original message id (R-27(c)). It forwards
// broker.BatchAcknowledger when the inner consumer offers it.
type RecordingConsumer struct {
	broker.Consumer
	mu       sync.Mutex
	counts   map[string][]int
	requeues map[string]int
	rejects  []RejectCall
}

// NewRecordingConsumer wraps c.
func NewRecordingConsumer(c broker.Consumer) *RecordingConsumer {
	return &RecordingConsumer{Consumer: c, counts: map[string][]int{}, requeues: map[string]int{}}
}

// Receive records the presented count of each message received.
func (r *RecordingConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	ms, err := r.Consumer.Receive(ctx, timeout)
	r.mu.Lock()
	for _, m := range ms {
		if m.Header.MessageType == message.MTQuit || m.Header.MessageType == message.MTNone {
			continue
		}
		id := m.OriginalID()
		r.counts[id] = append(r.counts[id], m.Header.HandledCount)
	}
	r.mu.Unlock()
	return ms, err
}

// Requeue counts the call and forwards it.
func (r *RecordingConsumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	r.mu.Lock()
	r.requeues[m.OriginalID()]++
	r.mu.Unlock()
	return r.Consumer.Requeue(ctx, m, delay)
}

// Reject records the call and its result and forwards it.
func (r *RecordingConsumer) Reject(ctx context.Context, m *message.Message, rej message.Rejection) broker.RejectResult {
	res := r.Consumer.Reject(ctx, m, rej)
	r.mu.Lock()
	r.rejects = append(r.rejects, RejectCall{ID: m.OriginalID(), Rejection: rej, Result: res})
	r.mu.Unlock()
	return res
}

// AcknowledgeBatch forwards to the inner consumer's batch call, or
// acknowledges one by one.
func (r *RecordingConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	if ba, ok := r.Consumer.(broker.BatchAcknowledger); ok {
		return ba.AcknowledgeBatch(ctx, ms)
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = r.Consumer.Acknowledge(ctx, m)
	}
	return errs
}

// Counts returns the presented counts of every receive of the message, in
// order.
func (r *RecordingConsumer) Counts(id string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.counts[id]...)
}

// Requeues returns how many Requeue calls the message had.
func (r *RecordingConsumer) Requeues(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requeues[id]
}

// Rejects returns every Reject call for the message.
func (r *RecordingConsumer) Rejects(id string) []RejectCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RejectCall
	for _, c := range r.rejects {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}

// Running is a pump started by Start.
type Running struct {
	cancel context.CancelFunc
	done   chan error
}

// Start runs a pump over c with h in the background. Stop it with Quit.
func Start(t testing.TB, c broker.Consumer, h pump.Handler, opts pump.Options, obs ...pump.Observer) *Running {
	t.Helper()
	p, err := pump.New(c, h, opts, obs...)
	if err != nil {
		t.Fatalf("pump.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() { r.Quit(t) })
	return r
}

// Quit stops the pump and waits for it; calling it twice is harmless.
func (r *Running) Quit(t testing.TB) {
	t.Helper()
	if r.done == nil {
		return
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("pump stopped with error: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("pump did not stop within 30s")
	}
	r.done = nil
}

// Eventually polls cond every 50 ms until it holds or timeout passes, then
// fails the test with msg.
func Eventually(t testing.TB, timeout time.Duration, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %s", timeout, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LogBuffer is a concurrency-safe buffer for a JSON slog handler, so tests
// can count log records by message text.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count returns how many records have the message text msg.
func (b *LogBuffer) Count(msg string) int {
	return bytes.Count([]byte(b.String()), []byte(`"msg":"`+msg+`"`))
}

// NewLogger returns a Debug-level JSON logger writing to a new LogBuffer.
func NewLogger() (*slog.Logger, *LogBuffer) {
	b := &LogBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
