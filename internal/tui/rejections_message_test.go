package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestModel_RejectionsShowTheRejectionMessage: the rejections panel shows
// each rejection's message (why it was rejected), on a line under its row
// at 80 columns and in a column of its own at 160, with the route and the
// destination still shown.
func TestModel_RejectionsShowTheRejectionMessage(t *testing.T) {
	for _, w := range []int{80, 160} {
		m, _ := feed(newTestModel(), poisonRun()).Update(tea.WindowSizeMsg{Width: w, Height: 30})
		s := ansi.Strip(m.(Model).Render())
		for _, want := range []string{"redelivery budget exhausted: delivery count 3", "dead-letter", "orders-dlq"} {
			if !strings.Contains(s, want) {
				t.Errorf("at %d columns the screen lacks %q:\n%s", w, want, s)
			}
		}
		if w >= 150 && !strings.Contains(s, "REJECTION MESSAGE") {
			t.Errorf("at %d columns no REJECTION MESSAGE column:\n%s", w, s)
		}
	}
}
