package triage

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/inspect"
)

func (m Model) messageLines() []string {
	g := m.cur
	lines := []string{
		fmt.Sprintf("group %s · %s · %s · %s", g.id, g.key.OriginalTopic, g.key.Reason, count(len(g.msgs))),
		m.styles.bold.Render(fmt.Sprintf(" %-36s %-8s %5s %s", "ID", "REJECTED", "COUNT", "MESSAGE")),
	}
	var rows []string
	for i, x := range m.visibleMessages() {
		d := inspect.Describe(x)
		mark := " "
		if m.sel[d.ID] {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-36s %-8s %5d %s", mark, d.ID, m.ago(rejectedAt(x)), d.HandledCount, oneLine(d.RejectionMessage))
		if i == m.cursor[viewMessages] {
			row = m.styles.cursor.Render(ansi.Truncate(row, m.width, "…"))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewMessages])...)
}
