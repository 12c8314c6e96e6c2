package triage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// keyMap declares the console's keys, once: Model.key handles them, the
// key bar shows their Bar entries (bar), the help screen their help
// (helpLines) and docs/commands/dlq.md their table (KeyTable).
type keyMap struct {
	Up, Down, PageUp, PageDown, Home, End, Open, Back, Select, Replay, ReplayGroup, Edit, EditHeaders, Archive, Purge, Archived, Note, DryRun, Filter, Sort, GroupBy, Refresh, Help, Quit kit.Binding
	// ForceQuit quits even while an action runs (its caller stops it).
	ForceQuit kit.Binding
	// Apply and Clear end the filter's input; Yes answers a confirmation
	// (any other key declines it).
	Apply, Clear, Yes kit.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Up:          kit.NewBinding(key.Help{}, key.WithKeys("up", "k"), key.WithHelp("up/k", "move up")),
		Down:        kit.NewBinding(key.Help{}, key.WithKeys("down", "j"), key.WithHelp("down/j", "move down")),
		PageUp:      kit.NewBinding(key.Help{}, key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "a page up")),
		PageDown:    kit.NewBinding(key.Help{}, key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "a page down")),
		Home:        kit.NewBinding(key.Help{}, key.WithKeys("home"), key.WithHelp("home", "the first row")),
		End:         kit.NewBinding(key.Help{}, key.WithKeys("end", "G"), key.WithHelp("end/G", "the last row")),
		Open:        kit.NewBinding(key.Help{}, key.WithKeys("enter", "right", "l"), key.WithHelp("enter", "open a group, a message (on the groups screen after /: the messages that match)")),
		Back:        kit.NewBinding(key.Help{Key: "esc"}, key.WithKeys("esc", "left", "h", "backspace"), key.WithHelp("esc", "back (the cursor stays on the group), clear the filter")),
		Select:      kit.NewBinding(key.Help{Desc: "select"}, key.WithKeys("space", " "), key.WithHelp("space", "select the message under the cursor, or all of the group; the selection belongs to the group open")),
		Replay:      kit.NewBinding(key.Help{Key: "r/R", Desc: "replay"}, key.WithKeys("r"), key.WithHelp("r", "replay the selection (or what is under the cursor); in the archived view (A): restore it into the dead-letter destination, as dlq restore")),
		ReplayGroup: kit.NewBinding(key.Help{}, key.WithKeys("R"), key.WithHelp("R", "replay the whole group; in the archived view: restore it")),
		Edit:        kit.NewBinding(key.Help{Key: "e/E", Desc: "edit"}, key.WithKeys("e"), key.WithHelp("e", "edit the message in $EDITOR, then replay the edited copy")),
		EditHeaders: kit.NewBinding(key.Help{}, key.WithKeys("E"), key.WithHelp("E", "edit the message's headers and bag (YAML) in $EDITOR, as dlq edit --headers, then replay the edited copy")),
		Archive:     kit.NewBinding(key.Help{Desc: "archive"}, key.WithKeys("a"), key.WithHelp("a", "archive the selection (or what is under the cursor)")),
		Purge:       kit.NewBinding(key.Help{Desc: "purge"}, key.WithKeys("x"), key.WithHelp("x", "purge the selection (or what is under the cursor): delete it for good, keeping no copy, as dlq purge")),
		Archived:    kit.NewBinding(key.Help{Key: "A", Desc: "archived"}, key.WithKeys("A"), key.WithHelp("A", "the archived view: browse --archive-file (r/R restore, ↺ marks a record back in the dead-letter destination); A again goes back to the dead letters")),
		Note:        kit.NewBinding(key.Help{Desc: "note"}, key.WithKeys("n"), key.WithHelp("n", "a note on the failure group (kept beside the replay journal, shown on the groups screen): enter saves, esc cancels, empty removes it")),
		DryRun:      kit.NewBinding(key.Help{Desc: "dry"}, key.WithKeys("d"), key.WithHelp("d", "dry run on/off: actions show what they would do")),
		Filter:      kit.NewBinding(key.Help{Desc: "search"}, key.WithKeys("/"), key.WithHelp("/", "search every message: ids, bodies, headers, causes")),
		Sort:        kit.NewBinding(key.Help{Desc: "sort"}, key.WithKeys("s"), key.WithHelp("s", "sort: count, newest, oldest")),
		GroupBy:     kit.NewBinding(key.Help{Desc: "group by"}, key.WithKeys("g"), key.WithHelp("g", "group by: cause (dlq stats' failure groups), reason, original topic, handler (topic and message type)")),
		Refresh:     kit.NewBinding(key.Help{Key: "^r", Desc: "read"}, key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "read the destination again now (it is also read every --refresh)")),
		Help:        kit.NewBinding(key.Help{}, key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:        kit.NewBinding(key.Help{}, key.WithKeys("q"), key.WithHelp("q", "quit (nothing is held: every read is released at once); exit 0")),
		ForceQuit:   kit.NewBinding(key.Help{}, key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now, stopping a running action: an interruption, exit 130 (as SIGINT or SIGTERM)")),
		Apply:       kit.NewBinding(key.Help{}, key.WithKeys("enter")),
		Clear:       kit.NewBinding(key.Help{}, key.WithKeys("esc")),
		Yes:         kit.NewBinding(key.Help{}, key.WithKeys("y", "Y")),
	}
}

