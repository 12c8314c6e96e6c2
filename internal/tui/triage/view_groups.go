package triage

import (
	"fmt"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) groupLines() []string {
	gs := m.visibleGroups()
	lines := []string{m.styles.Header.Render(fmt.Sprintf(" %-12s %5s %-7s %-7s %-13s %s", "GROUP", "COUNT", "OLDEST", "NEWEST", "REASON", "SAMPLE"))}
	if len(gs) == 0 {
		return append(lines, m.styles.Dim.Render("no dead-lettered messages"+map[bool]string{true: " match the filter", false: ""}[m.filter.Value() != ""]))
	}
	var rows []string
	for i, g := range gs {
		sample := g.key.Message
		if d := inspect.Describe(g.msgs[0]); d.RejectionMessage != "" {
			sample = d.RejectionMessage
		}
		mark := " "
		if m.allSelected(g.msgs) {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-12s %5d %-7s %-7s %-13s %s", mark, g.id, len(g.msgs), m.ago(g.oldest), m.ago(g.newest), g.key.Reason, kit.CollapseSpace(sample+" ("+g.key.OriginalTopic+")"))
		if i == m.cursor[viewGroups] {
			row = m.styles.Selected.Render(kit.Cut(row, m.width))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewGroups])...)
}
