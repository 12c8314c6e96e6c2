package inspect

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Group is one line of Stats: a failure group, the messages that share an
// original topic, a message type, a rejection reason and a normalised
// rejection message (GroupKey), with its stable id.
type Group struct {
	// ID is GroupKey.ID: what --group-id takes.
	ID string `json:"id"`
	GroupKey
	Count  int       `json:"count"`
	Oldest time.Time `json:"oldest"`
	Newest time.Time `json:"newest"`
	// Note is the operator's note on the group (GroupNotes, written in
	// dlq triage with n), absent when there is none.
	Note string `json:"note,omitempty"`
}

// Stats summarises a destination: totals, oldest and newest rejection, and
// counts by reason, by original topic and by group. Its JSON form is what
// `brighter dlq stats --output json` prints.
type Stats struct {
	Source string `json:"source"`
	// Total is how many messages the filter selected (and are counted here).
	Total int `json:"total"`
	// Read is how many distinct messages the scan read, selected or not.
	Read     int            `json:"read"`
	Oldest   *time.Time     `json:"oldest"`
	Newest   *time.Time     `json:"newest"`
	ByReason map[string]int `json:"byReason"`
	ByTopic  map[string]int `json:"byTopic"`
	Groups   []Group        `json:"groups"`
}

// Collect scans the source (nothing is removed) and summarises the messages
// the filter selects. Memory grows with the number of groups, not of
// messages. Groups are sorted by count, largest first, then by key.
func Collect(ctx context.Context, src *Source, f Filter) (*Stats, ScanCounts, error) {
	st := &Stats{Source: src.Name, ByReason: map[string]int{}, ByTopic: map[string]int{}}
	groups := map[GroupKey]*Group{}
	counts, err := Scan(ctx, src, f, func(ctx context.Context, m *message.Message) (bool, error) {
		st.add(groups, m)
		return false, nil
	})
	st.Read = counts.Scanned
	st.sortGroups(groups)
	return st, counts, err
}

// CollectMessages summarises the messages of ms (an archive, ReadArchive)
// that the filter selects, at most its limit, as Collect does a
// destination; Source is "".
func CollectMessages(ms []*message.Message, f Filter) *Stats {
	st := &Stats{ByReason: map[string]int{}, ByTopic: map[string]int{}}
	groups := map[GroupKey]*Group{}
	for _, m := range ms {
		st.Read++
		if f.Match(m) && (f.Limit == 0 || st.Total < f.Limit) {
			st.add(groups, m)
		}
	}
	st.sortGroups(groups)
	return st
}

// sortGroups sets st.Groups from groups: by count, largest first, then by
// key.
func (st *Stats) sortGroups(groups map[GroupKey]*Group) {
	st.Groups = make([]Group, 0, len(groups))
	for _, g := range groups {
		st.Groups = append(st.Groups, *g)
	}
	sort.Slice(st.Groups, func(i, j int) bool {
		a, b := st.Groups[i], st.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Reason != b.Reason {
			return a.Reason < b.Reason
		}
		if a.OriginalTopic != b.OriginalTopic {
			return a.OriginalTopic < b.OriginalTopic
		}
		if a.MessageType != b.MessageType {
			return a.MessageType < b.MessageType
		}
		return a.Message < b.Message
	})
}

func (st *Stats) add(groups map[GroupKey]*Group, m *message.Message) {
	d := Describe(m)
	at := d.RejectedAt
	if at.IsZero() {
		at = d.Timestamp
	}
	st.Total++
	st.ByReason[d.Reason]++
	// A forged originalTopic may carry credentials: the key passes the URL rule.
	st.ByTopic[redact.URL(d.OriginalTopic)]++
	if !at.IsZero() {
		if st.Oldest == nil || at.Before(*st.Oldest) {
			t := at
			st.Oldest = &t
		}
		if st.Newest == nil || at.After(*st.Newest) {
			t := at
			st.Newest = &t
		}
	}
	k := GroupKey{OriginalTopic: d.OriginalTopic, MessageType: d.MessageType, Reason: d.Reason, Message: Normalise(d.RejectionMessage)}
	g := groups[k]
	if g == nil {
		g = &Group{ID: k.ID(), GroupKey: k}
		groups[k] = g
	}
	g.Count++
	if !at.IsZero() {
		if g.Oldest.IsZero() || at.Before(g.Oldest) {
			g.Oldest = at
		}
		if at.After(g.Newest) {
			g.Newest = at
		}
	}
}

// WriteJSON writes the stats as one indented JSON object (export.WriteJSON).
// Each group's originalTopic passes the URL rule (a forged one may carry
// credentials); its id is the one computed from the topic as stored.
func (st *Stats) WriteJSON(w io.Writer) error {
	shown := *st
	shown.Groups = make([]Group, len(st.Groups))
	for i, g := range st.Groups {
		g.OriginalTopic = redact.URL(g.OriginalTopic)
		shown.Groups[i] = g
	}
	if err := export.WriteJSON(w, &shown); err != nil {
		return fmt.Errorf("write stats: %w", err)
	}
	return nil
}

// SetNotes gives each group of st its note in notes (GroupNotes.Read of
// the destination: by group id); a group without one keeps none.
func (st *Stats) SetNotes(notes map[string]GroupNote) {
	for i := range st.Groups {
		st.Groups[i].Note = notes[st.Groups[i].ID].Text
	}
}

// StatsHeaders are the column titles of the stats table; NoteHeader is
// the last one's when a group has a note (SetNotes).
var StatsHeaders = []string{"GROUP", "COUNT", "REASON", "ORIGINAL TOPIC", "TYPE", "REJECTION MESSAGE (normalised)", "OLDEST", "NEWEST"}

// NoteHeader is the title of the stats table's note column, shown when a
// group has a note.
const NoteHeader = "NOTE"

// WriteTable writes a summary line and a table of the groups; styled as for
// NewTable.
func (st *Stats) WriteTable(w io.Writer, styled bool, now time.Time) error {
	span := ""
	if st.Oldest != nil && st.Newest != nil {
		span = fmt.Sprintf(", oldest %s, newest %s", Ago(now, *st.Oldest), Ago(now, *st.Newest))
	}
	noun := "messages"
	if st.Total == 1 {
		noun = "message"
	}
	if _, err := fmt.Fprintf(w, "%s: %d %s%s\n", st.Source, st.Total, noun, span); err != nil {
		return fmt.Errorf("write stats: %w", err)
	}
	if len(st.Groups) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(st.Groups))
	causes := make([]string, len(st.Groups))
	for i, g := range st.Groups {
		causes[i] = g.Message
	}
	causes = FoldShared(causes, MessageWidth)
	headers := StatsHeaders
	if slices.ContainsFunc(st.Groups, func(g Group) bool { return g.Note != "" }) {
		headers = append(headers[:len(headers):len(headers)], NoteHeader)
	}
	for i, g := range st.Groups {
		row := []string{g.ID, strconv.Itoa(g.Count), g.Reason, shownDestination(g.OriginalTopic), g.MessageType, Shorten(causes[i], MessageWidth), ago(now, g.Oldest), ago(now, g.Newest)}
		if len(headers) > len(StatsHeaders) {
			// on one line, the table's cells being one line each
			row = append(row, Shorten(strings.Join(strings.Fields(g.Note), " "), MessageWidth))
		}
		rows = append(rows, row)
	}
	return renderTable(w, styled, headers, rows)
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return Ago(now, t)
}
