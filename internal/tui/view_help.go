package tui

import "github.com/brightergo/brighter/internal/tui/kit"

// helpLines is the help screen: every key with what it does, and how to
// read the subscriptions' and the messages' columns.
func (m Model) helpLines() []string {
	out := []string{m.styles.Section.Render("KEYS (? or esc to close)")}
	for _, b := range m.keys.all() {
		out = append(out, kit.HelpLine("  %-12s %s", b))
	}
	out = append(out, "",
		"  COUNT/BUDGET draws a message's delivery count against requeueCount (R):",
		"  at R the next Defer rejects it with DeliveryError to the dead-letter route.",
		"  M is the broker's native redrive limit; EFF the smaller of R and M.")
	return out
}

// footer is the key line at the bottom: the keys of the filter's input
// while it is typed; while a consumer connects, or drains, what q does
// then.
func (m Model) footer() string {
	k := m.keys
	if m.filtering {
		return m.styles.Dim.Render(kit.KeyBar(" · ", k.Apply, k.Back))
	}
	if m.connecting != nil && m.opt.Interrupt != nil {
		// Nothing received yet: q gives the connection up, q again
		// exits at once.
		stop := k.Quit
		stop.Bar.Desc = "stop: give up the connection (nothing is received)"
		if m.connectStopping {
			stop.Bar.Desc = "exit at once"
		}
		return m.styles.Dim.Render(kit.KeyBar(" · ", stop, k.Help))
	}
	if m.draining && m.opt.Interrupt != nil {
		exit := k.Quit
		exit.Bar.Desc = "exit at once (unsettled messages are left to the broker)"
		return m.styles.Dim.Render(kit.KeyBar(" · ", exit, k.Filter, k.Help))
	}
	return m.styles.Dim.Render(kit.KeyBar(" · ", k.Filter, k.Sort, k.Pause, k.Tab, k.Details, k.Help, k.Quit))
}
