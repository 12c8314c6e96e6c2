package kit

import (
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The cursor's row stays in view: the list scrolls only once the cursor
// passes the last row that fits, and then by one row a step.
func TestWindow_KeepsTheCursorsRowInView(t *testing.T) {
	for _, c := range []struct{ cursor, rows, want int }{
		{0, 5, 0}, {4, 5, 0}, {5, 5, 1}, {9, 5, 5}, {3, 1, 3},
	} {
		if got := Window(c.cursor, c.rows); got != c.want {
			t.Errorf("Window(%d, %d) = %d, want %d", c.cursor, c.rows, got, c.want)
		}
	}
}

// A cursor is always on a row of the list, and on row 0 of an empty one.
func TestClamp_KeepsTheCursorOnARow(t *testing.T) {
	for _, c := range []struct{ cursor, n, want int }{
		{0, 0, 0}, {7, 0, 0}, {-1, 3, 0}, {1, 3, 1}, {3, 3, 2}, {99, 3, 2},
	} {
		if got := Clamp(c.cursor, c.n); got != c.want {
			t.Errorf("Clamp(%d, %d) = %d, want %d", c.cursor, c.n, got, c.want)
		}
	}
}

// A body is cut or padded to the room it has, never more or less.
func TestPad_CutsOrPadsToTheRoom(t *testing.T) {
	if got := Pad([]string{"a", "b", "c"}, 2); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("cut: %q", got)
	}
	if got := Pad([]string{"a"}, 3); !slices.Equal(got, []string{"a", "", ""}) {
		t.Errorf("padded: %q", got)
	}
}

// A cut line ends in an ellipsis and is no wider than asked, escape
// sequences and wide characters counted as the cells they take.
func TestCutLines_NoLineWiderThanTheScreen(t *testing.T) {
	lines := CutLines([]string{"short", "\x1b[1m" + strings.Repeat("✗", 12) + "\x1b[0m", "exactly10!"}, 10)
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 10 {
			t.Errorf("%q is %d cells wide", l, w)
		}
	}
	if lines[0] != "short" || lines[2] != "exactly10!" || !strings.HasSuffix(ansi.Strip(lines[1]), Ellipsis) {
		t.Errorf("cut lines: %q", lines)
	}
}

// A status line wraps at spaces within the width; a word longer than the
// width is broken.
func TestWrap_StaysWithinTheWidth(t *testing.T) {
	got := Wrap("Replay 3 messages to sqs://orders-queue-with-a-very-long-name? (y/n)", 20)
	for _, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > 20 {
			t.Errorf("line %q is %d cells wide in:\n%s", l, w, got)
		}
	}
	if !strings.HasPrefix(got, "Replay 3 messages to\nsqs://") {
		t.Errorf("not wrapped at a space:\n%s", got)
	}
}

func TestCollapseSpace_OneLineOneSpace(t *testing.T) {
	if got := CollapseSpace(" a\n\tb  c \r\n"); got != "a b c" {
		t.Errorf("CollapseSpace = %q", got)
	}
}

// Plain styles nothing; Colour and Mono style what stands out, Mono
// without a colour.
func TestNewStyles_Palettes(t *testing.T) {
	if s := NewStyles(Plain); s.Title.Render("x") != "x" || s.Selected.Render("x") != "x" || s.Bad.Render("x") != "x" {
		t.Error("Plain styles something")
	}
	mono := NewStyles(Mono)
	for name, st := range map[string]string{"title": mono.Title.Render("x"), "dim": mono.Dim.Render("x"), "selected": mono.Selected.Render("x")} {
		if st == "x" {
			t.Errorf("Mono does not style the %s", name)
		}
		if strings.Contains(st, "38;") {
			t.Errorf("Mono colours the %s: %q", name, st)
		}
	}
	if c := NewStyles(Colour).Bad.Render("x"); c == "x" || !strings.Contains(c, "\x1b[") {
		t.Errorf("Colour does not colour Bad: %q", c)
	}
}

// A key bar shows each binding's bar entry, its key alone when the entry
// has no description; a bar entry without a key takes the help key.
func TestKeyBar_FromTheBindings(t *testing.T) {
	filter := NewBinding(key.Help{Desc: "filter"}, key.WithKeys("/"), key.WithHelp("/", "filter by id"))
	replay := NewBinding(key.Help{Key: "r/R", Desc: "replay"}, key.WithKeys("r"), key.WithHelp("r", "replay the selection"))
	quit := NewBinding(key.Help{}, key.WithKeys("q"), key.WithHelp("q", "quit"))
	if got := KeyBar(" · ", filter, replay, quit); got != "/ filter · r/R replay · q" {
		t.Errorf("KeyBar = %q", got)
	}
	if got := HelpLine("  %-6s %s|%s %s", filter, replay); got != "  /      filter by id|r replay the selection" {
		t.Errorf("HelpLine = %q", got)
	}
	if !replay.Matches(tea.KeyPressMsg{Code: 'r', Text: "r"}) || replay.Matches(tea.KeyPressMsg{Code: 'R', Text: "R"}) {
		t.Error("the binding of r matches another key, or not r")
	}
}

// TestWrap_NeverBreaksInsideAURL: a prompt naming URLs is wrapped at
// spaces; a URL that fits on a line is never split at its slashes or
// hyphens, and one wider than the line is cut only at the width.
func TestWrap_NeverBreaksInsideAURL(t *testing.T) {
	const url = "sqs://orders-dead-letter-queue/with-a-path"
	got := Wrap("Replay 3 messages from "+url+" to pubsub://projects/p/topics/orders? (y/n)", 44)
	lines := strings.Split(got, "\n")
	if !slices.Contains(lines, url) && !strings.Contains(got, url) {
		t.Errorf("the URL was broken:\n%s", got)
	}
	if !strings.Contains(got, "pubsub://projects/p/topics/orders?") {
		t.Errorf("the second URL was broken:\n%s", got)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 44 {
			t.Errorf("a line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	long := strings.Repeat("x", 25)
	if got := Wrap("a "+long, 10); got != "a\nxxxxxxxxxx\nxxxxxxxxxx\nxxxxx" {
		t.Errorf("a word wider than the line: %q", got)
	}
}
