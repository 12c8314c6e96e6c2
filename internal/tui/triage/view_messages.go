package triage

import (
	"fmt"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) messageLines() []string {
	g := m.cur
	lines := []string{
		fmt.Sprintf("group %s · %s · %s · %s", g.id, g.key.OriginalTopic, g.key.Reason, count(len(g.msgs))),
		m.styles.Header.Render(fmt.Sprintf(" %-36s %-8s %5s %s", "ID", "REJECTED", "COUNT", "MESSAGE")),
	}
	var rows []string
	for i, x := range m.visibleMessages() {
		d := inspect.Describe(x)
		mark := " "
		if m.sel[d.ID] {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-36s %-8s %5d %s", mark, d.ID, m.ago(rejectedAt(x)), d.HandledCount, kit.CollapseSpace(d.RejectionMessage))
		if i == m.cursor[viewMessages] {
			row = m.styles.Selected.Render(kit.Cut(row, m.width))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewMessages])...)
}
