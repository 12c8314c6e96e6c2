package triage

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/message"
)

// budgetCause is the rejection message of a spent redelivery budget: the
// same long prefix for every handler, what tells failures apart after it.
func budgetCause(last string) string {
	return "redelivery budget exhausted: delivery count 5 reached requeueCount 5 (delivered 5 times, handled 5 times in this process); last error: " + last
}

// screenAt renders m at w x h, checking every line fits.
func screenAt(t *testing.T, m Model, w, h int) string {
	t.Helper()
	m = run(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	s := m.Render()
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for _, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("a line of %d cells on a %d-column terminal: %q", lw, w, l)
		}
	}
	return ansi.Strip(s)
}

// TestTriageShowsWhatTellsGroupsApart: three handler failures whose
// rejection messages share the budget's long prefix are told apart on the
// groups screen at 80 and 120 columns (the shared prefix folded to "…",
// the last error first) with each one's original topic; at 80x24 the
// message view shows the whole cause, wrapped.
func TestTriageShowsWhatTellsGroupsApart(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("p1", "payments.charge", budgetCause("card declined by the acquirer"), `{}`, now.Add(-time.Minute)),
		rejected("s1", "shipping.label", budgetCause("carrier API returned 503"), `{}`, now.Add(-2*time.Minute)),
		rejected("i1", "inventory.reserve", budgetCause("stock row locked by another order"), `{}`, now.Add(-3*time.Minute)),
	}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	for _, w := range []int{80, 120} {
		s := screenAt(t, m, w, 24)
		for _, want := range []string{"…card declined", "…carrier API", "…stock row locked", "payments.charge", "shipping.label", "inventory.reser"} {
			if !strings.Contains(s, want) {
				t.Errorf("at %d columns the groups screen lacks %q:\n%s", w, want, s)
			}
		}
	}
	// The first group's first message (which group is first among groups
	// of one message each follows their ids, hashes of the cause).
	m = press(t, m, "enter", "enter")
	s := flat(screenAt(t, m, 80, 24))
	shown := 0
	for _, last := range []string{"card declined by the acquirer", "carrier API returned 503", "stock row locked by another order"} {
		if strings.Contains(s, budgetCause(last)) {
			shown++
		}
	}
	if shown != 1 {
		t.Errorf("the message view at 80x24 shows %d whole causes, want the one of its message:\n%s", shown, s)
	}
}

// TestTriageRereadsOnItsClock: with a refresh period the console reads
// the destination again by itself once the last read is that old (not
// before), says "reading…" while the read runs and when it last read, the
// ages move on, and the cursor stays on its group though a new, larger
// group now sorts before it; ctrl+r reads at once.
func TestTriageRereadsOnItsClock(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	clock := now
	f := &fakeActions{msgs: []*message.Message{
		rejected("a1", "orders", "timeout", `{}`, now.Add(-time.Minute)),
		rejected("a2", "orders", "timeout", `{}`, now.Add(-time.Minute)),
		rejected("b1", "audit", "bad audit record", `{}`, now.Add(-time.Minute)),
	}}
	m := New(context.Background(), f, func() time.Time { return clock }).WithRefresh(5 * time.Second).WithMessages(f.msgs)
	m.after = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil } // the test is the clock
	m = press(t, m, "down")                                                       // on b1's group
	if s := checkScreen(t, m); !strings.Contains(s, "row 2 of 2") || !strings.Contains(s, "read 10:00:00") {
		t.Fatalf("no row position or read time:\n%s", s)
	}
	f.msgs = append(f.msgs, rejected("c1", "billing", "ledger closed", `{}`, now), rejected("c2", "billing", "ledger closed", `{}`, now),
		rejected("c3", "billing", "ledger closed", `{}`, now))
	clock = now.Add(4 * time.Second)
	m = run(t, m, tickMsg{})
	if f.loads != 0 {
		t.Fatalf("read %d times 4s after the last read, with a 5s refresh", f.loads)
	}
	if s := checkScreen(t, m); !strings.Contains(s, "(4s ago)") || !strings.Contains(s, "1m ago") {
		t.Errorf("the ages do not move on:\n%s", s)
	}
	clock = now.Add(5 * time.Second)
	nm, cmd := m.Update(tickMsg{})
	m = nm.(Model)
	if s := checkScreen(t, m); !strings.Contains(s, "reading…") {
		t.Errorf("no reading… while the read runs:\n%s", s)
	}
	if cmd == nil {
		t.Fatal("no read 5s after the last one")
	}
	m = run(t, m, cmd())
	s := checkScreen(t, m)
	if f.loads != 1 || !strings.Contains(s, "ledger closed") || !strings.Contains(s, "read 10:00:05") {
		t.Fatalf("after the refresh (%d reads):\n%s", f.loads, s)
	}
	if g := m.groupAtCursor(); g == nil || g.key.OriginalTopic != "audit" {
		t.Errorf("the cursor left b1's group for %v:\n%s", g, s)
	}
	m = run(t, m, tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
	if f.loads != 2 {
		t.Errorf("ctrl+r: %d reads, want 2", f.loads)
	}
}

