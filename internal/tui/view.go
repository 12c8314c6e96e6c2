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
// above give way on a small screen), and a consumer still connecting or
// draining says so right under the header.
func (m Model) Render() string {
	bottom := append(m.logPanel(), m.footer())
	var lines []string
	lines = append(lines, m.header())
	if m.connecting != nil {
		lines = append(lines, m.connectingLines()...)
	}
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
		msgH, rejH := m.panelHeights(m.height - len(lines) - len(bottom))
		lines = append(lines, m.messageLines(msgH)...)
		lines = append(lines, m.rejectionLines(rejH)...)
	}
	lines = append(kit.Pad(lines, max(m.height-len(bottom), 1)), bottom...)
	if len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	return strings.Join(kit.CutLines(lines, m.width), "\n")
}

// panelHeights shares rest lines between the messages panel and the
// rejections panel: each gets what it needs when both fit; else the
// messages three fifths and the rejections the rest, a panel needing less
// than its share giving the lines it leaves to the other. Each gets at
// least 4 lines (its title and column header, a row and the "+N more"
// line) when rest has 8, else 3 (the row gives way), or what it needs
// when that is less.
func (m Model) panelHeights(rest int) (msgH, rejH int) {
	needM := 2 + max(len(m.visibleMessages()), 1)
	needR := m.rejectionsNeed()
	switch {
	case needM+needR <= rest:
		return needM, needR
	case needM < rest*3/5:
		msgH = needM
	case needR < rest-rest*3/5:
		msgH = rest - needR
	default:
		msgH = rest * 3 / 5
	}
	least := 3 // the title, the column header and "+N more"
	if rest >= 8 {
		least = 4 // and a row
	}
	msgH = max(msgH, min(needM, least))
	rejH = max(rest-msgH, min(needR, least))
	return msgH, rejH
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
