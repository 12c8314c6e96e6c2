package handler

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// testMessage makes a message with every header field the adapters pass on.
func testMessage(count int) *message.Message {
	m := message.New("11111111-2222-3333-4444-555555555555", "orders", message.MTCommand, []byte(`{"order":42}`))
	m.Header.HandledCount = count
	m.Header.Timestamp = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	m.Header.CorrelationID = "corr-1"
	m.Header.ReplyTo = "replies"
	m.Header.PartitionKey = "customer-7"
	m.Header.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	m.Header.TraceState = "congo=t61rcWkgMzE"
	m.Header.Baggage = "userId=alice,isProduction=false"
	m.Header.Bag["tenant"] = "acme"
	return m
}

// logBuffer is a concurrency-safe sink for a JSON slog logger.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records decodes every JSON log line written so far.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(l.buf.Bytes()))
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("decoding log line: %v", err)
		}
		out = append(out, r)
	}
	return out
}

// find returns the first record with msg.
func (l *logBuffer) find(t *testing.T, msg string) map[string]any {
	t.Helper()
	for _, r := range l.records(t) {
		if r["msg"] == msg {
			return r
		}
	}
	t.Fatalf("no log record %q in %s", msg, l.buf.String())
	return nil
}

// cutOffAtInfo fails t unless msg, a handler's cut-off record, was logged
// at Info and nothing at Error: a planned stop is not an alert.
func (l *logBuffer) cutOffAtInfo(t *testing.T, msg string) {
	t.Helper()
	if rec := l.find(t, msg); rec["level"] != "INFO" {
		t.Errorf("cut-off logged at %v, want INFO", rec["level"])
	}
	for _, rec := range l.records(t) {
		if rec["level"] == "ERROR" {
			t.Errorf("a cut-off logged at Error: %v", rec)
		}
	}
}

func newTestLogger() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewJSONHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}
