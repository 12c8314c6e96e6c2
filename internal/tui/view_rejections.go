package tui

import (
	"fmt"
	"slices"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// rejectionsWide reports whether the rejection message has a column of its
// own (from 150 columns) rather than a line under its row.
func (m Model) rejectionsWide() bool { return m.width >= 150 }

// rejectionHeights are the lines each of rs takes: its row, and at under
// 150 columns the line of its message when it has one.
func (m Model) rejectionHeights(rs []rejection) []int {
	hs := make([]int, len(rs))
	for i, r := range rs {
		hs[i] = 1
		if !m.rejectionsWide() && kit.CollapseSpace(r.desc) != "" {
			hs[i] = 2
		}
	}
	return hs
}

// rejectionsNeed is how many lines the rejections panel takes to show
// every (visible) rejection: its title, column header and rows, or the
// empty line.
func (m Model) rejectionsNeed() int {
	n := 2
	for _, h := range m.rejectionHeights(m.visibleRejections()) {
		n += h
	}
	return max(n, 3)
}

func (m Model) rejectionLines(h int) []string {
	rs := m.visibleRejections()
	title := fmt.Sprintf("REJECTIONS · %d", len(rs))
	if m.focus == panelRejections {
		title += " ◂"
	}
	idW := max(m.width-66, 10)
	// The rejection message: from 150 columns a column of its own (the id
	// capped at 36 cells), narrower on a line of its own under its row.
	wide := m.rejectionsWide()
	destW := 0
	if wide {
		idW = min(idW, 36)
		for _, r := range rs {
			destW = max(destW, len([]rune(r.dest)), len("DESTINATION"))
		}
		destW = min(destW, 40)
	}
	head := fmt.Sprintf("  %-8s %-*s %5s %-14s %-15s %s", "TIME", idW, "MESSAGE ID", "COUNT", "REASON", "ROUTE", "DESTINATION")
	if wide {
		head = fmt.Sprintf("  %-8s %-*s %5s %-14s %-15s %-*s %s", "TIME", idW, "MESSAGE ID", "COUNT", "REASON", "ROUTE", destW, "DESTINATION", "REJECTION MESSAGE")
	}
	out := []string{m.styles.Section.Render(title), m.styles.Header.Render(head)}
	if len(rs) == 0 {
		return append(out, m.emptyLine(len(m.rejections) > 0, "rejection", "no rejections"))
	}
	cur := kit.Clamp(m.cursor[panelRejections], len(rs))
	// Short of room for every rejection with its message line, the
	// rejections go one line each (enter shows a rejection's message), and
	// as many as fit are drawn.
	rows := max(h-2, 1)
	heights := m.rejectionHeights(rs)
	compact := sum(heights) > rows
	if compact {
		heights = slices.Repeat([]int{1}, len(rs))
	}
	start, shown := fitRows(heights, cur, rows)
	for i := start; i < start+shown; i++ {
		r := rs[i]
		sel := i == cur && m.focus == panelRejections
		route := r.route
		if r.err != "" {
			route += " (failed)"
		}
		desc := kit.CollapseSpace(r.desc)
		dest := r.dest
		if wide {
			dest = fmt.Sprintf("%-*s %s", destW, kit.Cut(r.dest, destW), desc)
		}
		line := fmt.Sprintf("%s %-8s %-*s %5d %-14s %-15s %s", m.marker(sel), r.at.In(m.opt.Location).Format("15:04:05"), idW, kit.Cut(r.id, idW),
			r.count, r.reason, route, dest)
		switch {
		case sel:
			line = m.styles.Selected.Render(line)
		case r.err != "":
			line = m.styles.Bad.Render(line)
		}
		out = append(out, line)
		if !wide && !compact && desc != "" {
			out = append(out, m.styles.Dim.Render("           ↳ "+desc))
		}
	}
	if hidden := len(rs) - shown; hidden > 0 {
		out = append(out, m.moreLine(hidden))
	}
	return out
}

// fitRows chooses which rows of a panel to draw in rows lines, the rows
// taking heights lines each: every row when they all fit; else as many as
// fit in the lines left after the "+N more" line, from a first row that
// keeps the cursor's row shown (none when rows is 1: the line says how
// many there are). It returns the first row drawn and how many are drawn.
func fitRows(heights []int, cursor, rows int) (start, shown int) {
	if sum(heights) <= rows {
		return 0, len(heights)
	}
	budget := rows - 1
	for start < cursor && sum(heights[start:cursor+1]) > budget {
		start++
	}
	for used := 0; start+shown < len(heights) && used+heights[start+shown] <= budget; shown++ {
		used += heights[start+shown]
	}
	return start, shown
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// moreLine says a panel leaves hidden rows out for want of room; the
// cursor (tab to the panel, then ↑/↓) scrolls to them.
func (m Model) moreLine(hidden int) string {
	return m.styles.Dim.Render(fmt.Sprintf("  +%d more", hidden))
}
