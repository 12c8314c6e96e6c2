package triage

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/message"
)

// fakeActions records what the console asked for.
type fakeActions struct {
	mu       sync.Mutex
	msgs     []*message.Message
	replayed [][]string
	archived [][]string
	dry      []bool
	loads    int
	edit     Editing
}

func (f *fakeActions) Source() string { return "sqs://orders-dlq" }
func (f *fakeActions) Load(context.Context) ([]*message.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	return f.msgs, nil
}
func (f *fakeActions) ReplayDestinations(ms []*message.Message) []string { return []string{"orders"} }
func (f *fakeActions) Replay(_ context.Context, ids []string, dry bool, p func(Outcome)) (Result, error) {
	f.mu.Lock()
	f.replayed, f.dry = append(f.replayed, ids), append(f.dry, dry)
	f.mu.Unlock()
	for _, id := range ids {
		p(Outcome{ID: id})
	}
	return Result{Done: len(ids), Summary: "replayed " + strings.Join(ids, ",")}, nil
}
func (f *fakeActions) ArchiveDestination() string { return "a.jsonl" }
func (f *fakeActions) Archive(_ context.Context, ids []string, dry bool, p func(Outcome)) (Result, error) {
	f.mu.Lock()
	f.archived, f.dry = append(f.archived, ids), append(f.dry, dry)
	f.mu.Unlock()
	return Result{Done: len(ids), Summary: "archived"}, nil
}
func (f *fakeActions) Edit(_ context.Context, m *message.Message) (Editing, error) {
	if f.edit != nil {
		return f.edit, nil
	}
	return nil, errors.New("no editor here")
}

// fakeEdit is an edit whose Check answers checks in turn (nil when they
// run out).
type fakeEdit struct {
	checks   []error
	commands int
	finished int
	closed   int
}

func (e *fakeEdit) Command() *exec.Cmd  { e.commands++; return exec.Command("true") }
func (e *fakeEdit) Destination() string { return "orders" }
func (e *fakeEdit) Copies() int         { return 1 }
func (e *fakeEdit) Edited() string      { return `{"edited":true}` }
func (e *fakeEdit) Check() error {
	if len(e.checks) == 0 {
		return nil
	}
	err := e.checks[0]
	e.checks = e.checks[1:]
	return err
}
func (e *fakeEdit) Finish(context.Context, bool) (Result, error) {
	e.finished++
	return Result{Done: 1, Summary: "edit: replayed 1"}, nil
}
func (e *fakeEdit) Close() { e.closed++ }

func rejected(id, topic, reason string, body string, at time.Time) *message.Message {
	m := message.New(id, topic, message.MTEvent, []byte(body))
	return message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: reason}, at)
}

// run feeds msg to m and then every message its commands produce
// (progress, done, the reload), as the bubbletea runtime would.
func run(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		nm, cmd := m.Update(next)
		m = nm.(Model)
		for cmd != nil {
			out := cmd()
			cmd = nil
			switch o := out.(type) {
			case nil:
			case tea.BatchMsg:
				t.Fatalf("unexpected batch %v", o)
			default:
				if _, quit := o.(tea.QuitMsg); quit {
					return m
				}
				queue = append(queue, o)
			}
		}
	}
	return m
}

// replaying starts a console over act at now on an 80x24 screen, reads,
// opens the first group and confirms its replay with y, failing the test
// unless that started the replay (the console busy, a command returned).
// It returns the console and the command that runs the replay.
func replaying(t *testing.T, ctx context.Context, act Actions, now time.Time) (Model, tea.Cmd) {
	t.Helper()
	m := New(ctx, act, func() time.Time { return now })
	m = run(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = run(t, m, m.Init()())
	m = press(t, m, "enter", "r")
	nm, running := m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	m = nm.(Model)
	if running == nil || m.busy == "" {
		t.Fatal("y did not start the replay")
	}
	return m, running
}

func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "space":
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		m = run(t, m, msg)
	}
	return m
}

