package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// noteActions are fakeActions keeping notes in memory.
type noteActions struct {
	*fakeActions
	notes map[string]inspect.GroupNote
}

func (n *noteActions) Notes() (map[string]inspect.GroupNote, error) {
	out := map[string]inspect.GroupNote{}
	for k, v := range n.notes {
		out[k] = v
	}
	return out, nil
}

func (n *noteActions) SetNote(group, text string) error {
	if text == "" {
		delete(n.notes, group)
	} else {
		n.notes[group] = inspect.GroupNote{Text: text, By: "ana@ops1"}
	}
	return nil
}

// TestTriageGroupNotes: n on the groups screen types a note for the group
// under the cursor; enter saves it (the keeper has it, the row is marked
// ✎, the note is shown whole for the group under the cursor, and inside
// the group); esc while typing changes nothing; an emptied note is
// removed; a note kept already is shown when the console opens.
func TestTriageGroupNotes(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("t1", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute)),
		rejected("t2", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute)),
		rejected("b1", "audit", "bad audit record", `{}`, now.Add(-time.Minute)),
	}}
	audit := inspect.GroupOf(f.msgs[2]).ID()
	n := &noteActions{fakeActions: f, notes: map[string]inspect.GroupNote{audit: {Text: "known: the audit schema v2 rollout", By: "ben@ops2"}}}
	m := New(context.Background(), n, func() time.Time { return now }).WithMessages(f.msgs)
	s := checkScreen(t, m)
	if !strings.Contains(s, "✎ bad audit record") || strings.Contains(s, "✎ timeout") {
		t.Errorf("the kept note's group is not marked (and only it):\n%s", s)
	}
	m = press(t, m, "n", "x", "esc")
	if len(n.notes) != 1 {
		t.Fatalf("esc saved a note: %v", n.notes)
	}
	m = press(t, m, "n")
	for _, r := range "payments was down 09:40-09:55, replay after" {
		m = press(t, m, string(r))
	}
	if s := checkScreen(t, m); !strings.Contains(s, "note on group ") {
		t.Errorf("no note input:\n%s", s)
	}
	m = press(t, m, "enter")
	timeout := inspect.GroupOf(f.msgs[0]).ID()
	if got := n.notes[timeout].Text; got != "payments was down 09:40-09:55, replay after" {
		t.Fatalf("the note kept for %s is %q", timeout, got)
	}
	s = flat(checkScreen(t, m))
	if !strings.Contains(s, "✎ timeout calling payments") || !strings.Contains(s, "✎ payments was down 09:40-09:55, replay after (ana@ops1") {
		t.Errorf("the note is not shown on the groups screen:\n%s", s)
	}
	m = press(t, m, "enter")
	if s = flat(checkScreen(t, m)); !strings.Contains(s, "✎ payments was down") {
		t.Errorf("the note is not shown in the group:\n%s", s)
	}
	// emptied: removed
	m = press(t, m, "esc", "n")
	for range len("payments was down 09:40-09:55, replay after") {
		m = run(t, m, tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	m = press(t, m, "enter")
	if _, ok := n.notes[timeout]; ok {
		t.Errorf("an emptied note is kept: %v", n.notes)
	}
	if s := checkScreen(t, m); !strings.Contains(s, "removed") || strings.Contains(s, "✎ timeout") {
		t.Errorf("the removed note is still shown:\n%s", s)
	}
}
