package tui

import (
	"fmt"
)

func (m Model) helpLines() []string {
	out := []string{m.styles.Section.Render("KEYS (? or esc to close)")}
	for _, b := range m.keys.all() {
		h := b.Help()
		out = append(out, fmt.Sprintf("  %-12s %s", h.Key, h.Desc))
	}
	out = append(out, "",
		"  COUNT/BUDGET draws a message's delivery count against requeueCount (R):",
		"  at R the next Defer rejects it with DeliveryError to the dead-letter route.",
		"  M is the broker's native redrive limit; EFF the smaller of R and M.")
	return out
}

func (m Model) footer() string {
	if m.filtering {
		return m.styles.Dim.Render("enter apply · esc clear")
	}
	if m.draining && m.opt.Interrupt != nil {
		return m.styles.Dim.Render("q exit at once (unsettled messages are left to the broker) · / filter · ? help")
	}
	return m.styles.Dim.Render("/ filter · s sort · p pause · tab panel · enter details · ? help · q quit")
}
