package triage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// The console's state: the destination's messages in failure groups, and
// what the filter, the sort, the cursor and the selection make of them.
// The views read it; Update changes it.

// group is one failure group as the console shows it.
type group struct {
	id             string
	key            inspect.GroupKey
	msgs           []*message.Message
	oldest, newest time.Time
	// search is the query of a search's results ("" for a failure group).
	search string
}

// name is how prompts and titles call g.
func (g *group) name() string {
	if g.search != "" {
		return "the search /" + g.search
	}
	return "group " + g.id
}

// setMessages groups ms, keeping the view where it was when it can: the
// cursor stays on the group and the message it was on (by id), else on
// the row it was on, clamped so a row is always under it.
func (m *Model) setMessages(ms []*message.Message) {
	keep := m.anchor()
	defer m.restore(keep)
	m.all = ms
	m.copies = inspect.CopyCounts(ms)
	byID := map[string]*group{}
	m.groups = m.groups[:0]
	for _, msg := range ms {
		k, id := keyOf(m.groupBy, msg)
		g := byID[id]
		if g == nil {
			g = &group{id: id, key: k}
			byID[id] = g
			m.groups = append(m.groups, g)
		}
		g.msgs = append(g.msgs, msg)
		at := rejectedAt(msg)
		if g.oldest.IsZero() || at.Before(g.oldest) {
			g.oldest = at
		}
		if at.After(g.newest) {
			g.newest = at
		}
	}
	// A read returns the messages in the broker's order, which changes from
	// read to read: a group's messages are kept newest first, then by id,
	// so rows do not move under the cursor between refreshes.
	for _, g := range m.groups {
		sortNewestFirst(g.msgs)
	}
	if m.cur != nil {
		if m.cur.search != "" {
			m.cur = m.search(m.cur.search)
		} else {
			m.cur = byID[m.cur.id]
		}
		if m.cur == nil || len(m.cur.msgs) == 0 {
			m.cur, m.view = nil, viewGroups
		}
	}
	if m.view == viewMessage && m.curMsg != nil {
		found := false
		if m.cur != nil {
			for _, x := range m.cur.msgs {
				if x.Header.MessageID == m.curMsg.Header.MessageID {
					m.curMsg, found = x, true
				}
			}
		}
		if !found {
			m.view = viewMessages
			if m.cur == nil {
				m.view = viewGroups
			}
		}
	}
}

func sortNewestFirst(ms []*message.Message) {
	slices.SortStableFunc(ms, func(a, b *message.Message) int {
		return cmp.Or(rejectedAt(b).Compare(rejectedAt(a)), strings.Compare(a.Header.MessageID, b.Header.MessageID))
	})
}

// place is where the cursors are, by id: the group under the groups
// screen's cursor and the message under the messages screen's.
type place struct{ group, msg string }

// anchor returns where the cursors are, by id.
func (m Model) anchor() place {
	var p place
	gs := m.visibleGroups()
	if c := m.cursor[viewGroups]; c < len(gs) {
		p.group = gs[c].id
	}
	switch {
	case m.view == viewMessage && m.curMsg != nil:
		p.msg = m.curMsg.Header.MessageID
	case m.view == viewMessages:
		if t := m.visibleMessages(); m.cursor[viewMessages] < len(t) {
			p.msg = t[m.cursor[viewMessages]].Header.MessageID
		}
	}
	return p
}

// restore puts the cursors back on the group and the message of p where
// they are still listed (a re-read, a sort, a filter, esc); else each
// stays on its row, clamped so a row is always under it.
func (m *Model) restore(p place) {
	if p.group != "" {
		if i := slices.IndexFunc(m.visibleGroups(), func(g *group) bool { return g.id == p.group }); i >= 0 {
			m.cursor[viewGroups] = i
		}
	}
	if p.msg != "" {
		if i := slices.IndexFunc(m.visibleMessages(), func(x *message.Message) bool { return x.Header.MessageID == p.msg }); i >= 0 {
			m.cursor[viewMessages] = i
		}
	}
	for _, v := range []view{viewGroups, viewMessages} {
		saved := m.view
		m.view = v
		m.clamp()
		m.view = saved
	}
}

// move moves the cursor of the screen shown by n rows, clamped.
func (m *Model) move(n int) {
	c := m.cursor[m.view]
	switch {
	case n < 0 && c < -n:
		c = 0
	case n > 0 && c > 1<<29:
	default:
		c += n
	}
	m.cursor[m.view] = c
	m.clamp()
}

// scope keeps the selection to its group: when the group open (or, on the
// groups screen, under the cursor) is another than the one the selection
// was made in, the selection is cleared, so r and a never act on messages
// of a group the operator has left.
func (m *Model) scope() {
	id := ""
	if g := m.groupAtCursor(); g != nil {
		id = g.id
	}
	if id != m.selGroup {
		m.sel, m.selGroup = map[string]bool{}, id
	}
}

// enterGroup opens g's messages.
func (m *Model) enterGroup(g *group) {
	m.cur, m.view, m.cursor[viewMessages] = g, viewMessages, 0
	m.filter.SetValue("")
}

// search is the messages of every group that match q (haystack), newest
// first, as a group of their own; nil when none does.
func (m Model) search(q string) *group {
	q = strings.ToLower(strings.TrimSpace(q))
	g := &group{id: "search:" + q, search: q}
	for _, x := range m.all {
		if strings.Contains(haystack(x), q) {
			g.msgs = append(g.msgs, x)
		}
	}
	if len(g.msgs) == 0 {
		return nil
	}
	sortNewestFirst(g.msgs)
	return g
}

