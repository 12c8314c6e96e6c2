package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// keyMap declares the dashboard's keys, once: Model.key handles them, the
// help screen lists them (all) and the key line shows their Bar entries.
type keyMap struct {
	Filter, Sort, Pause, Details, Help, Quit, Tab, Up, Down, Back kit.Binding
	// Apply ends the filter's input (Back clears it); it is on the key
	// line while the filter is typed, not on the help screen.
	Apply kit.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Filter:  kit.NewBinding(key.Help{Desc: "filter"}, key.WithKeys("/"), key.WithHelp("/", "filter by message id, subscription or reason")),
		Sort:    kit.NewBinding(key.Help{Desc: "sort"}, key.WithKeys("s"), key.WithHelp("s", "sort messages: recent, count, id")),
		Pause:   kit.NewBinding(key.Help{Desc: "pause"}, key.WithKeys("p"), key.WithHelp("p", "pause / resume (events wait while paused)")),
		Details: kit.NewBinding(key.Help{Desc: "details"}, key.WithKeys("enter"), key.WithHelp("enter", "details: headers, bag, body preview")),
		Tab:     kit.NewBinding(key.Help{Desc: "panel"}, key.WithKeys("tab"), key.WithHelp("tab", "switch between messages and rejections")),
		Up:      kit.NewBinding(key.Help{}, key.WithKeys("up", "k"), key.WithHelp("↑/k", "move up")),
		Down:    kit.NewBinding(key.Help{}, key.WithKeys("down", "j"), key.WithHelp("↓/j", "move down")),
		Back:    kit.NewBinding(key.Help{Desc: "clear"}, key.WithKeys("esc"), key.WithHelp("esc", "close details or help, clear the filter")),
		Help:    kit.NewBinding(key.Help{Desc: "help"}, key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:    kit.NewBinding(key.Help{Desc: "quit"}, key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Apply:   kit.NewBinding(key.Help{Key: "enter", Desc: "apply"}, key.WithKeys("enter")),
	}
}

// all are the keys on the help screen, in its order.
func (k keyMap) all() []kit.Binding {
	return []kit.Binding{k.Filter, k.Sort, k.Pause, k.Details, k.Tab, k.Up, k.Down, k.Back, k.Help, k.Quit}
}

// key applies a key press: to the filter while it is typed, else as the
// keyMap says.
func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.filtering {
		switch {
		case m.keys.Apply.Matches(msg):
			m.filtering = false
			m.filter.Blur()
			m.cursor = [2]int{}
			return m, nil
		case m.keys.Back.Matches(msg):
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
			return m, nil
		}
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		m.cursor = [2]int{}
		return m, cmd
	}
	k := m.keys
	switch {
	case k.Quit.Matches(msg):
		if m.opt.Interrupt == nil {
			m.interrupted = msg.String() == "ctrl+c"
			return m, tea.Quit
		}
		if m.connecting != nil {
			// Still connecting: the first q gives up the connection, a
			// second exits at once (the consumer's answer).
			m.forced = m.connectStopping
			m.connectStopping = true
		} else {
			if m.draining {
				m.forced = true
			}
			m.draining = true
		}
		interrupt := m.opt.Interrupt
		return m, func() tea.Msg { interrupt(); return nil }
	case k.Help.Matches(msg):
		m.help = !m.help
	case m.help && k.Back.Matches(msg):
		m.help = false
	case k.Back.Matches(msg):
		if m.details {
			m.details = false
		} else if m.filter.Value() != "" {
			m.filter.SetValue("")
		}
	case k.Filter.Matches(msg):
		m.filtering, m.help, m.details = true, false, false
		return m, m.filter.Focus()
	case k.Sort.Matches(msg):
		m.sort = (m.sort + 1) % sortMode(len(sortNames))
	case k.Pause.Matches(msg):
		m.paused = !m.paused
		m.pausedAt = m.opt.Now()
		if !m.paused {
			for _, b := range m.pending {
				for i := range b.Records {
					m.apply(&b.Records[i], b.Target)
				}
			}
			m.pending, m.pendingN = nil, 0
			m.trim()
		}
	case k.Details.Matches(msg):
		m.details = !m.details
	case k.Tab.Matches(msg):
		m.focus = 1 - m.focus
	case k.Up.Matches(msg):
		m.cursor[m.focus] = max(m.cursor[m.focus]-1, 0)
	case k.Down.Matches(msg):
		m.cursor[m.focus]++ // clamped when drawn
	}
	return m, nil
}