// listed are the bindings of the help screen and the key table, in order.
func (k keyMap) listed() []kit.Binding {
	return []kit.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Open, k.Back, k.Select, k.Replay, k.ReplayGroup,
		k.Edit, k.EditHeaders, k.Archive, k.Purge, k.Archived, k.Note, k.DryRun, k.Filter, k.Sort, k.GroupBy, k.Refresh, k.Help, k.Quit, k.ForceQuit}
}

// offBar are the keys (their help keys) of listed bindings the key bar
// leaves out: the moves, and the keys another entry names (R is r's
// "r/R", E is e's "e/E"). ctrl+c is in the help only.
var offBar = map[string]bool{"up/k": true, "down/j": true, "pgup": true, "pgdn": true, "home": true, "end/G": true, "R": true, "E": true, "ctrl+c": true}

// barred are the key bar's bindings: those of the help screen (listed),
// in its order, but offBar, so a key added to the help is on the bar too.
func (k keyMap) barred() []kit.Binding {
	var out []kit.Binding
	for _, b := range k.listed() {
		if !offBar[b.Help().Key] {
			out = append(out, b)
		}
	}
	return out
}

// barLines is the key bar in lines of at most width cells, broken
// between entries, never inside one.
func (k keyMap) barLines(width int) []string {
	var lines []string
	line := ""
	for _, b := range k.barred() {
		e := kit.KeyBar(" ", b)
		switch {
		case line == "":
			line = e
		case ansi.StringWidth(line)+1+ansi.StringWidth(e) <= width:
			line += " " + e
		default:
			lines = append(lines, line)
			line = e
		}
	}
	return append(lines, line)
}

// helpLines is the help screen: a line a key.
func (k keyMap) helpLines() []string {
	out := []string{"keys"}
	for _, b := range k.listed() {
		out = append(out, kit.HelpLine("  %-8s %s", b))
	}
	return append(out, "", "Every replay, archive, purge, restore and edit names its destinations and count and asks once (y/n).")
}

