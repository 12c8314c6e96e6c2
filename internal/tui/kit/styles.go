package kit

import (
	"charm.land/lipgloss/v2"
)

// Styles are the text styles of a screen.
type Styles struct {
	// Title is the screen's name in its header; Section a panel's title
	// (or a line that must stand out, as a confirmation); Header a table's
	// column headings.
	Title, Section, Header lipgloss.Style
	// OK, Warn and Bad mark what is healthy, at risk and failed.
	OK, Warn, Bad lipgloss.Style
	// Dim is secondary text (hints, the key bar); Selected the row under
	// the cursor.
	Dim, Selected lipgloss.Style
}

// Palette is the look of a set of Styles.
type Palette int

const (
	// Colour is the dashboard's look: a blue title, grey headings and hints,
	// green, yellow and red for OK, Warn and Bad.
	Colour Palette = iota
	// Plain styles nothing (NO_COLOR, or output that is not a terminal).
	Plain
	// Mono is the triage console's look, without colours: bold titles,
	// headings and warnings, faint hints, the cursor's row in reverse.
	Mono
)

// NewStyles returns the Styles of palette p (Plain for an unknown one).
func NewStyles(p Palette) Styles {
	plain := lipgloss.NewStyle()
	switch p {
	case Colour:
		return Styles{
			Title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
			Section:  lipgloss.NewStyle().Bold(true),
			Header:   lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
			OK:       lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
			Warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
			Bad:      lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
			Dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
			Selected: lipgloss.NewStyle().Reverse(true),
		}
	case Mono:
		bold := lipgloss.NewStyle().Bold(true)
		return Styles{
			Title: bold, Section: bold, Header: bold,
			OK: plain, Warn: bold, Bad: bold,
			Dim:      lipgloss.NewStyle().Faint(true),
			Selected: lipgloss.NewStyle().Reverse(true),
		}
	}
	return Styles{plain, plain, plain, plain, plain, plain, plain, plain}
}
