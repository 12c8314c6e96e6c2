package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) messageLines(h int) []string {
	msgs := m.visibleMessages()
	inFlight := 0
	for _, ms := range msgs {
		if !ms.settled {
			inFlight++
		}
	}
	title := fmt.Sprintf("MESSAGES · %d in flight · %d recently settled", inFlight, len(msgs)-inFlight)
	if m.focus == panelMessages {
		title += " ◂"
	}
	idW := max(m.width-60, 10)
	out := []string{
		m.styles.Section.Render(title),
		m.styles.Header.Render(fmt.Sprintf("  %-*s %-14s %-16s %-13s %s", idW, "MESSAGE ID", "SUBSCRIPTION", "COUNT/BUDGET", "STATE", "LAST")),
	}
	cur := kit.Clamp(m.cursor[panelMessages], len(msgs))
	start, shown := fitRows(slices.Repeat([]int{1}, len(msgs)), cur, max(h-2, 1))
	for i := start; i < start+shown; i++ {
		ms := msgs[i]
		sel := i == cur && m.focus == panelMessages
		barPlain := ansi.Strip(m.bar(ms.count, ms.budget))
		pad := max(16-ansi.StringWidth(barPlain), 0)
		line := fmt.Sprintf("%s %-*s %-14s %s%s %-13s %s", m.marker(sel), idW, kit.Cut(ms.id, idW), kit.Cut(ms.sub, 14),
			m.bar(ms.count, ms.budget), strings.Repeat(" ", pad), ms.state, ms.updated.In(m.opt.Location).Format("15:04:05"))
		if sel {
			line = m.styles.Selected.Render(ansi.Strip(line))
		}
		out = append(out, line)
	}
	if hidden := len(msgs) - shown; hidden > 0 {
		out = append(out, m.moreLine(hidden))
	}
	if len(msgs) == 0 {
		out = append(out, m.emptyLine(len(m.msgs) > 0, "message", "no messages yet"))
	}
	return out
}

// bar draws count against budget: "███░░ 3/5"; "3/∞" without a budget.
func (m Model) bar(count, budget int) string {
	if budget <= 0 {
		return fmt.Sprintf("%d/%s", count, fmtLimit(budget))
	}
	const cells = 10
	n := min(count*cells/budget, cells)
	if count > 0 && n == 0 {
		n = 1
	}
	full := strings.Repeat("█", n)
	empty := strings.Repeat("░", cells-n)
	style := m.styles.OK
	if count >= budget {
		style = m.styles.Bad
	} else if count*2 >= budget {
		style = m.styles.Warn
	}
	return style.Render(full) + m.styles.Dim.Render(empty) + fmt.Sprintf(" %d/%d", count, budget)
}
