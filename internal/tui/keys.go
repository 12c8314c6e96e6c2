package tui

import (
	"charm.land/bubbles/v2/key"
)

type keyMap struct {
	Filter, Sort, Pause, Details, Help, Quit, Tab, Up, Down, Back, Apply key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter by message id, subscription or reason")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort messages: recent, count, id")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause / resume (events wait while paused)")),
		Details: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details: headers, bag, body preview")),
		Tab:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "switch between messages and rejections")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "move up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "move down")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close details or help, clear the filter")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Apply:   key.NewBinding(key.WithKeys("enter")),
	}
}

func (k keyMap) all() []key.Binding {
	return []key.Binding{k.Filter, k.Sort, k.Pause, k.Details, k.Tab, k.Up, k.Down, k.Back, k.Help, k.Quit}
}
