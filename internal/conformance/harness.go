package conformance

import (
	"bytes"
	"context"
	"encoding/json"
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

// Running is a pump started by Start.
type Running struct {
	p      *pump.Pump
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
	r := &Running{p: p, cancel: cancel, done: make(chan error, 1)}
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

// CutOff stops the pump at once, its handlers' contexts cancelled
// (pump.CutOff), and waits for it as Quit does.
func (r *Running) CutOff(t testing.TB) {
	t.Helper()
	if r.done != nil {
		r.p.CutOff()
	}
	r.Quit(t)
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

// Records returns every record with the message text msg, decoded from the
// JSON handler's lines (attribute name to value).
func (b *LogBuffer) Records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split([]byte(b.String()), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// logOnFailure logs every record of logs when t has failed, at the end of
// t (after a Fatal too), so a failed cell shows what the pump logged.
func logOnFailure(t testing.TB, logs *LogBuffer) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
}
