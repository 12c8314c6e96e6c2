package triage

import (
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// minFold is the shortest shared prefix a cause is folded by (cells).
const minFold = 12

// foldShared returns each of texts with the longest prefix it shares with
// any other of them folded to kit.Ellipsis, cut at a word's start, so what
// tells them apart comes first: "redelivery budget exhausted: ... (a)"
// and "... (b)" become "…(a)" and "…(b)". A text shares nothing with
// itself; a prefix shorter than minFold is kept.
func foldShared(texts []string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		n := 0
		for j, u := range texts {
			if j != i && t != u {
				n = max(n, commonPrefix(t, u))
			}
		}
		// back to the start of the word the texts part in
		if n < len(t) {
			n = strings.LastIndexAny(t[:n], " /:,(=") + 1
		}
		if n < minFold || n >= len(t) {
			out[i] = t
			continue
		}
		out[i] = kit.Ellipsis + t[n:]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// cause is a message's rejection message on one line ("" when none).
func cause(d inspect.Described) string { return kit.CollapseSpace(d.RejectionMessage) }

func (m Model) groupLines() []string {
	gs := m.visibleGroups()
	wide := m.width >= 110
	topicW := 6
	for _, g := range gs {
		topicW = max(topicW, len([]rune(g.key.OriginalTopic)))
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
		causes[i] = g.key.Message
		if c := cause(inspect.Describe(g.msgs[0])); c != "" {
			causes[i] = c
		}
	}
	causes = foldShared(causes)
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	var rows []string
	for i, g := range gs {
		mark := " "
		if m.allSelected(g.msgs) {
			mark = "*"
		}
		row := fmt.Sprintf("%s%5d %-7s %-7s ", mark, len(g.msgs), m.ago(g.oldest), m.ago(g.newest))
		if wide {
			row += fmt.Sprintf("%-12s %-13s ", g.id, g.key.Reason)
		}
		c := causes[i]
		if q != "" {
			if n := g.matches(q); n > 0 {
				c = fmt.Sprintf("[%d match] %s", n, c)
			}
		}
		row += fmt.Sprintf("%-*s %s", topicW, kit.Cut(g.key.OriginalTopic, topicW), c)
		if i == m.cursor[viewGroups] {
			row = m.styles.Selected.Render(kit.Cut(row, m.width))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewGroups], 1)...)
}
