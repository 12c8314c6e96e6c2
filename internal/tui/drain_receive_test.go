package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// A draining consumer whose drain waits only for a receive in flight (no
// message in flight) says so on its status line, with how long at most and
// the subscription, instead of "handlers finish and settle"; with a
// message still in flight the line counts it as before.
func TestModel_DrainingWaitingForTheReceiveInFlightSaysSo(t *testing.T) {
	m := tea.Model(newTestModel())
	m, _ = m.Update(tea.WindowSizeMsg{Width: 160, Height: 24})
	m, _ = m.Update(DrainingMsg{})
	m, _ = m.Update(AwaitingReceiveMsg{Subscription: "orders", UpTo: 20 * time.Second})
	s := ansi.Strip(m.(Model).Render())
	if want := "draining: waiting for the receive in flight to return (up to 20s, orders); its messages will be released"; !strings.Contains(s, want) {
		t.Fatalf("screen lacks %q:\n%s", want, s)
	}
	if strings.Contains(s, "handlers finish and settle") {
		t.Errorf("the screen still says handlers finish, with none running:\n%s", s)
	}
	busy := feed(newTestModel(), poisonRun())
	busy, _ = busy.Update(tea.WindowSizeMsg{Width: 160, Height: 24})
	busy, _ = busy.Update(AwaitingReceiveMsg{Subscription: "orders", UpTo: 20 * time.Second})
	if s := ansi.Strip(busy.(Model).Render()); !strings.Contains(s, "draining (1 in flight)... handlers finish and settle") {
		t.Errorf("with a message in flight:\n%s", s)
	}
}