// flat is a screen on one line, runs of white space one space: a wrapped
// prompt reads as one.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkScreen: at most 80x24 and nothing wider.
func checkScreen(t *testing.T, m Model) string {
	t.Helper()
	s := m.Render()
	lines := strings.Split(s, "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines on a 24-line terminal", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells on an 80-column terminal: %q", w, l)
		}
	}
	return ansi.Strip(s)
}

// TestTriageConsole: groups (count, reason, sample) → messages →
// one message (rejection, bag, body indented); space selects; r asks once
// with destinations and count and n changes nothing; y replays the
// selection; R replays a group; d turns the dry run on for a; / filters;
// every screen fits 80x24.
func TestTriageConsole(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("t1", "orders", "timeout calling payments after 30s", `{"orderId":1}`, now.Add(-time.Hour)),
		rejected("t2", "orders", "timeout calling payments after 31s", `{"orderId":2}`, now.Add(-time.Minute)),
		rejected("n1", "orders", "order has no customer", `{"orderId":3}`, now.Add(-2*time.Hour)),
	}}
	m := New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m = run(t, m, m.Init()())
	s := checkScreen(t, m)
	if !strings.Contains(s, "timeout calling payments") || !strings.Contains(s, "order has no customer") {
		t.Fatalf("groups screen:\n%s", s)
	}
	if strings.Index(s, "timeout") > strings.Index(s, "no customer") {
		t.Errorf("the group of two is not first by count:\n%s", s)
	}

	m = press(t, m, "enter")
	s = checkScreen(t, m)
	if !strings.Contains(s, "t1") || !strings.Contains(s, "t2") || strings.Contains(s, "n1 ") {
		t.Fatalf("messages of the timeout group:\n%s", s)
	}
	m = press(t, m, "space", "r")
	s = checkScreen(t, m)
	if f := flat(s); !strings.Contains(f, "Replay 1 message (the selection of group ") || !strings.Contains(f, ": t2) from sqs://orders-dlq to orders? (y/n)") {
		t.Fatalf("no confirmation:\n%s", s)
	}
	m = press(t, m, "n")
	if len(f.replayed) != 0 {
		t.Fatalf("a declined replay ran: %v", f.replayed)
	}
	m = press(t, m, "r", "y")
	if !slices.Equal(f.replayed[0], []string{"t2"}) || f.dry[0] {
		t.Fatalf("replayed %v (dry %v), want the newest, t2, selected", f.replayed, f.dry)
	}
	if s = checkScreen(t, m); !strings.Contains(s, "replayed t2") {
		t.Errorf("no result line:\n%s", s)
	}

	m = press(t, m, "down", "enter")
	s = checkScreen(t, m)
	for _, want := range []string{"message t1", "DeliveryError from orders", "1h ago", "timeout calling payments after 30s", `"orderId": 1`} {
		if !strings.Contains(s, want) {
			t.Errorf("message screen lacks %q:\n%s", want, s)
		}
	}
	m = press(t, m, "esc", "esc", "R", "y")
	if len(f.replayed) != 2 || len(f.replayed[1]) != 2 {
		t.Fatalf("R replayed %v, want the two of the group", f.replayed)
	}

	m = press(t, m, "d", "/", "c", "u", "s", "t", "enter")
	s = checkScreen(t, m)
	if strings.Contains(s, "timeout") || !strings.Contains(s, "no customer") || !strings.Contains(s, "DRY RUN") {
		t.Fatalf("filter 'cust' with the dry run on:\n%s", s)
	}
	m = press(t, m, "a")
	if s = checkScreen(t, m); !strings.Contains(flat(s), "[dry run] Archive 1 message (of the search /cust: n1) to a.jsonl") {
		t.Fatalf("archive confirmation:\n%s", s)
	}
	m = press(t, m, "y")
	if len(f.archived) != 1 || !slices.Equal(f.archived[0], []string{"n1"}) || !f.dry[2] {
		t.Fatalf("archived %v dry %v", f.archived, f.dry)
	}
	m = press(t, m, "?")
	if s = checkScreen(t, m); !strings.Contains(s, "replay the whole group") {
		t.Errorf("help:\n%s", s)
	}
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd == nil {
		t.Error("q does not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit")
	}
}

