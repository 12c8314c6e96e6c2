package triage

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// View renders the console.
func (m Model) View() tea.View {
	return kit.Screen(m.Render(), "brighter dlq triage")
}

// Render returns the screen: at most Height lines of at most Width cells.
func (m Model) Render() string {
	head := m.styles.Title.Render("brighter dlq triage") + " " + m.act.Source()
	var tags []string
	if m.dryRun {
		tags = append(tags, "DRY RUN")
	}
	if n := len(m.sel); n > 0 {
		tags = append(tags, fmt.Sprintf("%d selected", n))
	}
	tags = append(tags, "sort: "+sortNames[m.sort])
	head += "  " + m.styles.Dim.Render(strings.Join(tags, " · "))
	var body []string
	switch {
	case m.help:
		body = m.keys.helpLines()
	case m.loading && m.groups == nil:
		body = []string{"reading " + m.act.Source() + "..."}
	case m.view == viewGroups:
		body = m.groupLines()
	case m.view == viewMessages:
		body = m.messageLines()
	default:
		body = m.detailLines()
	}
	var bottom []string
	if m.editing || m.filter.Value() != "" {
		bottom = append(bottom, m.filter.View())
	}
	// A confirmation or a result is wrapped, never cut: the destinations
	// of a destructive action are always shown whole.
	switch {
	case m.ask != nil:
		for l := range strings.SplitSeq(kit.Wrap(m.ask.prompt, m.width), "\n") {
			bottom = append(bottom, m.styles.Section.Render(l))
		}
	case m.busy != "":
		bottom = append(bottom, fmt.Sprintf("%s: %d of %d done, %d failed...", m.busy, m.done+m.failed, m.total, m.failed))
		if m.status != "" {
			bottom = append(bottom, m.status)
		}
	case m.status != "":
		bottom = append(bottom, strings.Split(kit.Wrap(m.status, m.width), "\n")...)
	}
	bottom = append(bottom, m.styles.Dim.Render(m.keys.bar()))
	lines := append([]string{head}, kit.Pad(body, max(m.height-1-len(bottom), 1))...)
	lines = append(lines, bottom...)
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, "\t", " ")
	}
	return strings.Join(kit.CutLines(lines, m.width), "\n")
}

func (m Model) ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return inspect.Ago(m.now(), t)
}

// window returns the rows of lines to show so the cursor stays visible.
func (m Model) window(rows []string, cursor int) []string {
	return rows[kit.Window(cursor, max(m.height-5, 1)):]
}
