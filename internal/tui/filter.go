package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// matches applies the filter: whether one of fields contains it, whatever
// the case.
func (m Model) matches(fields ...string) bool {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	if f == "" {
		return true
	}
	for _, s := range fields {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

// filterSet reports whether a filter is set.
func (m Model) filterSet() bool { return strings.TrimSpace(m.filter.Value()) != "" }

// rateNow is the instant rates are measured at: the moment of the pause
// while paused, so the whole row stays frozen.
func (m Model) rateNow() time.Time {
	if m.paused {
		return m.pausedAt
	}
	return m.opt.Now()
}

// visibleMessages returns the filtered, sorted messages.
func (m Model) visibleMessages() []*msgState {
	out := make([]*msgState, 0, len(m.msgs))
	for _, ms := range m.msgs {
		if m.matches(ms.id, ms.sub, ms.reason, ms.state) {
			out = append(out, ms)
		}
	}
	slices.SortFunc(out, func(a, b *msgState) int {
		switch m.sort {
		case sortCount:
			if c := cmp.Compare(b.count, a.count); c != 0 {
				return c
			}
		case sortID:
			if c := cmp.Compare(a.id, b.id); c != 0 {
				return c
			}
			return cmp.Compare(a.sub, b.sub)
		}
		// In flight first, then most recently changed.
		if a.settled != b.settled {
			if a.settled {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.seq, a.seq)
	})
	return out
}

func (m Model) visibleRejections() []rejection {
	var out []rejection
	for _, r := range m.rejections {
		if m.matches(r.id, r.sub, r.reason, r.route) {
			out = append(out, r)
		}
	}
	return out
}

// visibleLogs returns the log lines the filter lets through, oldest first.
func (m Model) visibleLogs() []logLine {
	if !m.filterSet() {
		return m.logs
	}
	var out []logLine
	for _, l := range m.logs {
		if m.matches(l.text, l.sub, l.id) {
			out = append(out, l)
		}
	}
	return out
}

// emptyLine is the line of a panel with no row: that the filter hides
// every one ("no message matches the filter \"x\"") when there are some
// (hidden) and a filter is set, else none.
func (m Model) emptyLine(hidden bool, one, none string) string {
	if hidden && m.filterSet() {
		return m.styles.Dim.Render("  no " + one + " matches the filter " + strconv.Quote(strings.TrimSpace(m.filter.Value())))
	}
	return m.styles.Dim.Render("  " + none)
}