// TestTriageStatusClearedOnNavigation: the result line of an
// action does not follow the operator into a group or back out of it.
func TestTriageStatusClearedOnNavigation(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	f := &fakeActions{msgs: []*message.Message{
		rejected("t1", "orders", "timeout", `{}`, now.Add(-time.Hour)),
		rejected("t2", "orders", "timeout", `{}`, now.Add(-time.Minute)),
	}}
	m := New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, m.Init()())
	m = press(t, m, "R", "y")
	if s := checkScreen(t, m); !strings.Contains(s, "replayed t") {
		t.Fatalf("no result line after R:\n%s", s)
	}
	m = press(t, m, "enter")
	if s := checkScreen(t, m); strings.Contains(s, "replayed t") {
		t.Errorf("the group screen still shows the previous result line:\n%s", s)
	}
	m.status = "replayed t1"
	m = press(t, m, "esc")
	if s := checkScreen(t, m); strings.Contains(s, "replayed t") {
		t.Errorf("the groups screen still shows the previous result line:\n%s", s)
	}
}

// cursorID is the id of the message under the cursor of the messages view.
func cursorID(t *testing.T, m Model) string {
	t.Helper()
	ms := m.target0()
	if len(ms) != 1 {
		t.Fatalf("%d messages under the cursor (row %d), want 1:\n%s", len(ms), m.cursor[viewMessages], checkScreen(t, m))
	}
	return ms[0].Header.MessageID
}

// TestTriageCursorStaysOnMessage: a read returns a group's
// messages in a different order each time; the rows keep one order, the
// cursor stays on the message it was on across the refresh after an
// action (archiving another message), every prompt names the ids it acts
// on, and when the list shrinks below the cursor a row is still under it
// and enter opens it.
func TestTriageCursorStaysOnMessage(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := now.Add(-time.Minute) // one rejection second for all: the order is the tie-break's
	mk := func(ids ...string) []*message.Message {
		var out []*message.Message
		for _, id := range ids {
			out = append(out, rejected(id, "orders", "timeout", `{}`, at))
		}
		return out
	}
	f := &fakeActions{msgs: mk("u2-4", "u2-3", "u2-0", "u2-1", "u2-2")}
	m := New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, m.Init()())
	m = press(t, m, "enter")
	rows := func() []string { return ids(m.visibleMessages()) }
	first := rows()
	m = run(t, m, LoadedMsg{Messages: mk("u2-2", "u2-0", "u2-4", "u2-1", "u2-3")})
	if !slices.Equal(rows(), first) {
		t.Fatalf("rows %v after a refresh, were %v", rows(), first)
	}

	// Select u2-1, put the cursor on u2-4, archive the selection; the read
	// after it returns the rest in yet another order.
	i1, i4 := slices.Index(first, "u2-1"), slices.Index(first, "u2-4")
	m.cursor[viewMessages] = i1
	m = press(t, m, "space")
	m.cursor[viewMessages] = i4
	f.msgs = mk("u2-3", "u2-0", "u2-4", "u2-2")
	m = press(t, m, "a")
	if s := checkScreen(t, m); !strings.Contains(flat(s), ": u2-1) to a.jsonl") {
		t.Fatalf("the archive prompt does not name u2-1:\n%s", s)
	}
	m = press(t, m, "y")
	if got := cursorID(t, m); got != "u2-4" {
		t.Fatalf("after the archive the cursor is on %s, want u2-4 (rows %v)", got, rows())
	}
	m = press(t, m, "r")
	if s := checkScreen(t, m); !strings.Contains(flat(s), "Replay 1 message (the message under the cursor of group ") || !strings.Contains(flat(s), ": u2-4)") {
		t.Fatalf("the replay prompt does not name u2-4:\n%s", s)
	}
	m = press(t, m, "n")

	// The list shrinks below the cursor: the cursor comes to the last row.
	m.cursor[viewMessages] = 3
	m = run(t, m, LoadedMsg{Messages: mk("u2-0", "u2-3")})
	if got := cursorID(t, m); got != "u2-3" {
		t.Fatalf("cursor on %s after the list shrank, want the last row u2-3", got)
	}
	if m = press(t, m, "enter"); m.view != viewMessage || m.curMsg.Header.MessageID != "u2-3" {
		t.Fatalf("enter after the list shrank: view %d, screen:\n%s", m.view, checkScreen(t, m))
	}
}

