package observe

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRepeatedErrorsAreRateLimitedWithACount: the same Error
// repeated 50 times writes the burst, then nothing until the interval
// passes; the next one written carries how many were suppressed. Other
// subscriptions, other messages and lower levels are not limited.
func TestRepeatedErrorsAreRateLimitedWithACount(t *testing.T) {
	var buf bytes.Buffer
	every := 200 * time.Millisecond
	h := RateLimit(slog.NewTextHandler(&buf, nil), every, 3)
	now := time.Now()
	h.(*rateLimited).s.now = func() time.Time { return now }
	log := slog.New(h)
	for range 50 {
		log.Error("channel failure; backing off", "subscription", "a")
		log.Warn("a warning", "subscription", "a")
	}
	log.With("subscription", "b").Error("channel failure; backing off")
	log.Error("another failure", "subscription", "a")
	out := buf.String()
	if n := strings.Count(out, `msg="channel failure; backing off" subscription=a`); n != 3 {
		t.Fatalf("subscription a's repeated error written %d times, want the burst of 3:\n%s", n, out)
	}
	if n := strings.Count(out, "a warning"); n != 50 {
		t.Fatalf("warnings written %d times, want all 50", n)
	}
	if !strings.Contains(out, `subscription=b msg="channel failure; backing off"`) && !strings.Contains(out, `msg="channel failure; backing off" subscription=b`) {
		t.Fatalf("subscription b's error was limited with a's:\n%s", out)
	}
	if !strings.Contains(out, "another failure") {
		t.Fatalf("a different message was limited:\n%s", out)
	}
	now = now.Add(every)
	log.Error("channel failure; backing off", "subscription", "a")
	if !strings.Contains(buf.String(), "suppressed=47") {
		t.Fatalf("no record with suppressed=47 after the interval:\n%s", buf.String())
	}
}
