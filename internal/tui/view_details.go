package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) detailLines() []string {
	type kv struct{ k, v string }
	var rows []kv
	var d *observe.MessageDetail
	title := "DETAILS"
	if m.focus == panelLog {
		return m.logDetailLines()
	}
	if m.focus == panelMessages {
		msgs := m.visibleMessages()
		if len(msgs) == 0 {
			return []string{m.styles.Section.Render(title), "  nothing selected (esc to go back)"}
		}
		ms := msgs[kit.Clamp(m.cursor[panelMessages], len(msgs))]
		d = ms.detail
		title += " · message " + ms.id
		rows = append(rows, kv{"subscription", ms.sub}, kv{"delivery count", ansi.Strip(m.bar(ms.count, ms.budget))}, kv{"state", ms.state})
		if ms.reason != "" {
			rows = append(rows, kv{"rejected", ms.reason + " → " + ms.route + " " + ms.dest}, kv{"rejection message", ms.desc})
		}
	} else {
		rs := m.visibleRejections()
		if len(rs) == 0 {
			return []string{m.styles.Section.Render(title), "  nothing selected (esc to go back)"}
		}
		r := rs[kit.Clamp(m.cursor[panelRejections], len(rs))]
		d = r.detail
		title += " · rejection of " + r.id
		rows = append(rows, kv{"subscription", r.sub}, kv{"delivery count", ansi.Strip(m.bar(r.count, r.budget))},
			kv{"reason", r.reason}, kv{"route", r.route + " " + r.dest}, kv{"rejection message", r.desc})
		if r.err != "" {
			rows = append(rows, kv{"routing error", r.err})
		}
	}
	if d != nil {
		rows = append(rows, kv{"topic", d.Topic}, kv{"message type", d.MessageType}, kv{"correlation id", d.CorrelationID},
			kv{"content type", d.ContentType}, kv{"partition key", d.PartitionKey}, kv{"traceparent", d.TraceParent})
		for _, k := range sortedKeys(d.Bag) {
			rows = append(rows, kv{"bag." + k, fmt.Sprint(d.Bag[k])})
		}
	}
	out := []string{m.styles.Section.Render(title + " (esc to go back)")}
	for _, r := range rows {
		if r.v == "" {
			continue
		}
		out = append(out, fmt.Sprintf("  %-18s %s", r.k, r.v))
	}
	if d != nil {
		out = append(out, m.styles.Section.Render(fmt.Sprintf("BODY · %d bytes", d.BodySize)))
		body := strings.ReplaceAll(d.BodyPreview, "\r", "")
		for _, l := range strings.Split(ansi.Wrap(body, m.width-4, ""), "\n") {
			out = append(out, "  "+l)
		}
	}
	return out
}
