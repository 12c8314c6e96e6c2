package triage

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// cause is a message's rejection message on one line ("" when none), its
// control characters escaped (kit.Visible).
func cause(d inspect.Described) string { return kit.Visible(kit.CollapseSpace(d.RejectionMessage)) }

func (m Model) groupLines() []string {
	gs := m.visibleGroups()
	wide := m.width >= 110
	topicW := 6
	for _, g := range gs {
		topicW = max(topicW, len([]rune(kit.Visible(g.key.OriginalTopic))))
	}
	topicW = min(topicW, max(m.width/4, 12))
	head := fmt.Sprintf(" %5s %-7s %-7s ", "COUNT", "OLDEST", "NEWEST")
	if wide {
		head += fmt.Sprintf("%-12s %-13s ", "GROUP", "REASON")
	}
	head += fmt.Sprintf("%-*s %s", topicW, "TOPIC", "CAUSE (the part groups share folded: …)")
	lines := []string{m.styles.Header.Render(head)}
	if len(gs) == 0 {
		return append(lines, m.styles.Dim.Render("no dead-lettered messages"+map[bool]string{true: " match the filter", false: ""}[m.filter.Value() != ""]))
	}
	causes := make([]string, len(gs))
	for i, g := range gs {
		causes[i] = kit.Visible(g.key.Message)
		if c := cause(inspect.Describe(g.msgs[0])); c != "" {
			causes[i] = c
		}
	}
	causes = inspect.FoldShared(causes, max(m.width-ansi.StringWidth(head)+len("CAUSE (the part groups share folded: …)")-1, 1))
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	var rows []string
	for i, g := range gs {
		mark := " "
		if m.allSelected(g.msgs) {
			mark = "*"
		}
		row := fmt.Sprintf("%s%5d %-7s %-7s ", mark, len(g.msgs), m.ago(g.oldest), m.ago(g.newest))
		if wide {
			row += fmt.Sprintf("%-12s %-13s ", kit.Visible(g.id), kit.Visible(g.key.Reason))
		}
		c := causes[i]
		if m.noteOf(g.id) != "" {
			c = "✎ " + c
		}
		if q != "" {
			if n := g.matches(q); n > 0 {
				c = fmt.Sprintf("[%d match] %s", n, c)
			}
		}
		row += fmt.Sprintf("%-*s %s", topicW, kit.Cut(kit.Visible(g.key.OriginalTopic), topicW), c)
		if i == m.cursor[viewGroups] {
			row = m.styles.Selected.Render(kit.Cut(row, m.width))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewGroups], 1)...)
}