// TestTriageSearchesEveryMessageFromTheGroups: / on the groups screen
// finds a message by a number in its body, by its id and by a header
// (correlation id), whatever group it is in, and enter lists the
// matching messages; esc goes back to the groups with the cursor on the
// group of the message it was on.
func TestTriageSearchesEveryMessageFromTheGroups(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var msgs []*message.Message
	for i := range 12 {
		x := rejected(fmt.Sprintf("m-%02d", i), []string{"orders", "audit"}[i%2], []string{"timeout", "no customer"}[i%2], fmt.Sprintf(`{"orderId":%d}`, 3000+i), now.Add(-time.Duration(i)*time.Minute))
		x.Header.CorrelationID = fmt.Sprintf("corr-%d", i)
		msgs = append(msgs, x)
	}
	f := &fakeActions{msgs: msgs}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(msgs)
	for _, c := range []struct{ q, id string }{{"3007", "m-07"}, {"m-04", "m-04"}, {"corr-11", "m-11"}} {
		m := press(t, m, append(append([]string{"/"}, strings.Split(c.q, "")...), "enter")...)
		s := checkScreen(t, m)
		if m.view != viewMessages || !strings.Contains(s, c.id) || !strings.Contains(s, "1 message matching") {
			t.Errorf("/%s on the groups screen does not list %s:\n%s", c.q, c.id, s)
			continue
		}
		m = press(t, m, "esc")
		if g := m.groupAtCursor(); m.view != viewGroups || g == nil || !slices.ContainsFunc(g.msgs, func(x *message.Message) bool { return x.Header.MessageID == c.id }) {
			t.Errorf("esc from the search for %s: view %d, cursor on %v", c.id, m.view, g)
		}
	}
	m = press(t, m, "/", "9", "9", "9", "9", "enter")
	if s := checkScreen(t, m); m.view != viewGroups || !strings.Contains(s, "no dead-lettered message matches /9999") {
		t.Errorf("a search that matches nothing:\n%s", s)
	}
}

// TestTriageSelectionBelongsToItsGroup: a message selected in one group
// is not acted on from another: leaving the group clears the selection,
// r in the other group asks about (and replays) only the message under
// its cursor and names that group; space toggles without moving the
// cursor.
func TestTriageSelectionBelongsToItsGroup(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("a1", "orders", "timeout", `{}`, now.Add(-time.Minute)),
		rejected("a2", "orders", "timeout", `{}`, now.Add(-2*time.Minute)),
		rejected("a3", "orders", "timeout", `{}`, now.Add(-3*time.Minute)),
		rejected("b1", "audit", "bad audit record", `{}`, now.Add(-time.Minute)),
	}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "enter", "space")
	if m.cursor[viewMessages] != 0 || !m.sel["a1"] {
		t.Fatalf("space: cursor on row %d, selection %v; want a1 selected and the cursor still on it", m.cursor[viewMessages], m.sel)
	}
	m = press(t, m, "esc", "down", "enter", "r")
	s := flat(checkScreen(t, m))
	b := m.cur
	if b == nil || b.key.OriginalTopic != "audit" {
		t.Fatalf("not in b1's group:\n%s", s)
	}
	if strings.Contains(s, "a1") || !strings.Contains(s, "Replay 1 message (the message under the cursor of group "+b.id+": b1)") {
		t.Fatalf("r in another group after selecting a1:\n%s", s)
	}
	m = press(t, m, "y")
	if len(f.replayed) != 1 || !slices.Equal(f.replayed[0], []string{"b1"}) {
		t.Fatalf("replayed %v, want only b1", f.replayed)
	}
	// On the groups screen a group's selection is left when the cursor
	// leaves the group.
	m = press(t, m, "esc", "home", "space", "down", "r")
	if s := flat(checkScreen(t, m)); strings.Contains(s, "a1") || strings.Contains(s, "selected") {
		t.Fatalf("the selection followed the cursor to another group:\n%s", s)
	}
}

