package triage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/message"
)

// The archived view: A shows the records of the archive file (what a, and
// dlq archive, wrote there) in the same screens; A again goes back to the
// dead letters and reads them afresh. The archive's records cannot be
// replayed, archived, edited or noted there; r (the selection, or what is
// under the cursor) and R (the group) restore them into the dead-letter
// destination as dlq restore does, when the Actions are a Restorer. The
// file is never changed (as dlq restore never changes it): a record whose
// id the dead-letter destination holds again is marked ↺ (restored).

// toggleArchived opens the archived view, or leaves it.
func (m Model) toggleArchived() (Model, tea.Cmd) {
	if m.archived {
		m.archived = false
		m.leaveView()
		m.setMessages(m.live)
		m.setLive(nil)
		m.status = "back to the dead letters of " + m.act.Source()
		return m.reload()
	}
	r, ok := m.act.(ArchiveReader)
	if !ok {
		m.status = "this console has no archive file to show"
		return m, nil
	}
	return m, func() tea.Msg {
		ms, err := r.Archived()
		return archivedMsg{ms: ms, err: err}
	}
}

// openArchived shows the archive's records read by toggleArchived.
func (m Model) openArchived(msg archivedMsg) (Model, tea.Cmd) {
	if msg.err != nil {
		m.status = "archived view: " + msg.err.Error()
		return m, nil
	}
	m.archived = true
	m.setLive(m.all)
	m.leaveView()
	m.setMessages(msg.ms)
	how := "read-only"
	if r, ok := m.act.(Restorer); ok {
		how = "r/R restore into " + r.RestoreDestination() + ", ↺ marks a record back there"
	}
	m.status = fmt.Sprintf("the archived view: %s in %s, %s (A: back to the dead letters)", count(len(msg.ms)), m.act.ArchiveDestination(), how)
	return m, nil
}

// setLive keeps ms, the destination's last read, while the archived view
// shows the archive, and the ids it holds (the ↺ mark).
func (m *Model) setLive(ms []*message.Message) {
	m.live = ms
	m.inDLQ = make(map[string]bool, len(ms))
	for _, x := range ms {
		m.inDLQ[x.Header.MessageID] = true
	}
}

// restoredMark is the archived view's mark of a record whose id the
// dead-letter destination holds (after a restore); "" for none.
func (m Model) restoredMark(id string) string {
	if m.archived && m.inDLQ[id] {
		return " ↺"
	}
	return ""
}

// askRestore starts a restore of ms (the archived view's r or R): the
// Restorer checks the destination for their ids first (restoreCheckMsg),
// then the console asks.
func (m Model) askRestore(ms []*message.Message, what string) (Model, tea.Cmd) {
	r, ok := m.act.(Restorer)
	if !ok {
		m.status = readOnly
		return m, nil
	}
	if len(ms) == 0 {
		return m, nil
	}
	list, ctx := ids(ms), m.ctx
	m.status = "checking " + r.RestoreDestination() + " for the ids already there…"
	return m, func() tea.Msg {
		there, err := r.AlreadyThere(ctx, list)
		return restoreCheckMsg{ids: list, what: what, there: there, err: err}
	}
}

// confirmRestore asks for the restore askRestore checked: the count, the
// ids, the destination and, as dlq restore refuses them without --yes,
// the ids it already holds (y restores those too: another copy each).
func (m Model) confirmRestore(msg restoreCheckMsg) (Model, tea.Cmd) {
	r := m.act.(Restorer)
	dest := r.RestoreDestination()
	switch {
	case msg.err != nil:
		m.status = "restore: check " + dest + " for ids already there: " + msg.err.Error() + "; nothing was restored"
		return m, nil
	case !m.archived || m.ask != nil || m.busy != "":
		m.status = "restore not asked: the console moved on while " + dest + " was checked; nothing was restored"
		return m, nil
	}
	dup := ""
	if len(msg.there) > 0 {
		var there []string
		for _, id := range slices.Sorted(maps.Keys(msg.there)) {
			there = append(there, fmt.Sprintf("%s (%s)", id, copiesOf(msg.there[id])))
		}
		dup = fmt.Sprintf(" %s already holds %d of them: %s; y restores them too, another copy each.", dest, len(there), idList(there))
	}
	act, list, dry, yes := r, msg.ids, m.dryRun, len(msg.there) > 0
	m.ask = &confirm{
		prompt: fmt.Sprintf("%sRestore %s (%s: %s) from %s into the dead-letter destination %s?%s (y/n)", m.dryTag(), count(len(list)), msg.what, idList(list), m.act.ArchiveDestination(), dest, dup),
		what:   "restore", total: len(list),
		job: func(ctx context.Context, p func(Outcome)) (Result, error) {
			return act.Restore(ctx, list, yes, dry, p)
		},
	}
	return m, nil
}

func copiesOf(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}

// targetWhat names what r replays (or, in the archived view, restores),
// for the prompt.
func (m Model) targetWhat() string {
	what := "the message under the cursor"
	g := m.groupAtCursor()
	switch {
	case len(m.sel) > 0:
		what = "the selection"
	case m.view == viewGroups && g != nil:
		return g.name() // "group 56ba1a103ad9", not "the group of group ..."
	case m.view == viewGroups:
		what = "the group"
	}
	if g != nil {
		what += " of " + g.name()
	}
	return strings.TrimSpace(what)
}

// leaveView goes to the groups screen with nothing selected or filtered.
func (m *Model) leaveView() {
	m.view, m.cur, m.curMsg = viewGroups, nil, nil
	m.sel, m.selGroup = map[string]bool{}, ""
	m.cursor = [3]int{}
	m.filter.SetValue("")
}

// readOnly is the status of an action key the archived view does not take.
const readOnly = "the archived view is read-only but for r/R (restore into the dead-letter destination): A goes back to the dead letters"
