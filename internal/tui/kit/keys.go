package kit

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
)

// Binding is a key binding (bubbles/key) and its entry in a screen's
// one-line key bar. The binding's own Help (key.WithHelp) is its line on
// the help screen; Bar is the shorter entry of the key bar. A screen
// declares each of its keys once, as a Binding, and both handles the keys
// (Matches) and renders its key bar (KeyBar) and help screen (HelpLine)
// from it.
type Binding struct {
	key.Binding
	// Bar is the binding's entry in the key bar: a Key of "" is the
	// binding's help key, a Desc of "" shows the key alone.
	Bar key.Help
}

// NewBinding returns the binding of the keys and help texts opts give
// (key.WithKeys, key.WithHelp), shown in the key bar as bar.
func NewBinding(bar key.Help, opts ...key.BindingOpt) Binding {
	return Binding{Binding: key.NewBinding(opts...), Bar: bar}
}

// Matches reports whether the key pressed (a tea.KeyPressMsg, or anything
// that names a key as its String) is one of the binding's keys.
func (b Binding) Matches(k fmt.Stringer) bool { return key.Matches(k, b.Binding) }

// BarHelp is the binding's key bar entry, with its key filled in.
func (b Binding) BarHelp() key.Help {
	h := b.Bar
	if h.Key == "" {
		h.Key = b.Help().Key
	}
	return h
}

// KeyBar renders the key bar of bs: each binding's BarHelp, its key and
// then its description when it has one, sep between two.
func KeyBar(sep string, bs ...Binding) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		h := b.BarHelp()
		parts[i] = h.Key
		if h.Desc != "" {
			parts[i] += " " + h.Desc
		}
	}
	return strings.Join(parts, sep)
}

// HelpLine renders one line of a help screen: format (fmt verbs, two a
// binding) applied to the key and the description of each binding's Help,
// in turn.
func HelpLine(format string, bs ...Binding) string {
	args := make([]any, 0, 2*len(bs))
	for _, b := range bs {
		h := b.Help()
		args = append(args, h.Key, h.Desc)
	}
	return fmt.Sprintf(format, args...)
}
