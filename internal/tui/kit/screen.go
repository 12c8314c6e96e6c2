package kit

import tea "charm.land/bubbletea/v2"

// Screen is the tea.View of a full-screen program: content on the
// terminal's alternate screen, title the window's.
func Screen(content, title string) tea.View {
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = title
	return v
}
