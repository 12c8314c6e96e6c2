package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/tui/kit"
)

func (m Model) subLines() []string {
	w := m.width
	nameW := max(w-62, 8)
	out := []string{
		m.styles.Section.Render("SUBSCRIPTIONS"),
		m.styles.Header.Render(fmt.Sprintf("%-*s %7s %6s %6s %6s %5s %4s %4s %4s %6s", nameW, "NAME", "RECV/S", "RECV", "ACK", "DEFER", "REJ", "R", "M", "EFF", "DLQ")),
	}
	names := sortedKeys(m.subs)
	shown := 0
	for _, n := range names {
		s := m.subs[n]
		if !m.matches(n) {
			continue
		}
		t := s.counts
		if tt, ok := m.subTotals(n); ok {
			// /metrics counts everything since the consumer started, events
			// only what this dashboard saw: the last scrape plus the events
			// since it.
			t = tt
			t.Received += s.counts.Received - s.atScrape.Received
			t.Acknowledged += s.counts.Acknowledged - s.atScrape.Acknowledged
			t.Deferred += s.counts.Deferred - s.atScrape.Deferred
			t.Rejected += s.counts.Rejected - s.atScrape.Rejected
		}
		r, mm, eff := fmtLimit(s.budget), "-", fmtLimit(s.budget)
		if s.info != nil {
			if s.info.NativeLimit > 0 {
				mm = strconv.Itoa(s.info.NativeLimit)
			}
			eff = fmtLimit(s.info.EffectiveLimit)
		}
		dlq := "-"
		switch {
		case s.depthOK:
			dlq = strconv.FormatInt(s.depth, 10)
		case t.HasDLQDepth:
			dlq = strconv.FormatFloat(t.DLQDepth, 'f', 0, 64)
		}
		line := fmt.Sprintf("%-*s %7.1f %6.0f %6.0f %6.0f %5.0f %4s %4s %4s %6s", nameW, kit.Cut(n, nameW),
			s.rate(m.rateNow()), t.Received, t.Acknowledged, t.Deferred, t.Rejected, r, mm, eff, dlq)
		if t.Rejected > 0 {
			line = m.styles.Warn.Render(line)
		}
		out = append(out, line)
		out = append(out, m.statusLines(s)...)
		shown++
	}
	if shown == 0 {
		msg := "waiting for events…"
		switch {
		case len(m.subs) > 0 && m.filterSet():
			msg = "no subscription matches the filter " + strconv.Quote(strings.TrimSpace(m.filter.Value()))
		case m.allUnreachable():
			msg = "no consumer reachable yet; still trying (see above)"
		}
		out = append(out, m.styles.Dim.Render(msg))
	}
	return out
}

// statusLines are the subscription's channel status under its row:
// connected; failing since T (for how long, how many calls in a row,
// whether that made the consumer not ready) with the last error on a line
// of its own, cut in the middle to the width; or stopped.
//
// With several targets (replicas of one consumer) each target that is not
// connected has lines of its own, named; "connected" means all are.
//
// While consume opens its channels (ConnectingMsg in consume --tui,
// connecting records from a watched target), a row says connected only
// once its channel is open; the one being opened says connecting (for how
// long), the others waiting.
func (m Model) statusLines(s *subState) []string {
	if c := m.connecting; c != nil {
		return []string{m.connectingStatus(c, s.name)}
	}
	var out []string
	targets := sortedKeys(s.health)
	for _, t := range targets {
		name := ""
		if len(targets) > 1 || len(m.opt.Targets) > 1 {
			name = t + ": "
		}
		out = append(out, m.targetStatus(*s.health[t], name)...)
	}
	if len(out) == 0 {
		return []string{m.styles.OK.Render("  ✓ connected")}
	}
	return out
}

// connectingStatus is subscription name's status line while the consumer
// opens its channels, in turn: connected when its channel is open,
// connecting (for how long; giving up after q) when it is being opened,
// else waiting for its turn.
func (m Model) connectingStatus(c *ConnectingMsg, name string) string {
	switch {
	case slices.Contains(c.Opened, name):
		return m.styles.OK.Render("  ✓ connected")
	case name == c.Subscription && m.connectStopping:
		return m.styles.Warn.Render("  … giving up the connection")
	case name == c.Subscription:
		return m.styles.Warn.Render(fmt.Sprintf("  … connecting (for %s)", m.opt.Now().Sub(c.Since).Truncate(time.Second)))
	case m.connectStopping:
		return m.styles.Dim.Render("  ■ not connected")
	}
	return m.styles.Dim.Render("  · waiting to connect (after subscription " + c.Subscription + ")")
}

// targetStatus is one target's status lines, nil when it is connected;
// name prefixes them ("" with one target).
func (m Model) targetStatus(h channelStatus, name string) []string {
	switch {
	case h.stopped && h.stopErr != "":
		head := "  ✗ " + name + "stopped: "
		return []string{m.styles.Bad.Render(head + squeeze(h.stopErr, m.width-ansi.StringWidth(head)))}
	case h.stopped:
		return []string{m.styles.Dim.Render("  ■ " + name + "stopped")}
	case h.connecting:
		return []string{m.styles.Warn.Render(fmt.Sprintf("  … %sconnecting (for %s)", name, max(m.opt.Now().Sub(h.connSince), 0).Truncate(time.Second)))}
	case h.waitingFor != "":
		return []string{m.styles.Dim.Render("  · " + name + "waiting to connect (after subscription " + h.waitingFor + ")")}
	case h.failing:
		head := "  ✗ " + name + "failing since " + h.since.In(m.opt.Location).Format("15:04:05")
		var extra []string
		if d := m.rateNow().Sub(h.since); d >= time.Second {
			extra = append(extra, d.Round(time.Second).String())
		}
		if h.failures > 0 {
			extra = append(extra, fmt.Sprintf("%d failed calls", h.failures))
		}
		if len(extra) > 0 {
			head += " (" + strings.Join(extra, ", ") + ")"
		}
		if h.stalled {
			head += " · not ready"
		}
		out := []string{m.styles.Bad.Render(head)}
		if h.lastErr != "" {
			const label = "    last error: "
			e := strings.TrimPrefix(h.lastErr, "channel failure: ")
			out = append(out, m.styles.Bad.Render(label+squeeze(e, m.width-len(label))))
		}
		return out
	}
	return nil
}

// squeeze fits s into w cells by cutting its middle: the start of an error
// says which call failed, its end why ("connection refused").
func squeeze(s string, w int) string {
	s = kit.CollapseSpace(s)
	sw := ansi.StringWidth(s)
	if sw <= w || w < 8 {
		return s
	}
	head := w / 3
	tail := w - head - 1
	return ansi.Truncate(s, head, "") + kit.Ellipsis + ansi.TruncateLeft(s, sw-tail, "")
}

func fmtLimit(n int) string {
	if n < 0 {
		return "∞"
	}
	return strconv.Itoa(n)
}
