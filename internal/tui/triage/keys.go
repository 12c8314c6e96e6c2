package triage

import (
	"cmp"
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// keyMap declares the console's keys, once: Model.key handles them, the
// key bar shows their Bar entries (bar) and the help screen their help
// (helpLines).
type keyMap struct {
	Up, Down, Open, Back, Select, Replay, ReplayGroup, Edit, Archive, DryRun, Filter, Sort, Help, Quit kit.Binding
	// ForceQuit quits even while an action runs (its caller stops it).
	ForceQuit kit.Binding
	// Apply and Clear end the filter's input; Yes answers a confirmation
	// (any other key declines it).
	Apply, Clear, Yes kit.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		// Up's help line stands for Down too.
		Up:          kit.NewBinding(key.Help{}, key.WithKeys("up", "k"), key.WithHelp("up/down, j/k", "move")),
		Down:        kit.NewBinding(key.Help{}, key.WithKeys("down", "j")),
		Open:        kit.NewBinding(key.Help{Desc: "open"}, key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open a group, a message")),
		Back:        kit.NewBinding(key.Help{Desc: "back"}, key.WithKeys("esc", "left", "h", "backspace"), key.WithHelp("esc", "back, clear the filter")),
		Select:      kit.NewBinding(key.Help{Desc: "select"}, key.WithKeys("space", " "), key.WithHelp("space", "select the message (or group) under the cursor")),
		Replay:      kit.NewBinding(key.Help{Key: "r/R", Desc: "replay"}, key.WithKeys("r"), key.WithHelp("r", "replay the selection (or what is under the cursor)")),
		ReplayGroup: kit.NewBinding(key.Help{}, key.WithKeys("R"), key.WithHelp("R", "replay the whole group")),
		Edit:        kit.NewBinding(key.Help{Desc: "edit"}, key.WithKeys("e"), key.WithHelp("e", "edit the message in $EDITOR, then replay the edited copy")),
		Archive:     kit.NewBinding(key.Help{Desc: "archive"}, key.WithKeys("a"), key.WithHelp("a", "archive the selection (or what is under the cursor)")),
		DryRun:      kit.NewBinding(key.Help{Desc: "dry"}, key.WithKeys("d"), key.WithHelp("d", "dry run on/off: actions show what they would do")),
		Filter:      kit.NewBinding(key.Help{}, key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:        kit.NewBinding(key.Help{}, key.WithKeys("s"), key.WithHelp("s", "sort: count, newest, oldest")),
		Help:        kit.NewBinding(key.Help{}, key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:        kit.NewBinding(key.Help{}, key.WithKeys("q"), key.WithHelp("q", "quit (nothing is held: every read is released at once)")),
		ForceQuit:   kit.NewBinding(key.Help{}, key.WithKeys("ctrl+c")),
		Apply:       kit.NewBinding(key.Help{}, key.WithKeys("enter")),
		Clear:       kit.NewBinding(key.Help{}, key.WithKeys("esc")),
		Yes:         kit.NewBinding(key.Help{}, key.WithKeys("y", "Y")),
	}
}

// bar is the key bar, in its order (R shares r's entry).
func (k keyMap) bar() string {
	return kit.KeyBar(" ", k.Open, k.Back, k.Select, k.Replay, k.Edit, k.Archive, k.DryRun, k.Filter, k.Sort, k.Help, k.Quit)
}

// helpLines is the help screen: a line a key, two on the first line and on
// the filter's.
func (k keyMap) helpLines() []string {
	const line = "  %-15s %s"
	return []string{
		"keys",
		kit.HelpLine("  %-15s %-15s %-8s %s", k.Up, k.Open),
		kit.HelpLine(line, k.Back),
		kit.HelpLine(line, k.Select),
		kit.HelpLine(line, k.Replay),
		kit.HelpLine(line, k.ReplayGroup),
		kit.HelpLine(line, k.Edit),
		kit.HelpLine(line, k.Archive),
		kit.HelpLine(line, k.DryRun),
		kit.HelpLine("  %-15s %-14s %-2s %s", k.Filter, k.Sort),
		kit.HelpLine(line, k.Quit),
		"",
		"Every replay, archive and edit names its destinations and count and asks once (y/n).",
	}
}

// key applies a key press: to a confirmation when one is asked, to the
// filter while it is typed, else as the keyMap says.
func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if m.ask != nil {
		a := m.ask
		m.ask = nil
		if k.Yes.Matches(msg) {
			if a.yes != nil {
				return m, a.yes()
			}
			cmd := m.start(a.what, a.total, a.job)
			return m, cmd
		}
		if a.cancel != nil {
			a.cancel()
		}
		m.status = cmp.Or(a.cancelled, "cancelled; nothing was changed")
		return m, nil
	}
	if m.editing {
		switch {
		case k.Apply.Matches(msg):
			m.editing = false
			m.filter.Blur()
		case k.Clear.Matches(msg):
			m.editing = false
			m.filter.Blur()
			m.filter.SetValue("")
		default:
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			m.cursor[m.view] = 0
			return m, cmd
		}
		return m, nil
	}
	if k.ForceQuit.Matches(msg) {
		return m, tea.Quit // an action under way is stopped by the caller
	}
	if k.Quit.Matches(msg) {
		if m.busy != "" {
			m.status = m.busy + " is running: q when it has finished (ctrl+c stops it)"
			return m, nil
		}
		return m, tea.Quit
	}
	if m.help {
		m.help = false
		return m, nil
	}
	if m.busy != "" {
		return m, nil // one action at a time
	}
	switch {
	case k.Help.Matches(msg):
		m.help = true
	case k.Filter.Matches(msg):
		m.editing = true
		return m, m.filter.Focus()
	case k.Sort.Matches(msg):
		m.sort = (m.sort + 1) % sortMode(len(sortNames))
	case k.DryRun.Matches(msg):
		m.dryRun = !m.dryRun
	case k.Up.Matches(msg):
		m.cursor[m.view] = max(m.cursor[m.view]-1, 0)
	case k.Down.Matches(msg):
		m.cursor[m.view]++
		m.clamp()
	case k.Open.Matches(msg):
		m.status = "" // a result line belongs to the screen it was shown on
		switch m.view {
		case viewGroups:
			if g := m.groupAtCursor(); g != nil {
				m.cur, m.view, m.cursor[viewMessages] = g, viewMessages, 0
				m.filter.SetValue("")
			}
		case viewMessages:
			if t := m.visibleMessages(); m.cursor[viewMessages] < len(t) {
				m.curMsg, m.view, m.cursor[viewMessage] = t[m.cursor[viewMessages]], viewMessage, 0
			}
		}
	case k.Back.Matches(msg):
		m.status = ""
		switch {
		case m.filter.Value() != "":
			m.filter.SetValue("")
		case m.view > viewGroups:
			m.view--
		}
	case k.Select.Matches(msg):
		for _, x := range m.target0() {
			id := x.Header.MessageID
			if m.sel[id] {
				delete(m.sel, id)
			} else {
				m.sel[id] = true
			}
		}
		if m.view != viewMessage {
			m.cursor[m.view]++
			m.clamp()
		}
	case k.Replay.Matches(msg):
		return m.askReplay(m.target(), "the selection")
	case k.ReplayGroup.Matches(msg):
		if g := m.groupAtCursor(); g != nil {
			return m.askReplay(g.msgs, "group "+g.id)
		}
	case k.Archive.Matches(msg):
		ms := m.target()
		if len(ms) == 0 {
			return m, nil
		}
		dest, act, list, dry := m.act.ArchiveDestination(), m.act, ids(ms), m.dryRun
		m.ask = &confirm{
			prompt: fmt.Sprintf("%sArchive %s (%s) to %s (removed from %s)? (y/n)", m.dryTag(), count(len(ms)), idList(list), dest, m.act.Source()),
			what:   "archive", total: len(ms),
			job: func(ctx context.Context, p func(Outcome)) (Result, error) {
				return act.Archive(ctx, list, dry, p)
			},
		}
	case k.Edit.Matches(msg):
		var x *message.Message
		if m.view == viewMessage {
			x = m.curMsg
		} else if t := m.target0(); len(t) == 1 && m.view == viewMessages {
			x = t[0]
		}
		if x == nil {
			m.status = "open a message (enter) to edit it"
			return m, nil
		}
		ed, err := m.act.Edit(x)
		if err != nil {
			m.status = "edit: " + err.Error()
			return m, nil
		}
		return m, editCmd(x.Header.MessageID, ed)
	}
	return m, nil
}