// TestTriageCursorKeepsItsGroup: after esc from a group and after a sort
// the cursor is on the same group, not the same row; pgdn/pgup/home/end
// move by a page and to the ends, and the header says which row.
func TestTriageCursorKeepsItsGroup(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var msgs []*message.Message
	for g := range 30 {
		for i := range 30 - g {
			msgs = append(msgs, rejected(fmt.Sprintf("g%02d-%02d", g, i), fmt.Sprintf("topic-%02d", g), "failure", `{}`, now.Add(-time.Duration(g)*time.Minute)))
		}
	}
	// oldest first puts the groups in the reverse order of count
	msgs = append(msgs, rejected("old", "topic-old", "failure", `{}`, now.Add(-time.Hour)))
	f := &fakeActions{msgs: msgs}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(msgs)
	m = press(t, m, "pgdown")
	if s := checkScreen(t, m); !strings.Contains(s, fmt.Sprintf("row %d of 31", 1+m.height-6)) {
		t.Fatalf("pgdn:\n%s", s)
	}
	m = press(t, m, "end")
	if s := checkScreen(t, m); !strings.Contains(s, "row 31 of 31") || !strings.Contains(s, "topic-old") {
		t.Fatalf("end:\n%s", s)
	}
	m = press(t, m, "home", "down", "down")
	want := m.groupAtCursor().id
	m = press(t, m, "enter", "esc")
	if g := m.groupAtCursor(); g.id != want {
		t.Errorf("esc: cursor on %s, was on %s", g.id, want)
	}
	m = press(t, m, "s", "s")
	if g := m.groupAtCursor(); g.id != want || m.cursor[viewGroups] == 2 {
		t.Errorf("after sorting by oldest the cursor is on %s (row %d), was on %s", g.id, m.cursor[viewGroups], want)
	}
	m = press(t, m, "pgup")
	if m.cursor[viewGroups] >= 2+1 && m.cursor[viewGroups] > m.height {
		t.Errorf("pgup: row %d", m.cursor[viewGroups])
	}
}

// TestTriageMessageViewShowsEveryHeader: the message view shows every
// header (reply to, source, subject, traceparent, ...), the times in
// full, and a message rejected on its first delivery as delivered once.
func TestTriageMessageViewShowsEveryHeader(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	x := rejected("h1", "orders", "order has no customer", `{}`, now.Add(-time.Minute))
	x.Header.ReplyTo, x.Header.Source, x.Header.Subject = "orders-replies", "/shop/checkout", "order-77"
	x.Header.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	x.Header.Timestamp = now.Add(-2 * time.Minute)
	x.Header.Bag["tenant"] = "acme"
	f := &fakeActions{msgs: []*message.Message{x}}
	m := New(context.Background(), f, func() time.Time { return now }).WithMessages(f.msgs)
	m = press(t, m, "enter", "enter")
	s := flat(screenAt(t, m, 200, 60))
	for _, want := range []string{"reply to: orders-replies", "source: /shop/checkout", "subject: order-77",
		"traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "created: 2026-12-04T09:58:00Z",
		"2026-12-04T09:59:00Z", "tenant: acme", "after 1 delivery,"} {
		if !strings.Contains(s, want) {
			t.Errorf("the message view lacks %q:\n%s", want, s)
		}
	}
}

// TestTriageKeyTableInTheDocs: the key table of docs/commands/dlq.md is
// the console's key map (KeyTable), so the docs name every key the
// console handles and no other.
func TestTriageKeyTableInTheDocs(t *testing.T) {
	b, err := os.ReadFile("../../../docs/commands/dlq.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), KeyTable()) {
		t.Errorf("docs/commands/dlq.md's triage section does not carry the key table; put this there:\n%s", KeyTable())
	}
	// and the help screen lists the same keys
	help := strings.Join(defaultKeys().helpLines(), "\n")
	for _, k := range defaultKeys().listed() {
		if !strings.Contains(help, k.Help().Key) {
			t.Errorf("the help screen lacks %q", k.Help().Key)
		}
	}
}

// TestTriageActionWaitsForTheReadUnderWay: a replay confirmed while a
// refresh's read runs (which holds what it reads) starts only when that
// read has ended; no refresh starts while a confirmation is asked.
func TestTriageActionWaitsForTheReadUnderWay(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	clock := now
	f := &fakeActions{msgs: []*message.Message{rejected("a1", "orders", "timeout", `{}`, now.Add(-time.Minute))}}
	m := New(context.Background(), f, func() time.Time { return clock }).WithRefresh(time.Second).WithMessages(f.msgs)
	m.after = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m = press(t, m, "enter", "r")
	clock = now.Add(time.Minute)
	if _, cmd := m.Update(tickMsg{}); cmd != nil {
		t.Fatal("a refresh started while a confirmation is asked")
	}
	m = press(t, m, "n")
	nm, read := m.Update(tickMsg{}) // the read starts and runs
	m = nm.(Model)
	if read == nil {
		t.Fatal("no refresh")
	}
	nm, _ = m.Update(tea.KeyPressMsg{Code: 'r', Text: "r"})
	m = nm.(Model)
	nm, cmd := m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	m = nm.(Model)
	if cmd != nil || len(f.replayed) != 0 {
		t.Fatalf("the replay started while the read runs (replayed %v)", f.replayed)
	}
	m = run(t, m, read())
	if len(f.replayed) != 1 || !slices.Equal(f.replayed[0], []string{"a1"}) {
		t.Fatalf("after the read ended: replayed %v, want a1", f.replayed)
	}
}