// TestTriageEditInvalidBody: an edit that leaves an invalid body is
// checked as soon as the editor returns: the console offers to edit again
// (y runs the editor again) or abandon (n: nothing sent, files removed),
// and never asks to replay it.
func TestTriageEditInvalidBody(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	invalid := errors.New("the body is not valid JSON: unexpected end of JSON input")
	ed := &fakeEdit{checks: []error{invalid}}
	f := &fakeActions{msgs: []*message.Message{rejected("t1", "orders", "timeout", `{"a":1}`, now.Add(-time.Minute))}, edit: ed}
	m := New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, m.Init()())
	m = press(t, m, "enter", "enter", "e")
	if ed.commands != 1 {
		t.Fatalf("e ran the editor %d times", ed.commands)
	}
	m = run(t, m, editedMsg{id: "t1", ed: ed})
	s := checkScreen(t, m)
	if strings.Contains(s, "Replay the edited") || !strings.Contains(s, "not valid JSON") || !strings.Contains(s, "Edit it again?") {
		t.Fatalf("after an invalid edit:\n%s", s)
	}
	m = press(t, m, "y")
	if ed.commands != 2 || ed.finished != 0 || ed.closed != 0 {
		t.Fatalf("y: editor runs %d, finished %d, closed %d; want the editor again", ed.commands, ed.finished, ed.closed)
	}
	m = run(t, m, editedMsg{id: "t1", ed: ed})
	if s = checkScreen(t, m); !strings.Contains(s, "Replay the edited message t1 to orders") {
		t.Fatalf("after a valid edit:\n%s", s)
	}
	m = press(t, m, "y")
	if ed.finished != 1 {
		t.Fatalf("the valid edit was not replayed (finished %d)", ed.finished)
	}

	// invalid again, then n: abandoned, nothing sent, the files removed
	ed2 := &fakeEdit{checks: []error{invalid}}
	f.edit = ed2
	m = press(t, m, "e")
	m = run(t, m, editedMsg{id: "t1", ed: ed2})
	m = press(t, m, "n")
	if ed2.finished != 0 || ed2.closed != 1 || ed2.commands != 1 {
		t.Fatalf("n: finished %d, closed %d, editor runs %d", ed2.finished, ed2.closed, ed2.commands)
	}
	if s = checkScreen(t, m); !strings.Contains(s, "abandoned; nothing was sent") {
		t.Errorf("n after an invalid edit:\n%s", s)
	}
}

// notingActions is fakeActions whose Load also tells what it could not read.
type notingActions struct {
	fakeActions
	note string
}

func (n *notingActions) LoadNote() string { return n.note }

// TestTriageSaysWhatLoadCouldNotRead: when the destination's read
// says messages were held by another reader (a killed replay), the status
// line says so on the groups screen, so an empty console is not taken for
// an empty dead-letter queue; without a note nothing is said.
func TestTriageSaysWhatLoadCouldNotRead(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	const note = "2 more messages held invisible by another reader"
	a := &notingActions{note: note}
	m := New(context.Background(), a, func() time.Time { return now })
	m = run(t, m, m.Init()())
	if s := checkScreen(t, m); !strings.Contains(s, note) {
		t.Errorf("the groups screen does not say what the read could not see:\n%s", s)
	}
	// the caller's first read (dlq triage reads before the console starts)
	m = New(context.Background(), a, func() time.Time { return now }).WithMessages(nil)
	if s := checkScreen(t, m); !strings.Contains(s, note) {
		t.Errorf("after the caller's first read, the groups screen does not say what it could not see:\n%s", s)
	}
	a.note = ""
	m = New(context.Background(), a, func() time.Time { return now })
	m = run(t, m, m.Init()())
	if s := checkScreen(t, m); strings.Contains(s, "held invisible") {
		t.Errorf("a note with nothing held:\n%s", s)
	}
}
