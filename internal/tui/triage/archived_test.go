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

// archiveActions are fakeActions whose archive file holds file.
type archiveActions struct {
	*fakeActions
	file []*message.Message
}

func (a *archiveActions) Archived() ([]*message.Message, error) { return a.file, nil }

// TestTriageArchivedView: A shows the archive file's records in the
// groups, messages and message screens, marked read-only; replay,
// archive, purge, edit and notes do nothing there (nor r/R, without a Restorer); no refresh replaces it; A
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
	for _, k := range []string{"r", "R", "a", "x", "e", "E", "n"} {
		m = press(t, m, k)
		if m.ask != nil || m.noting != "" {
			t.Fatalf("%s in the archived view asks or types", k)
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

// restoreActions are archiveActions that restore: Restore puts the
// records back into msgs, as a restore into the dead-letter destination.
type restoreActions struct {
	*archiveActions
	checked  [][]string
	restored [][]string
	dups     []bool
}

func (a *restoreActions) RestoreDestination() string { return "orders-dlq" }
func (a *restoreActions) AlreadyThere(_ context.Context, ids []string) (map[string]int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checked = append(a.checked, ids)
	there := map[string]int{}
	for _, x := range a.msgs {
		if slices.Contains(ids, x.Header.MessageID) {
			there[x.Header.MessageID]++
		}
	}
	return there, nil
}
func (a *restoreActions) Restore(_ context.Context, ids []string, dup, dry bool, p func(Outcome)) (Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.restored, a.dups = append(a.restored, ids), append(a.dups, dup)
	for _, x := range a.file {
		if slices.Contains(ids, x.Header.MessageID) {
			a.msgs = append(a.msgs, x)
			p(Outcome{ID: x.Header.MessageID})
		}
	}
	return Result{Done: len(ids), Summary: "restored " + strings.Join(ids, ",")}, nil
}

// TestTriageArchivedViewRestores: in the archived view space selects and
// r restores the selection into the dead-letter destination after
// checking it, asking first with the destination, the count and the ids;
// n restores nothing. The restored record is marked ↺ (its id is in the
// destination again), the others are not. R restores the whole group, and
// its confirmation names the ids the destination already holds: y
// restores them too (another copy each).
func TestTriageArchivedViewRestores(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{rejected("live1", "orders", "timeout calling payments", `{}`, now.Add(-time.Minute))}}
	a := &restoreActions{archiveActions: &archiveActions{fakeActions: f, file: []*message.Message{
		rejected("old1", "audit", "bad audit record", `{"n":1}`, now.Add(-48*time.Hour)),
		rejected("old2", "audit", "bad audit record", `{"n":2}`, now.Add(-47*time.Hour)),
	}}}
	m := New(context.Background(), a, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "A", "enter")
	first, other := m.visibleMessages()[0].Header.MessageID, "old1"
	if first == other {
		other = "old2"
	}
	m = press(t, m, "space")
	if !m.sel[first] {
		t.Fatalf("space in the archived view selects nothing: %v", m.sel)
	}
	m = press(t, m, "r")
	if m.ask == nil || len(a.checked) != 1 {
		t.Fatalf("r in the archived view asks nothing (checked %v); status %q", a.checked, m.status)
	}
	p := flat(checkScreen(t, m))
	for _, want := range []string{"Restore 1 message", first, "a.jsonl", "dead-letter destination orders-dlq"} {
		if !strings.Contains(p, want) {
			t.Fatalf("the restore's confirmation does not say %q:\n%s", want, p)
		}
	}
	m = press(t, m, "n")
	if len(a.restored) != 0 {
		t.Fatalf("n restored %v", a.restored)
	}
	m = press(t, m, "r", "y") // the selection stays after n
	if len(a.restored) != 1 || !slices.Equal(a.restored[0], []string{first}) || a.dups[0] {
		t.Fatalf("y restored %v (dup %v), want [%s] refusing ids already there", a.restored, a.dups, first)
	}
	if !m.archived || m.idCell(first) != first+" ↺" || m.idCell(other) != other {
		t.Fatalf("after the restore: archived %v, %q, %q", m.archived, m.idCell(first), m.idCell(other))
	}
	if s := checkScreen(t, m); !strings.Contains(s, first+" ↺") {
		t.Fatalf("the restored record is not marked:\n%s", s)
	}
	m = press(t, m, "R")
	p = flat(checkScreen(t, m))
	if m.ask == nil || !strings.Contains(p, "Restore 2 messages") || !strings.Contains(p, "orders-dlq already holds 1 of them: "+first+" (1 copy)") {
		t.Fatalf("R's confirmation does not name the id already there:\n%s", p)
	}
	m = press(t, m, "y")
	if len(a.restored) != 2 || len(a.restored[1]) != 2 || !a.dups[1] {
		t.Fatalf("R then y restored %v (dup %v), want both, another copy confirmed", a.restored, a.dups)
	}
}
