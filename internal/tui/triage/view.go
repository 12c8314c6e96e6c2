package triage

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

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
	if m.archived {
		how := " (read-only)"
		if _, ok := m.act.(Restorer); ok {
			how = " (r/R restore)"
		}
		tags = append(tags, "ARCHIVED "+m.act.ArchiveDestination()+how)
	}
	if m.dryRun {
		tags = append(tags, "DRY RUN")
	}
	if n := len(m.sel); n > 0 {
		tags = append(tags, fmt.Sprintf("%d selected", n))
	}
	tags = append(tags, "by: "+groupByNames[m.groupBy], "sort: "+sortNames[m.sort])
	if p, f := m.pendingRetries(); p+f > 0 {
		tags = append(tags, fmt.Sprintf("retries: %d pending, %d failed again", p, f))
	}
	switch {
	case m.loading:
		tags = append(tags, "reading…")
	case !m.lastRead.IsZero():
		tags = append(tags, "read "+m.lastRead.Local().Format("15:04:05")+" ("+m.ago(m.lastRead)+")")
	}
	if n := m.rows(); n > 0 && m.view != viewMessage {
		tags = append(tags, fmt.Sprintf("row %d of %d", m.cursor[m.view]+1, n))
	}
	tagLine := m.styles.Dim.Render(strings.Join(tags, " · "))
	heads := []string{head + "  " + tagLine}
	if ansi.StringWidth(heads[0]) > m.width {
		heads = []string{head, tagLine} // the source and the state, whole
	}
	bottom := m.bottomLines()
	m.avail = max(m.height-len(heads)-len(bottom), 1)
	var body []string
	switch {
	case m.help:
		body = m.keys.helpLines()
		if len(body) > m.avail {
			// taller than the screen: a window of it, saying so
			top := min(m.helpTop, len(body)-m.avail+1)
			body = append(body[top:top+m.avail-1:top+m.avail-1], m.styles.Dim.Render(fmt.Sprintf("(lines %d-%d of %d: up/down scroll, any other key closes)", top+1, top+m.avail-1, len(body))))
		}
	case m.loading && m.groups == nil:
		body = []string{"reading " + m.act.Source() + "..."}
	case m.view == viewGroups:
		body = m.groupLines()
	case m.view == viewMessages:
		body = m.messageLines()
	default:
		body = m.detailLines()
	}
	lines := append(heads, kit.Pad(body, m.avail)...)
	lines = append(lines, bottom...)
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, "\t", " ")
	}
	return strings.Join(kit.CutLines(lines, m.width), "\n")
}

// bottomLines are the filter, the confirmation, the progress or the
// result, and the key bar.
func (m Model) bottomLines() []string {
	var bottom []string
	if m.editing || m.filter.Value() != "" {
		f := m.filter.View()
		if m.view == viewGroups && m.filter.Value() != "" {
			n := 0
			for _, g := range m.visibleGroups() {
				n += g.matches(strings.ToLower(strings.TrimSpace(m.filter.Value())))
			}
			f += m.styles.Dim.Render(fmt.Sprintf("  %s match (ids, bodies, headers, causes); enter lists them", count(n)))
		}
		bottom = append(bottom, f)
	}
	switch g := m.groupAtCursor(); {
	case m.noting != "":
		bottom = append(bottom, m.styles.Section.Render("note on group "+m.noting+" (enter saves, esc cancels, empty removes it)"), m.noteInput.View())
	case g != nil && m.noteOf(g.id) != "" && m.view != viewMessage && !m.help:
		n := m.notes[g.id]
		line := "✎ " + m.noteOf(g.id)
		if n.By != "" {
			line += " (" + n.By + ", " + m.ago(n.At) + ")"
		}
		bottom = append(bottom, strings.Split(kit.Wrap(line, m.width), "\n")...)
	}
	// A confirmation or a result is wrapped, never cut: the destinations
	// of a destructive action are always shown whole.
	switch {
	case m.ask != nil:
		for l := range strings.SplitSeq(kit.Wrap(kit.VisibleLines(m.ask.prompt), m.width), "\n") {
			bottom = append(bottom, m.styles.Section.Render(l))
		}
	case m.busy != "":
		bottom = append(bottom, fmt.Sprintf("%s: %d of %d done, %d failed...", m.busy, m.done+m.failed, m.total, m.failed))
		if m.status != "" {
			bottom = append(bottom, kit.Visible(m.status))
		}
	case m.status != "":
		bottom = append(bottom, strings.Split(kit.Wrap(kit.VisibleLines(m.status), m.width), "\n")...)
	}
	for _, l := range m.keys.barLines(m.width) {
		bottom = append(bottom, m.styles.Dim.Render(l))
	}
	return bottom
}

// rows is how many rows the screen shown lists.
func (m Model) rows() int {
	switch m.view {
	case viewGroups:
		return len(m.visibleGroups())
	case viewMessages:
		return len(m.visibleMessages())
	}
	return 0
}

func (m Model) ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return inspect.Ago(m.now(), t)
}

// window returns the rows to show so the cursor stays visible, under
// above lines of headings.
func (m Model) window(rows []string, cursor, above int) []string {
	return rows[kit.Window(cursor, max(m.avail-above, 1)):]
}
