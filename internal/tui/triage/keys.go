package triage

import (
	"cmp"
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
)

func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if m.ask != nil {
		a := m.ask
		m.ask = nil
		if k == "y" || k == "Y" {
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
		switch k {
		case "enter":
			m.editing = false
			m.filter.Blur()
		case "esc":
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
	if k == "ctrl+c" {
		return m, tea.Quit // an action under way is stopped by the caller
	}
	if k == "q" {
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
	switch k {
	case "?":
		m.help = true
	case "/":
		m.editing = true
		return m, m.filter.Focus()
	case "s":
		m.sort = (m.sort + 1) % sortMode(len(sortNames))
	case "d":
		m.dryRun = !m.dryRun
	case "up", "k":
		m.cursor[m.view] = max(m.cursor[m.view]-1, 0)
	case "down", "j":
		m.cursor[m.view]++
		m.clamp()
	case "enter", "right", "l":
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
	case "esc", "left", "h", "backspace":
		m.status = ""
		switch {
		case m.filter.Value() != "":
			m.filter.SetValue("")
		case m.view > viewGroups:
			m.view--
		}
	case "space", " ":
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
	case "r":
		return m.askReplay(m.target(), "the selection")
	case "R":
		if g := m.groupAtCursor(); g != nil {
			return m.askReplay(g.msgs, "group "+g.id)
		}
	case "a":
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
	case "e":
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
