package tui

import (
	"fmt"

	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) rejectionLines(h int) []string {
	rs := m.visibleRejections()
	title := fmt.Sprintf("REJECTIONS · %d", len(rs))
	if m.focus == panelRejections {
		title += " ◂"
	}
	idW := max(m.width-66, 10)
	// The rejection message: from 150 columns a column of its own (the id
	// capped at 36 cells), narrower on a line of its own under its row.
	wide := m.width >= 150
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
	rows := h - 2
	per := 1 // lines a rejection takes
	if !wide {
		per = 2
	}
	cur := kit.Clamp(m.cursor[panelRejections], len(rs))
	start := kit.Window(cur, max(rows/per, 1))
	for i := start; i < len(rs) && len(out)-2+per <= max(rows, per); i++ {
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
		if !wide && desc != "" {
			out = append(out, m.styles.Dim.Render("           ↳ "+desc))
		}
	}
	if len(rs) == 0 {
		out = append(out, m.emptyLine(len(m.rejections) > 0, "rejection", "no rejections"))
	}
	return out
}
