package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

func (m Model) header() string {
	parts := []string{m.styles.Title.Render(m.opt.Title)}
	if n := len(m.opt.Targets); n > 0 {
		ok := 0
		for _, t := range m.targets {
			if t.connected {
				ok++
			}
		}
		parts = append(parts, fmt.Sprintf("%d/%d targets connected", ok, n))
	}
	parts = append(parts, "sort: "+sortNames[m.sort])
	if f := m.filter.Value(); f != "" && !m.filtering {
		parts = append(parts, "filter: "+f)
	}
	if m.dropped > 0 {
		parts = append(parts, m.styles.Warn.Render(fmt.Sprintf("%d events dropped", m.dropped)))
	}
	if m.paused {
		p := "PAUSED"
		if n := m.pendingN; n > 0 {
			p += fmt.Sprintf(" (%d waiting)", n)
		}
		parts = append(parts, m.styles.Warn.Render(p))
	}
	return strings.Join(parts, " · ")
}

// connectingLines are shown from ConnectingMsg until ConnectedMsg: for
// how long the consumer has been connecting, which subscription it opens,
// and on its own line (the part a narrow screen cuts) the transport and
// endpoint; after q, that the connection is being given up.
func (m Model) connectingLines() []string {
	c := m.connecting
	if m.forced {
		return []string{m.styles.Bad.Render("exiting at once...")}
	}
	if m.connectStopping {
		return []string{m.styles.Warn.Render(fmt.Sprintf("stopping: giving up the connection (subscription %s)", c.Subscription))}
	}
	of := ""
	if c.Of > 1 {
		of = fmt.Sprintf(" (%d of %d)", c.Index, c.Of)
	}
	where := c.Transport
	if c.Endpoint != "" {
		where += " at " + c.Endpoint
	}
	return []string{
		m.styles.Warn.Render(fmt.Sprintf("connecting to the broker for %s: subscription %s%s...", m.opt.Now().Sub(c.Since).Truncate(time.Second), c.Subscription, of)),
		m.styles.Warn.Render("  " + where),
	}
}

// drainingLine is shown from q (or DrainingMsg) until the program ends.
func (m Model) drainingLine() string {
	if m.forced {
		return m.styles.Bad.Render(fmt.Sprintf("exiting at once (%d in flight left to the broker)...", m.inFlight()))
	}
	if n := m.inFlight(); n > 0 || len(m.awaitingReceive) == 0 {
		return m.styles.Warn.Render(fmt.Sprintf("draining (%d in flight)... handlers finish and settle, then the consumer exits", n))
	}
	// No handler runs: the drain waits for the receive still on the
	// broker (a long poll), whose messages it then releases.
	subs := slices.Sorted(maps.Keys(m.awaitingReceive))
	upTo := time.Duration(0)
	for _, d := range m.awaitingReceive {
		upTo = max(upTo, d)
	}
	return m.styles.Warn.Render(fmt.Sprintf("draining: waiting for the receive in flight to return (up to %s, %s); its messages will be released", upTo, strings.Join(subs, ", ")))
}

func (m Model) targetLines() []string {
	var out []string
	for _, t := range sortedKeys(m.targets) {
		st := m.targets[t]
		if st.connected || !st.seen {
			continue
		}
		out = append(out, m.styles.Bad.Render(fmt.Sprintf("✗ %s unreachable: %v", t, st.err)),
			m.styles.Bad.Render(fmt.Sprintf("  retrying in %s (attempt %d)", st.retryIn.Round(time.Second/10), st.attempt)))
	}
	if m.filtering {
		out = append(out, m.filter.View())
	}
	return out
}
