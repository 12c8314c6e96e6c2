package triage

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) messageLines() []string {
	g := m.cur
	title := fmt.Sprintf("group %s · %s · %s · %s", kit.Visible(g.id), kit.Visible(g.key.OriginalTopic), kit.Visible(g.key.Reason), count(len(g.msgs)))
	if m.groupBy != byCause {
		title = fmt.Sprintf("group %s · %s", kit.Visible(g.id), count(len(g.msgs)))
	}
	if n := m.noteOf(g.id); n != "" && g.search == "" {
		title += " · ✎"
	}
	if g.search != "" {
		title = fmt.Sprintf("search /%s · %s matching, from every group", g.search, count(len(g.msgs)))
	}
	ms := m.visibleMessages()
	idW, topicW, retryW := 8, 0, 0
	for _, x := range ms {
		retryW = max(retryW, len([]rune(m.retryCell(x.Header.MessageID))))
		idW = max(idW, len([]rune(m.idCell(x.Header.MessageID))))
		if g.search != "" || m.width >= 110 {
			topicW = max(topicW, 6, len([]rune(kit.Visible(inspect.Describe(x).OriginalTopic))))
		}
	}
	idW, topicW = min(idW, 40), min(topicW, 24)
	head := fmt.Sprintf(" %-*s %-8s %5s ", idW, "ID", "REJECTED", "DELIV")
	if retryW > 0 {
		retryW = max(retryW, len("RETRIED"))
		head += fmt.Sprintf("%-*s ", retryW, "RETRIED")
	}
	if topicW > 0 {
		head += fmt.Sprintf("%-*s ", topicW, "TOPIC")
	}
	lines := []string{title, m.styles.Header.Render(head + "CAUSE")}
	causes := make([]string, len(ms))
	for i, x := range ms {
		causes[i] = cause(inspect.Describe(x))
	}
	causes = inspect.FoldShared(causes, max(m.width-ansi.StringWidth(head)-1, 1))
	var rows []string
	for i, x := range ms {
		d := inspect.Describe(x)
		mark := " "
		if m.sel[d.ID] {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-*s %-8s %5d ", mark, idW, kit.Cut(m.idCell(d.ID), idW), m.ago(rejectedAt(x)), deliveries(d))
		if retryW > 0 {
			row += fmt.Sprintf("%-*s ", retryW, m.retryCell(d.ID))
		}
		if topicW > 0 {
			row += fmt.Sprintf("%-*s ", topicW, kit.Cut(kit.Visible(d.OriginalTopic), topicW))
		}
		row += causes[i]
		if i == m.cursor[viewMessages] {
			row = m.styles.Selected.Render(kit.Cut(row, m.width))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewMessages], 2)...)
}

// deliveries is how many times the message was delivered when it was
// rejected (inspect.Described.Deliveries).
func deliveries(d inspect.Described) int { return d.Deliveries }
