package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// logPanel is the footer panel of the last Warn/Error log lines, oldest of
// them first, each cut to the width. With the panel focused (tab) the
// cursor marks a line (the newest at first; ↑ goes back, the panel
// scrolling to it) and enter opens it whole (logDetailLines).
func (m Model) logPanel() []string {
	ls := m.visibleLogs()
	title := "LOG · warnings and errors"
	if m.logCount > 0 {
		title += fmt.Sprintf(" · %d", m.logCount)
	}
	if m.focus == panelLog {
		title += " ◂"
	}
	out := []string{m.styles.Section.Render(title)}
	if len(ls) == 0 {
		return append(out, m.styles.Dim.Render("  no warnings or errors"))
	}
	cur := m.logCursor(len(ls))
	start := max(len(ls)-m.opt.LogLines, 0)
	start = min(start, cur)
	for i := start; i < min(start+m.opt.LogLines, len(ls)); i++ {
		l := ls[i]
		sel := i == cur && m.focus == panelLog
		line := m.marker(sel) + " " + logText(l, m.opt.Location)
		switch {
		case sel:
			out = append(out, m.styles.Selected.Render(line))
		case l.level == "ERROR":
			out = append(out, m.styles.Bad.Render(line))
		default:
			out = append(out, m.styles.Warn.Render(line))
		}
	}
	return out
}

// logCursor is the index in the visible log lines (n of them) of the
// line under the LOG panel's cursor, which counts back from the newest.
func (m Model) logCursor(n int) int {
	return n - 1 - kit.Clamp(m.cursor[panelLog], n)
}

// logText is a log line as the panel shows it, before it is cut: the
// time and level, the subscription, the stable text, message_id, the
// error and the other attributes, in slog's text form.
func logText(l logLine, loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-5s ", l.at.In(loc).Format("15:04:05"), l.level)
	if l.sub != "" {
		b.WriteString(oneLine(l.sub) + ": ")
	}
	b.WriteString(oneLine(l.text))
	if l.id != "" {
		b.WriteString(" message_id=" + logValue(l.id))
	}
	// The error first: it is what a cut-off line must keep.
	for _, a := range l.attrs {
		if a.Key == "error" {
			b.WriteString(" " + a.Key + "=" + logValue(a.Value))
		}
	}
	for _, a := range l.attrs {
		if a.Key != "error" {
			b.WriteString(" " + a.Key + "=" + logValue(a.Value))
		}
	}
	return b.String()
}

// logDetailLines are the details of the log line under the LOG panel's
// cursor: every field on its own line, each value wrapped to the width,
// nothing cut.
func (m Model) logDetailLines() []string {
	const title = "DETAILS"
	ls := m.visibleLogs()
	if len(ls) == 0 {
		return []string{m.styles.Section.Render(title), "  nothing selected (esc to go back)"}
	}
	l := ls[m.logCursor(len(ls))]
	out := []string{m.styles.Section.Render(title + " · log line (esc to go back)")}
	add := func(k, v string) {
		if v == "" {
			return
		}
		const indent = "                     " // 2 + 18 + 1
		w := max(m.width-len(indent), 10)
		for i, part := range strings.Split(ansi.Wrap(v, w, " "), "\n") {
			if i == 0 {
				out = append(out, fmt.Sprintf("  %-18s %s", k, part))
			} else {
				out = append(out, indent+part)
			}
		}
	}
	add("time", l.at.In(m.opt.Location).Format("2006-01-02 15:04:05"))
	add("level", l.level)
	add("subscription", l.sub)
	add("message", l.text)
	add("message_id", l.id)
	for _, a := range l.attrs {
		if a.Key == "error" {
			add(a.Key, a.Value)
		}
	}
	for _, a := range l.attrs {
		if a.Key != "error" {
			add(a.Key, a.Value)
		}
	}
	return out
}

// oneLine turns line breaks and tabs into spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// logValue quotes a value as slog's text handler would when it has spaces,
// quotes or an equals sign, or is empty.
func logValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"\t\n") {
		return strconv.Quote(v)
	}
	return v
}
