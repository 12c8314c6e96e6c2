package tui

import (
	"fmt"
	"strconv"
	"strings"
)

// logPanel is the footer panel of the last Warn/Error log lines, oldest of
// them first.
func (m Model) logPanel() []string {
	ls := m.visibleLogs()
	title := "LOG · warnings and errors"
	if m.logCount > 0 {
		title += fmt.Sprintf(" · %d", m.logCount)
	}
	out := []string{m.styles.Section.Render(title)}
	if len(ls) == 0 {
		return append(out, m.styles.Dim.Render("  no warnings or errors"))
	}
	for _, l := range ls[max(len(ls)-m.opt.LogLines, 0):] {
		var b strings.Builder
		fmt.Fprintf(&b, "  %s %-5s ", l.at.In(m.opt.Location).Format("15:04:05"), l.level)
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
		if l.level == "ERROR" {
			out = append(out, m.styles.Bad.Render(b.String()))
		} else {
			out = append(out, m.styles.Warn.Render(b.String()))
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
