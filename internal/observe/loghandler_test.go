package observe

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump"
)

// takeAll returns what a reader holds now.
func takeAll(rd *Reader) []Record {
	var out []Record
	for {
		select {
		case r := <-rd.C():
			out = append(out, *r)
		default:
			return out
		}
	}
}

// LogTee hands every record to the inner handler unchanged and
// publishes the Warn and Error ones to the stream as KindLog records with
// the stable text, subscription and message_id in their fields and the
// other attributes in order (With's first, groups dotted).
func TestLogTee_PublishesWarnAndErrorToTheStream(t *testing.T) {
	st := NewStream(64, 0)
	rd := st.Subscribe()
	defer rd.Close()
	var text bytes.Buffer
	logger := slog.New(LogTee(slog.NewTextHandler(&text, &slog.HandlerOptions{Level: slog.LevelInfo}), slog.LevelWarn, st))

	sl := logger.With("subscription", "orders")
	sl.Info(pump.LogStarted)
	sl.Warn(pump.LogBudgetExhausted, "message_id", "poison-1", "delivery_count", 3, "budget", 3)
	sl.WithGroup("sqs").Error(pump.LogChannelFailure, "error", errors.New("receive: connection refused"), slog.Group("retry", "delay", time.Second))
	logger.Debug("not written anywhere")

	for _, want := range []string{"level=INFO msg=\"message pump started\" subscription=orders", "level=WARN", "level=ERROR", "sqs.error=\"receive: connection refused\""} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("inner handler's output lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "not written") {
		t.Errorf("inner handler wrote a Debug line below its level:\n%s", text.String())
	}

	got := takeAll(rd)
	if len(got) != 2 {
		t.Fatalf("published %d records, want the Warn and the Error: %+v", len(got), got)
	}
	w, e := got[0], got[1]
	if w.Kind != KindLog || w.Level != "WARN" || w.Text != pump.LogBudgetExhausted || w.Subscription != "orders" || w.MessageID != "poison-1" ||
		!reflect.DeepEqual(w.Attrs, []LogAttr{{"delivery_count", "3"}, {"budget", "3"}}) || w.Time.IsZero() {
		t.Errorf("Warn record = %+v", w)
	}
	if e.Level != "ERROR" || e.Text != pump.LogChannelFailure || e.Subscription != "orders" || e.MessageID != "" ||
		!reflect.DeepEqual(e.Attrs, []LogAttr{{"sqs.error", "receive: connection refused"}, {"sqs.retry.delay", "1s"}}) {
		t.Errorf("Error record = %+v", e)
	}

	// The record survives /events: JSON out and back.
	b, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Kind != KindLog || back.Text != e.Text || !reflect.DeepEqual(back.Attrs, e.Attrs) || !back.Time.Equal(e.Time) {
		t.Errorf("round trip: %s -> %+v", b, back)
	}
}

// With the dashboard the only place for logs (--tui, stderr a terminal)
// the inner handler is slog.DiscardHandler: Warn and Error still reach the
// stream; Info does not. Under RateLimit the stream sees what the inner
// handler would: the suppressed count on the next record that passes.
func TestLogTee_DiscardInnerAndRateLimit(t *testing.T) {
	st := NewStream(64, 0)
	rd := st.Subscribe()
	defer rd.Close()
	logger := slog.New(RateLimit(LogTee(slog.DiscardHandler, slog.LevelWarn, st), time.Hour, 2))
	logger.Info("info is dropped")
	for range 5 {
		logger.Error(pump.LogChannelFailure, "subscription", "orders", "error", "refused")
	}
	logger.Warn("a warning", "long", strings.Repeat("x", 2*MaxLogValueBytes))
	got := takeAll(rd)
	if len(got) != 3 {
		t.Fatalf("published %d records, want 2 Errors (burst) and the Warn: %+v", len(got), got)
	}
	if got[0].Text != pump.LogChannelFailure || got[2].Text != "a warning" {
		t.Errorf("records = %+v", got)
	}
	if v := got[2].Attrs[0].Value; len(v) > MaxLogValueBytes+len("…") || !strings.HasSuffix(v, "…") {
		t.Errorf("a long value is cut to %d bytes with an ellipsis; got %d bytes", MaxLogValueBytes, len(v))
	}
}

// Channel-failure records carry since when and how many calls have failed,
// so a dashboard that joins late says since when.
func TestFromEvent_ChannelFailureCarriesSince(t *testing.T) {
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	r := FromEvent(pump.Event{Kind: pump.EventChannelFailure, Subscription: "orders", Err: errors.New("refused"), Since: since, Failures: 4, Time: since.Add(time.Minute)})
	if r.Kind != "channel-failure" || !r.Since.Equal(since) || r.Since.Location() != time.UTC || r.Failures != 4 || r.Error != "refused" {
		t.Fatalf("record = %+v", r)
	}
	b, _ := json.Marshal(&r)
	if !strings.Contains(string(b), `"since":"2026-05-01T11:00:00Z","failures":4`) {
		t.Errorf("JSON = %s", b)
	}
	if b, _ := json.Marshal(&Record{Kind: "received"}); strings.Contains(string(b), "since") || strings.Contains(string(b), "failures") {
		t.Errorf("a record without a failure has no since or failures: %s", b)
	}
}
