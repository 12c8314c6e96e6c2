package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// View renders the dashboard.
func (m Model) View() tea.View {
	*m.views++
	return kit.Screen(m.Render(), m.opt.Title)
}

// Render returns the screen as a string of at most Height lines, each at
// most Width cells wide.
//
// The log panel and the key line are always at the bottom (the panels
// above give way on a small screen), and a draining consumer says so right
// under the header.
func (m Model) Render() string {
	bottom := append(m.logPanel(), m.footer())
	var lines []string
	lines = append(lines, m.header())
	if m.draining {
		lines = append(lines, m.drainingLine())
	}
	lines = append(lines, m.targetLines()...)
	switch {
	case m.help:
		lines = append(lines, m.helpLines()...)
	case m.details:
		lines = append(lines, m.detailLines()...)
	default:
		lines = append(lines, m.subLines()...)
		rest := m.height - len(lines) - len(bottom)
		msgH := max(rest*3/5, 3)
		rejH := max(rest-msgH, 3)
		lines = append(lines, m.messageLines(msgH)...)
		lines = append(lines, m.rejectionLines(rejH)...)
	}
	lines = append(kit.Pad(lines, max(m.height-len(bottom), 1)), bottom...)
	if len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	return strings.Join(kit.CutLines(lines, m.width), "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (m Model) marker(selected bool) string {
	if selected {
		return "›"
	}
	return " "
}
