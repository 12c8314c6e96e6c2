package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
)

// archiveActions are fakeActions whose archive file holds file.
type archiveActions struct {
	*fakeActions
	file []*message.Message
}

func (a *archiveActions) Archived() ([]*message.Message, error) { return a.file, nil }

// TestTriageArchivedView: A shows the archive file's records in the
// groups, messages and message screens, marked read-only; replay,
// archive, edit and select do nothing there; no refresh replaces it; A
// again shows the dead letters, read afresh.
func TestTriageArchivedView(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("live1", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute))}}
	a := &archiveActions{fakeActions: f, file: []*message.Message{
		rejected("old1", "audit", "bad audit record", `{"n":1}`, now.Add(-48*time.Hour)),
		rejected("old2", "audit", "bad audit record", `{"n":2}`, now.Add(-47*time.Hour)),
	}}
	m := New(context.Background(), a, func() time.Time { return now }).WithRefresh(time.Second).WithMessages(f.msgs)
	m.after = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m = press(t, m, "A")
	s := checkScreen(t, m)
	if !strings.Contains(s, "ARCHIVED a.jsonl (read-only)") || !strings.Contains(s, "bad audit record") || strings.Contains(s, "timeout calling") {
		t.Fatalf("the archived view:\n%s", s)
	}
	m = press(t, m, "enter")
	if s = checkScreen(t, m); !strings.Contains(s, "old1") || !strings.Contains(s, "old2") {
		t.Fatalf("the archived group's messages:\n%s", s)
	}
	for _, k := range []string{"r", "R", "a", "e", "space"} {
		m = press(t, m, k)
		if m.ask != nil || len(m.sel) != 0 {
			t.Fatalf("%s in the archived view asks or selects", k)
		}
		if !strings.Contains(flat(checkScreen(t, m)), "the archived view is read-only") {
			t.Errorf("%s in the archived view does not say it is read-only", k)
		}
	}
	m = press(t, m, "enter")
	if s = checkScreen(t, m); !strings.Contains(s, "message old1") && !strings.Contains(s, "message old2") {
		t.Fatalf("an archived message's view:\n%s", s)
	}
	now = now.Add(time.Minute)
	m = run(t, m, tickMsg{})
	if f.loads != 0 || !m.archived {
		t.Fatalf("a refresh ran in the archived view (%d reads)", f.loads)
	}
	m = press(t, m, "A")
	s = checkScreen(t, m)
	if m.archived || f.loads != 1 || !strings.Contains(s, "timeout calling") || strings.Contains(s, "ARCHIVED") {
		t.Fatalf("A back to the dead letters (%d reads):\n%s", f.loads, s)
	}
}
