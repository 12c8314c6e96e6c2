package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View renders the dashboard.
func (m Model) View() tea.View {
	*m.views++
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = m.opt.Title
	return v
}

// Render returns the screen as a string of at most Height lines, each at
// most Width cells wide.
//
// The log panel and the key line are always at the bottom (the panels
// above give way on a small screen), and a draining consumer says so right
// under the header (issue 13).
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
	body := max(m.height-len(bottom), 1)
	if len(lines) > body {
		lines = lines[:body]
	}
	for len(lines) < body {
		lines = append(lines, "")
	}
	lines = append(lines, bottom...)
	if len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func clampCursor(c, n int) int {
	if n == 0 {
		return 0
	}
	return min(max(c, 0), n-1)
}

// window returns the first index to show so that cursor is visible in rows.
func window(cursor, rows int) int {
	if cursor < rows {
		return 0
	}
	return cursor - rows + 1
}

func (m Model) marker(selected bool) string {
	if selected {
		return "›"
	}
	return " "
}