// KeyTable is the console's keys as a Markdown table (key, what it does),
// one row a binding in the help screen's order: docs/commands/dlq.md
// carries it, checked by a test.
func KeyTable() string {
	var b strings.Builder
	b.WriteString("| key | does |\n|---|---|\n")
	for _, k := range defaultKeys().listed() {
		h := k.Help()
		fmt.Fprintf(&b, "| `%s` | %s |\n", h.Key, h.Desc)
	}
	return b.String()
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
			if m.busy != "" {
				// One action at a time: a question asked while another
				// action runs (an edit's editor ended meanwhile) starts
				// nothing.
				if a.cancel != nil {
					a.cancel()
				}
				m.status = m.oneAtATime()
				return m, nil
			}
			if m.loading {
				// A read holds what it reads while it runs: the action
				// starts when the read has ended, so it sees every message.
				m.pending, m.busy, m.total = a, a.what, a.total
				m.status = a.what + " starts when the read under way ends"
				return m, nil
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
	if m.noting != "" {
		return m.noteKey(msg)
	}
	if m.editing {
		keep := m.anchor()
		switch {
		case k.Apply.Matches(msg):
			m.editing = false
			m.filter.Blur()
			if m.view == viewGroups && m.filter.Value() != "" {
				m.openSearch()
				return m, nil
			}
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
		m.restore(keep)
		return m, nil
	}
	if k.ForceQuit.Matches(msg) {
		// An interruption, not a quit: the command exits 130, as a dlq
		// command interrupted by SIGINT does.
		m.interrupted = true
		if m.stop != nil {
			// An action under way stops now: it finishes the publishes
			// and removes it has begun and releases what it holds (the
			// caller waits for it).
			m.stop()
		}
		return m, tea.Quit
	}
	if k.Quit.Matches(msg) {
		if m.busy != "" {
			m.status = m.busy + " is running: q when it has finished (ctrl+c stops it)"
			return m, nil
		}
		return m, tea.Quit
	}
	if m.help {
		// up and down scroll a help taller than the screen; any other key
		// closes it
		switch {
		case k.Down.Matches(msg), k.PageDown.Matches(msg):
			m.helpTop = min(m.helpTop+1, max(len(m.keys.helpLines())-1, 0))
		case k.Up.Matches(msg), k.PageUp.Matches(msg):
			m.helpTop = max(m.helpTop-1, 0)
		default:
			m.help, m.helpTop = false, 0
		}
		return m, nil
	}
	if m.busy != "" {
		// One action at a time: keys wait, and one that would start
		// another action says why nothing happens.
		if k.Replay.Matches(msg) || k.ReplayGroup.Matches(msg) || k.Archive.Matches(msg) || k.Purge.Matches(msg) || k.Edit.Matches(msg) || k.EditHeaders.Matches(msg) {
			m.status = m.oneAtATime()
		}
		return m, nil
	}
	page := max(m.height-6, 1)
	if m.archived {
		for _, b := range []kit.Binding{k.Archive, k.Purge, k.Edit, k.EditHeaders, k.Note} {
			if b.Matches(msg) {
				m.status = readOnly
				return m, nil
			}
		}
		// r and R restore there: the archive's records go back into the
		// dead-letter destination (dlq restore), never to a topic.
		switch {
		case k.Replay.Matches(msg):
			return m.askRestore(m.target(), m.targetWhat())
		case k.ReplayGroup.Matches(msg):
			if g := m.groupAtCursor(); g != nil && g.search == "" {
				return m.askRestore(g.msgs, "group "+g.id)
			}
			m.status = "R restores a failure group: open one from the groups screen"
			return m, nil
		}
	}
	switch {
	case k.Archived.Matches(msg):
		return m.toggleArchived()
	case k.Note.Matches(msg):
		return m.startNote()
	case k.Help.Matches(msg):
		m.help = true
	case k.Refresh.Matches(msg):
		return m.reload()
	case k.Filter.Matches(msg):
		m.editing = true
		return m, m.filter.Focus()
	case k.GroupBy.Matches(msg):
		m.groupBy = (m.groupBy + 1) % groupBy(len(groupByNames))
		m.leaveView()
		m.setMessages(m.all)
		m.status = "grouped by " + groupByNames[m.groupBy]
	case k.Sort.Matches(msg):
		keep := m.anchor()
		m.sort = (m.sort + 1) % sortMode(len(sortNames))
		m.restore(keep)
	case k.DryRun.Matches(msg):
		m.dryRun = !m.dryRun
	case k.Up.Matches(msg):
		m.move(-1)
	case k.Down.Matches(msg):
		m.move(1)
	case k.PageUp.Matches(msg):
		m.move(-page)
	case k.PageDown.Matches(msg):
		m.move(page)
	case k.Home.Matches(msg):
		m.move(-1 << 30)
	case k.End.Matches(msg):
		m.move(1 << 30)
	case k.Open.Matches(msg):
		m.status = "" // a result line belongs to the screen it was shown on
		switch m.view {
		case viewGroups:
			if g := m.groupAtCursor(); g != nil {
				m.enterGroup(g)
			}
		case viewMessages:
			if t := m.visibleMessages(); m.cursor[viewMessages] < len(t) {
				m.curMsg, m.view, m.cursor[viewMessage] = t[m.cursor[viewMessages]], viewMessage, 0
			}
		}
	case k.Back.Matches(msg):
		m.status = ""
		keep := m.anchor()
		switch {
		case m.filter.Value() != "":
			m.filter.SetValue("")
		case m.view == viewMessage:
			m.view = viewMessages
		case m.view == viewMessages:
			// The selection belongs to the group: leaving it clears it.
			m.view, m.sel = viewGroups, map[string]bool{}
			switch {
			case m.cur != nil && m.cur.search == "":
				keep.group = m.cur.id
			case keep.msg != "":
				// from a search's results: to the group of the message
				// the cursor was on
				if i := slices.IndexFunc(m.all, func(x *message.Message) bool { return x.Header.MessageID == keep.msg }); i >= 0 {
					_, keep.group = keyOf(m.groupBy, m.all[i])
				}
			}
			m.cur = nil
		}
		m.restore(keep)
	case k.Select.Matches(msg):
		// space toggles what is under the cursor; it never moves it.
		for _, x := range m.target0() {
			id := x.Header.MessageID
			if m.sel[id] {
				delete(m.sel, id)
			} else {
				m.sel[id] = true
			}
		}
	case k.Replay.Matches(msg):
		return m.askReplay(m.target(), m.targetWhat())
	case k.ReplayGroup.Matches(msg):
		if g := m.groupAtCursor(); g != nil {
			if g.search != "" {
				m.status = "R replays a failure group: open one from the groups screen"
				return m, nil
			}
			return m.askReplay(g.msgs, "group "+g.id)
		}
	case k.Archive.Matches(msg):
		ms := m.target()
		if len(ms) == 0 {
			return m, nil
		}
		dest, act, list, dry := m.act.ArchiveDestination(), m.act, ids(ms), m.dryRun
		of := ""
		if g := m.groupAtCursor(); g != nil {
			of = "of " + g.name() + ": "
		}
		m.ask = &confirm{
			prompt: fmt.Sprintf("%sArchive %s (%s%s) to %s (removed from %s)? (y/n)", m.dryTag(), count(len(ms)), of, idList(list), dest, m.act.Source()),
			what:   "archive", total: len(ms),
			job: func(ctx context.Context, p func(Outcome)) (Result, error) {
				return act.Archive(ctx, list, dry, p)
			},
		}
	case k.Purge.Matches(msg):
		return m.askPurge()
	case k.Edit.Matches(msg):
		return m.startEdit(false)
	case k.EditHeaders.Matches(msg):
		return m.startEdit(true)
	}
	return m, nil
}

// oneAtATime is the status line of an action refused because another one
// runs.
func (m Model) oneAtATime() string {
	return m.busy + " is running: one action at a time; nothing else was started (wait for it to finish; ctrl+c stops it)"
}

// startEdit edits the message open (or under the cursor in a group): its
// body, or its headers and bag (headers), in $EDITOR.
func (m Model) startEdit(headers bool) (tea.Model, tea.Cmd) {
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
	var (
		ed  Editing
		err error
	)
	if headers {
		h, ok := m.act.(HeaderEditor)
		if !ok {
			m.status = "headers cannot be edited here"
			return m, nil
		}
		ed, err = h.EditHeaders(m.ctx, x)
	} else {
		ed, err = m.act.Edit(m.ctx, x)
	}
	if err != nil {
		m.status = "edit: " + err.Error()
		return m, nil
	}
	return m, editCmd(x.Header.MessageID, ed)
}
