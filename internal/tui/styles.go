package tui

import (
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// newStyles returns the dashboard's styles: its colours, none with noColor.
func newStyles(noColor bool) kit.Styles {
	if noColor {
		return kit.NewStyles(kit.Plain)
	}
	return kit.NewStyles(kit.Colour)
}

// plainInputStyles are the filter input's styles without colour.
func plainInputStyles() textinput.Styles {
	s := textinput.DefaultStyles(true)
	p := lipgloss.NewStyle()
	s.Focused = textinput.StyleState{Text: p, Placeholder: p, Suggestion: p, Prompt: p}
	s.Blurred = s.Focused
	s.Cursor.Color = nil
	s.Cursor.Blink = false
	return s
}