// openSearch shows the messages of every group that match the filter.
func (m *Model) openSearch() {
	q := strings.TrimSpace(m.filter.Value())
	g := m.search(q)
	if g == nil {
		m.status = fmt.Sprintf("no dead-lettered message matches /%s (ids, bodies, headers and causes of %s searched)", q, count(len(m.all)))
		return
	}
	m.enterGroup(g)
}

// haystack is what a search looks in: a message's id, every header
// (the bag's keys and values among them), its cause and its body, in
// lower case.
func haystack(x *message.Message) string {
	var b strings.Builder
	for _, f := range headerFields(x) {
		b.WriteString(f[0] + " " + f[1] + "\n")
	}
	b.WriteString(inspect.Describe(x).RejectionMessage + "\n")
	b.Write(x.Body)
	return strings.ToLower(b.String())
}

func rejectedAt(msg *message.Message) time.Time {
	d := inspect.Describe(msg)
	if !d.RejectedAt.IsZero() {
		return d.RejectedAt
	}
	return d.Timestamp
}

// visibleGroups are the groups the filter keeps, in the sort order.
func (m Model) visibleGroups() []*group {
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	var out []*group
	for _, g := range m.groups {
		if q == "" || strings.Contains(strings.ToLower(strings.Join([]string{g.id, g.key.OriginalTopic, g.key.MessageType, g.key.Reason, g.key.Message}, " ")), q) || g.matches(q) > 0 {
			out = append(out, g)
		}
	}
	slices.SortStableFunc(out, func(a, b *group) int {
		switch m.sort {
		case sortNewest:
			return cmp.Or(b.newest.Compare(a.newest), strings.Compare(a.id, b.id))
		case sortOldest:
			return cmp.Or(a.oldest.Compare(b.oldest), strings.Compare(a.id, b.id))
		}
		return cmp.Or(cmp.Compare(len(b.msgs), len(a.msgs)), strings.Compare(a.id, b.id))
	})
	return out
}

// visibleMessages are the current group's messages the filter keeps.
func (m Model) visibleMessages() []*message.Message {
	if m.cur == nil {
		return nil
	}
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	var out []*message.Message
	for _, x := range m.cur.msgs {
		if q == "" || strings.Contains(haystack(x), q) {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b *message.Message) int {
		byID := strings.Compare(a.Header.MessageID, b.Header.MessageID)
		if m.sort == sortOldest {
			return cmp.Or(rejectedAt(a).Compare(rejectedAt(b)), byID)
		}
		return cmp.Or(rejectedAt(b).Compare(rejectedAt(a)), byID)
	})
	return out
}

// matches counts g's messages that match q (lower case).
func (g *group) matches(q string) int {
	n := 0
	for _, x := range g.msgs {
		if strings.Contains(haystack(x), q) {
			n++
		}
	}
	return n
}

func (m Model) groupAtCursor() *group {
	if m.view != viewGroups {
		return m.cur
	}
	gs := m.visibleGroups()
	if c := m.cursor[viewGroups]; c < len(gs) {
		return gs[c]
	}
	return nil
}

// target is what r, a and e act on: the selection, else the message under
// the cursor (or shown); group is the group under the cursor or open.
func (m Model) target() []*message.Message {
	if len(m.sel) > 0 {
		var out []*message.Message
		for _, g := range m.groups {
			for _, x := range g.msgs {
				if m.sel[x.Header.MessageID] {
					out = append(out, x)
				}
			}
		}
		return out
	}
	switch m.view {
	case viewMessage:
		return m.storedCopies(m.curMsg)
	case viewMessages:
		ms := m.visibleMessages()
		if c := m.cursor[viewMessages]; c < len(ms) {
			return m.storedCopies(ms[c])
		}
	case viewGroups:
		if g := m.groupAtCursor(); g != nil {
			return g.msgs
		}
	}
	return nil
}

// storedCopies is every stored copy of x's id the console read (x alone
// when it read no other): an action on a message under the cursor acts on
// every copy of its id, as on a selection (which is by id), so that an
// archive or a replay leaves no copy behind.
func (m Model) storedCopies(x *message.Message) []*message.Message {
	if m.copies[x.Header.MessageID] <= 1 {
		return []*message.Message{x}
	}
	var out []*message.Message
	for _, y := range m.all {
		if y.Header.MessageID == x.Header.MessageID {
			out = append(out, y)
		}
	}
	if len(out) == 0 {
		return []*message.Message{x}
	}
	return out
}

// target0 is the message (or group's messages) under the cursor, ignoring
// the selection: what space toggles.
func (m Model) target0() []*message.Message {
	sel := m.sel
	m.sel = nil
	defer func() { m.sel = sel }()
	return m.target()
}

func (m *Model) clamp() {
	n := 0
	switch m.view {
	case viewGroups:
		n = len(m.visibleGroups())
	case viewMessages:
		n = len(m.visibleMessages())
	default:
		n = 1 << 20
	}
	m.cursor[m.view] = kit.Clamp(m.cursor[m.view], n)
}

func (m Model) allSelected(ms []*message.Message) bool {
	for _, x := range ms {
		if !m.sel[x.Header.MessageID] {
			return false
		}
	}
	return len(ms) > 0
}

// idCell is a message's id as the lists show it: with the count of its
// stored copies when there is more than one ("o1 ×2").
func (m Model) idCell(id string) string {
	if n := m.copies[id]; n > 1 {
		return fmt.Sprintf("%s ×%d", kit.Visible(id), n) + m.restoredMark(id)
	}
	return kit.Visible(id) + m.restoredMark(id)
}

func ids(ms []*message.Message) []string {
	out := make([]string, len(ms))
	for i, x := range ms {
		out[i] = x.Header.MessageID
	}
	return out
}
