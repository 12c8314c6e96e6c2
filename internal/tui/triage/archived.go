package triage

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// The archived view: A shows the records of the archive file (what a, and
// dlq archive, wrote there) in the same screens, read-only; A again goes
// back to the dead letters and reads them afresh.

// toggleArchived opens the archived view, or leaves it.
func (m Model) toggleArchived() (Model, tea.Cmd) {
	if m.archived {
		m.archived = false
		m.leaveView()
		m.setMessages(m.live)
		m.live = nil
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
	m.live, m.archived = m.all, true
	m.leaveView()
	m.setMessages(msg.ms)
	m.status = fmt.Sprintf("the archived view: %s in %s, read-only (A: back to the dead letters)", count(len(msg.ms)), m.act.ArchiveDestination())
	return m, nil
}

// leaveView goes to the groups screen with nothing selected or filtered.
func (m *Model) leaveView() {
	m.view, m.cur, m.curMsg = viewGroups, nil, nil
	m.sel, m.selGroup = map[string]bool{}, ""
	m.cursor = [3]int{}
	m.filter.SetValue("")
}

// readOnly is the status of an action key in the archived view.
const readOnly = "the archived view is read-only: A goes back to the dead letters (dlq restore puts archived messages back)"
