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
	out := []string{
		m.styles.Section.Render(title),
		m.styles.Header.Render(fmt.Sprintf("  %-8s %-*s %5s %-14s %-15s %s", "TIME", idW, "MESSAGE ID", "COUNT", "REASON", "ROUTE", "DESTINATION")),
	}
	rows := h - 2
	cur := kit.Clamp(m.cursor[panelRejections], len(rs))
	start := kit.Window(cur, rows)
	for i := start; i < len(rs) && i < start+rows; i++ {
		r := rs[i]
		sel := i == cur && m.focus == panelRejections
		route := r.route
		if r.err != "" {
			route += " (failed)"
		}
		line := fmt.Sprintf("%s %-8s %-*s %5d %-14s %-15s %s", m.marker(sel), r.at.In(m.opt.Location).Format("15:04:05"), idW, kit.Cut(r.id, idW),
			r.count, r.reason, route, r.dest)
		switch {
		case sel:
			line = m.styles.Selected.Render(line)
		case r.err != "":
			line = m.styles.Bad.Render(line)
		}
		out = append(out, line)
	}
	if len(rs) == 0 {
		out = append(out, m.emptyLine(len(m.rejections) > 0, "rejection", "no rejections"))
	}
	return out
}
