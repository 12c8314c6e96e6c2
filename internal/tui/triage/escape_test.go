package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
)

// injected are terminal control sequences a sender or a handler can put
// in a message's id, topic, rejection message, bag or body: an OSC 0
// title, a CSI clear screen, an OSC 52 clipboard write ended by BEL, a C1
// CSI. No styling of the console writes any of them.
var injected = []string{"\x1b]0;", "\x1b[2J", "\x1b]52;", "\x07", "\u009b"}

// TestTriage_ShowsControlCharactersEscaped: a dead-lettered message whose
// id, original topic, rejection message, bag and body carry terminal
// control sequences is shown on the groups, messages and message screens
// and in the replay confirmation with each control character escaped
// (\x1b, \a, \u009b), never raw.
func TestTriage_ShowsControlCharactersEscaped(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	x := rejected("ev\x1b]0;PWNED\x07il", "orders\x1b[2J", "bad \x1b]52;c;SGVsbG8=\x07 evil \u009b31m", "{\"k\":\"\x1b]52;c;SGVsbG8=\x07\"}", now.Add(-time.Hour))
	x.Header.ContentType = "text/plain"
	x.Header.Bag["tenant"] = "acme\x1b[8m"
	f := &fakeActions{msgs: []*message.Message{x}}
	m := New(context.Background(), f, func() time.Time { return now })
	m = run(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = run(t, m, m.Init()())
	screens := map[string]Model{"groups": m}
	m = press(t, m, "enter")
	screens["messages"] = m
	screens["message"] = press(t, m, "enter")
	screens["replay confirmation"] = press(t, m, "space", "r")
	for name, s := range screens {
		raw := s.Render()
		for _, seq := range injected {
			if strings.Contains(raw, seq) {
				t.Errorf("the %s screen writes %q raw:\n%q", name, seq, raw)
			}
		}
	}
	want := map[string][]string{
		"groups":              {`bad \x1b]52;c;SGVsbG8=\a evil \u009b31m`, `orders\x1b[2J`},
		"messages":            {`ev\x1b]0;PWNED\ail`, `orders\x1b[2J`},
		"message":             {`message ev\x1b]0;PWNED\ail`, `from orders\x1b[2J`, `tenant: acme\x1b[8m`, `\x1b]52;c;SGVsbG8=\a"}`},
		"replay confirmation": {`ev\x1b]0;PWNED\ail`},
	}
	for name, ws := range want {
		s := screens[name].Render()
		for _, w := range ws {
			if !strings.Contains(s, w) {
				t.Errorf("the %s screen does not show %s:\n%s", name, w, s)
			}
		}
	}
}
