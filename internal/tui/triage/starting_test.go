package triage

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/message"
)

// TestStarting_ShowsTheConnectingScreenUntilReadyOrFailed: The console's first
// screen, while dlq triage connects: which destination, which transport and
// endpoint, and for how long (moving with the clock); q is a quit and ctrl+c an
// interruption, as in the console; ReadyMsg shows the console (at the
// terminal's size) and the keys are its own from then on; StartFailedMsg ends
// the screen.
func TestStarting_ShowsTheConnectingScreenUntilReadyOrFailed(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(3 * time.Second)
	clock := func() time.Time { return now }
	s := NewStarting("sqs://orders-dlq", "sqs", "http://127.0.0.1:4566", t0, clock)
	screen := func(m tea.Model) string { return ansi.Strip(m.(Starting).Render()) }
	for _, want := range []string{"connecting to the broker for 3s: reading sqs://orders-dlq...", "  sqs at http://127.0.0.1:4566", "q quit (exit 0)"} {
		if !strings.Contains(screen(s), want) {
			t.Errorf("the connecting screen lacks %q:\n%s", want, screen(s))
		}
	}
	now = t0.Add(17 * time.Second)
	var m tea.Model = s
	if m, _ = m.Update(startingTick{}); !strings.Contains(screen(m), "for 17s:") {
		t.Errorf("the count did not move with the clock:\n%s", screen(m))
	}

	m, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if st := m.(Starting); cmd == nil || !st.Quit() || st.Interrupted() {
		t.Errorf("q while connecting: quit %v, interrupted %v, cmd %v; want a quit", st.Quit(), st.Interrupted(), cmd)
	}
	m, cmd = tea.Model(s).Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if st := m.(Starting); cmd == nil || st.Quit() || !st.Interrupted() {
		t.Errorf("ctrl+c while connecting: quit %v, interrupted %v, cmd %v; want an interruption", st.Quit(), st.Interrupted(), cmd)
	}
	if _, cmd = tea.Model(s).Update(StartFailedMsg{}); cmd == nil {
		t.Errorf("StartFailedMsg did not end the screen")
	}

	m, _ = tea.Model(s).Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	f := &fakeActions{msgs: []*message.Message{rejected("live1", "orders", "timeout calling payments", `{}`, t0)}}
	m, _ = m.Update(ReadyMsg{Console: New(context.Background(), f, clock).WithMessages(f.msgs)})
	st := m.(Starting)
	c, ok := st.Console()
	if !ok || c.width != 100 || c.height != 30 || strings.Contains(screen(m), "connecting") {
		t.Fatalf("after ReadyMsg: console %v at %dx%d; screen:\n%s", ok, c.width, c.height, screen(m))
	}
	m, _ = m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if st := m.(Starting); st.Quit() {
		t.Errorf("q in the console counts as a quit while connecting")
	}
}
