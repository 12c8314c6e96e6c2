package triage

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Notes on failure groups: n types one for the group under the cursor (or
// open), kept by the Actions (NoteKeeper) beside the replay journal and
// shown on the groups screen (✎ on the row, the whole note under the
// table for the group under the cursor) and in the group's title.

// startNote starts typing the note of the group under the cursor.
func (m Model) startNote() (Model, tea.Cmd) {
	if _, ok := m.act.(NoteKeeper); !ok {
		m.status = "notes are not kept here"
		return m, nil
	}
	g := m.groupAtCursor()
	if g == nil || g.search != "" {
		m.status = "n writes a note on a failure group: put the cursor on one, or open one"
		return m, nil
	}
	m.noting = g.id
	m.noteInput.SetValue(m.notes[g.id].Text)
	m.noteInput.CursorEnd()
	return m, m.noteInput.Focus()
}

// noteKey handles a key while a note is typed: enter saves, esc cancels.
func (m Model) noteKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	switch {
	case k.Apply.Matches(msg):
		id, text := m.noting, strings.TrimSpace(m.noteInput.Value())
		m.noting = ""
		m.noteInput.Blur()
		if err := m.act.(NoteKeeper).SetNote(id, text); err != nil {
			m.status = "note not saved: " + err.Error()
			return m, nil
		}
		if n, err := m.act.(NoteKeeper).Notes(); err == nil {
			m.notes = n
		}
		m.status = "note on group " + id + " saved"
		if text == "" {
			m.status = "note on group " + id + " removed"
		}
		return m, nil
	case k.Clear.Matches(msg):
		m.noting = ""
		m.noteInput.Blur()
		m.status = "note unchanged"
		return m, nil
	}
	var cmd tea.Cmd
	m.noteInput, cmd = m.noteInput.Update(msg)
	return m, cmd
}

// noteOf is group id's note on one line ("" for none).
func (m Model) noteOf(id string) string {
	return strings.Join(strings.Fields(m.notes[id].Text), " ")
}
