package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// TestTriageHelpScrollsAtSmallSizes: at 80x24 the help is taller than the
// screen: it says which lines it shows, down scrolls it to its last key
// (ctrl+c), and any other key closes it.
func TestTriageHelpScrollsAtSmallSizes(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("t1", "orders", "timeout", `{}`, now)}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "?")
	s := checkScreen(t, m)
	if !strings.Contains(s, "up/down scroll") || strings.Contains(s, "quit now, stopping a running action") {
		t.Fatalf("the first page of the help:\n%s", s)
	}
	for range 10 {
		m = press(t, m, "down")
	}
	if s = checkScreen(t, m); !strings.Contains(s, "quit now, stopping a running action") {
		t.Fatalf("scrolled to the end, the help lacks ctrl+c:\n%s", s)
	}
	m = press(t, m, "x")
	if s = checkScreen(t, m); strings.Contains(s, "up/down scroll") || !strings.Contains(s, "timeout") {
		t.Fatalf("x does not close the help:\n%s", s)
	}
}
