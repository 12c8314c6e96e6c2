package triage

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
)

// purgeActions are fakeActions that purge (Purger).
type purgeActions struct {
	*fakeActions
	purged [][]string
	dry    []bool
}

func (a *purgeActions) Purge(_ context.Context, ids []string, dry bool, _ func(Outcome)) (Result, error) {
	a.purged, a.dry = append(a.purged, ids), append(a.dry, dry)
	return Result{Done: len(ids), Summary: "purged"}, nil
}

// TestTriagePurge: x asks to purge what is under the cursor, naming it
// and saying no copy is kept; n declines, y purges; with d the question
// and the purge are a dry run; Actions that cannot purge say so and
// point to dlq purge.
func TestTriagePurge(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("t1", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute))}}
	a := &purgeActions{fakeActions: f}
	m := New(context.Background(), a, func() time.Time { return now })
	m = run(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = run(t, m, m.Init()())
	m = press(t, m, "enter", "x")
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "Purge 1 message (") || !strings.Contains(s, ": t1) from sqs://orders-dlq: deleted for good, no copy kept? (y/n)") {
		t.Fatalf("no purge confirmation:\n%s", s)
	}
	m = press(t, m, "n")
	if len(a.purged) != 0 {
		t.Fatalf("a declined purge ran: %v", a.purged)
	}
	m = press(t, m, "x", "y")
	if len(a.purged) != 1 || !slices.Equal(a.purged[0], []string{"t1"}) || a.dry[0] {
		t.Fatalf("purged %v (dry %v), want t1, not a dry run", a.purged, a.dry)
	}
	m = press(t, m, "d", "x")
	if s := flat(checkScreen(t, m)); !strings.Contains(s, "[dry run] Purge 1 message") {
		t.Fatalf("no dry-run purge confirmation:\n%s", s)
	}
	_ = press(t, m, "y")
	if len(a.dry) != 2 || !a.dry[1] {
		t.Fatalf("the purge under d was not a dry run: %v", a.dry)
	}

	m = New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = run(t, m, m.Init()())
	m = press(t, m, "enter", "x")
	if m.ask != nil || !strings.Contains(flat(checkScreen(t, m)), "use brighter dlq purge") {
		t.Errorf("x without a Purger asks, or does not point to dlq purge:\n%s", checkScreen(t, m))
	}
}
