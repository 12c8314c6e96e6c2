package tui

import (
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

type styles struct {
	title, section, header, ok, warn, bad, dim, selected lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		p := lipgloss.NewStyle()
		return styles{p, p, p, p, p, p, p, p}
	}
	return styles{
		title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		section:  lipgloss.NewStyle().Bold(true),
		header:   lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		ok:       lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		bad:      lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		selected: lipgloss.NewStyle().Reverse(true),
	}
}

func plainInputStyles() textinput.Styles {
	s := textinput.DefaultStyles(true)
	p := lipgloss.NewStyle()
	s.Focused = textinput.StyleState{Text: p, Placeholder: p, Suggestion: p, Prompt: p}
	s.Blurred = s.Focused
	s.Cursor.Color = nil
	s.Cursor.Blink = false
	return s
}
