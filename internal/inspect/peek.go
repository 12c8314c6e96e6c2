package inspect

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// Exporter writes the messages a peek selects, one at a time, so nothing but
// the current page is kept in memory.
type Exporter interface {
	// Write renders one message.
	Write(m *message.Message) error
	// Flush writes whatever is buffered (the last page of a table).
	Flush() error
}

// BatchEnder is an Exporter that wants to know when one receive's messages
// have all been written: it shows them then (JSONLines flushes, Table
// renders its page once rows have waited TableLinger), so a slow scan, or
// one interrupted, has already printed what it read.
type BatchEnder interface {
	// EndBatch writes what should be shown now.
	EndBatch() error
}

// Peek scans the source (see Scan) and writes every selected message to out.
// Nothing is removed: every message is released when the scan ends, so a
// second peek shows the same messages with the same counts (R-28, AC-41).
// When out is a BatchEnder it is told after each receive. When ctx ends
// (an interrupt) the scan stops, out is flushed with what was read so far
// and every held message is made visible again before Peek returns.
// It returns the scan's counts and the first error of the scan or out.
func Peek(ctx context.Context, src *Source, f Filter, out Exporter) (ScanCounts, error) {
	var h hooks
	if b, ok := out.(BatchEnder); ok {
		h.batch = b.EndBatch
	}
	counts, err := scan(ctx, src, f, func(ctx context.Context, m *message.Message) (bool, error) {
		return false, out.Write(m)
	}, h)
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	return counts, err
}

// JSONLines is the Exporter of `--output json`: one message.Record per line,
// exactly the shape message.MarshalRecordJSON writes and the memory
// transport reads back (memory.seed), every header, the bag and the body
// (base64 when not UTF-8).
type JSONLines struct {
	w *bufio.Writer
}

// NewJSONLines writes records to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: bufio.NewWriter(w)} }

// Write writes m's record and a newline. The bag's texts are message
// content (a forged originalTopic may be a URL with credentials): they are
// written redacted as the peek table shows them (credentials, query values
// and secrets masked, shownRecord), the rest as stored.
func (j *JSONLines) Write(m *message.Message) error {
	line, err := message.MarshalRecordJSON(shownRecord(m))
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if _, err := j.w.Write(line); err != nil {
		return fmt.Errorf("write record of message %s: %w", m.Header.MessageID, err)
	}
	return nil
}

// shownRecord is m with its originalTopic redacted as the peek table
// shows it (redact.URL) and every other text of its bag (the rejection
// message, the pump's RejectionReason text) as Describe shows a rejection
// message (redact.Text); m itself when nothing changes.
func shownRecord(m *message.Message) *message.Message {
	var c *message.Message
	for k, v := range m.Header.Bag {
		s, ok := v.(string)
		if !ok {
			continue
		}
		shown := redact.Text(s)
		if k == message.KeyOriginalTopic {
			shown = redact.URL(s)
		}
		if shown == s {
			continue
		}
		if c == nil {
			c = m.Clone()
		}
		c.Header.Bag[k] = shown
	}
	if c == nil {
		return m
	}
	return c
}

// EndBatch flushes the lines of one receive, so they are shown at once.
func (j *JSONLines) EndBatch() error { return j.Flush() }

// Flush flushes the buffered lines.
func (j *JSONLines) Flush() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

// TablePage is how many rows one rendered table holds: a peek streams one
// table per page, so memory stays flat however many messages there are.
const TablePage = 50

// TableLinger is how long rows may wait for their page to fill: at the end
// of a receive, rows held longer than this are rendered as a (shorter)
// table, so a slow scan shows what it read within about this time.
const TableLinger = time.Second

// MessageWidth is how many characters of a rejection message a table shows.
const MessageWidth = 48

// Table is the Exporter of a peek's default output: a lipgloss table of id,
// original topic, reason, rejection message (shortened), rejected at
// (relative and absolute), handled count, message type and age. On a
// terminal (Styled) it has borders and colour; otherwise it is plain
// columns, one message per line after the header.
type Table struct {
	w      io.Writer
	styled bool
	now    func() time.Time
	rows   [][]string
	// copies counts the copies shown so far per id: a second stored copy
	// of an id shows "ID ×2" (the third ×3 ...).
	copies map[string]int
	// first is when the oldest row held was added (wall clock).
	first time.Time
	// unknownRedrive: see NotRedriveTarget.
	unknownRedrive bool
	// self and source: see RedriveFrom.
	self   string
	source func() string
}

// RedriveFrom tells t the name of the destination it shows (self) and how
// to learn where a message there without rejection metadata came from
// (source, asked at most once, and only when a row needs it; "" when
// unknown): such a message naming no topic but self shows source in the
// ORIGINAL TOPIC column, or "-", never self, which nothing says it came
// from. It returns t.
func (t *Table) RedriveFrom(self string, source func() string) *Table {
	t.self, t.source = self, sync.OnceValue(source)
	return t
}

// ReasonNoMetadata is the peek table's reason for a message without
// rejection metadata read from a destination not known to be a broker's
// redrive target (a source queue, a queue given by URL): the absence is
// all that is known, so that is what is said. The table shows it
// after "NativeRedrive: ", the reason stats groups it under and --reason
// selects it by.
const ReasonNoMetadata = "no rejection metadata"

// ReasonMovedByRedrive is the peek table's reason for a message without
// rejection metadata read from a broker's redrive target, shown
// after "NativeRedrive: " as ReasonNoMetadata is.
const ReasonMovedByRedrive = "moved by broker redrive"

// NotRedriveTarget tells t that its source is not known to be where a
// broker's own redrive moves messages: a message without rejection
// metadata is then shown as ReasonNoMetadata, not ReasonMovedByRedrive
// (a fresh message on a source queue carries no metadata either). It
// returns t.
func (t *Table) NotRedriveTarget() *Table {
	t.unknownRedrive = true
	return t
}

// NewTable renders to w; styled selects borders and colour (a terminal).
// now is the clock for relative times (nil means time.Now).
func NewTable(w io.Writer, styled bool, now func() time.Time) *Table {
	if now == nil {
		now = time.Now
	}
	return &Table{w: w, styled: styled, now: now}
}

// PeekHeaders are the column titles of the peek table.
var PeekHeaders = []string{"ID", "ORIGINAL TOPIC", "REASON", "REJECTION MESSAGE", "REJECTED AT", "COUNT", "TYPE", "AGE"}

// Write adds m's row; a full page is rendered at once.
func (t *Table) Write(m *message.Message) error {
	d := Describe(m)
	now := t.now()
	rejected := "-"
	if !d.RejectedAt.IsZero() {
		rejected = Ago(now, d.RejectedAt) + " (" + d.RejectedAt.Format(time.RFC3339) + ")"
	}
	reason := d.Reason
	switch {
	case d.NativeRedrive && d.ReplayedFrom != "":
		// A replayed copy not rejected again (e.g. on a source queue).
		reason = "replayed from " + d.ReplayedFrom
	case d.NativeRedrive && t.unknownRedrive:
		reason = ReasonNativeRedrive + ": " + ReasonNoMetadata
	case d.NativeRedrive:
		reason = ReasonNativeRedrive + ": " + ReasonMovedByRedrive
	}
	topic := shownDestination(d.OriginalTopic)
	if d.NativeRedrive && (d.OriginalTopic == "" || t.source != nil && d.OriginalTopic == t.self) {
		topic = "-"
		if t.source != nil {
			if s := t.source(); s != "" {
				topic = shownDestination(s)
			}
		}
	}
	age := "-"
	if !d.Timestamp.IsZero() {
		age = Ago(now, d.Timestamp)
	}
	if len(t.rows) == 0 {
		t.first = time.Now()
	}
	if t.copies == nil {
		t.copies = map[string]int{}
	}
	t.copies[m.Header.MessageID]++
	id := d.ID
	if n := t.copies[m.Header.MessageID]; n > 1 {
		id += " ×" + strconv.Itoa(n)
	}
	t.rows = append(t.rows, []string{id, topic, reason, d.RejectionMessage, rejected, strconv.Itoa(d.HandledCount), d.MessageType, age})
	if len(t.rows) >= TablePage {
		return t.Flush()
	}
	return nil
}

// EndBatch renders the rows held when they have waited TableLinger.
func (t *Table) EndBatch() error {
	if len(t.rows) > 0 && time.Since(t.first) >= TableLinger {
		return t.Flush()
	}
	return nil
}

// Flush renders the rows held.
func (t *Table) Flush() error {
	if len(t.rows) == 0 {
		return nil
	}
	causes := make([]string, len(t.rows))
	for i, r := range t.rows {
		causes[i] = r[3]
	}
	for i, c := range FoldShared(causes, MessageWidth) {
		t.rows[i][3] = Shorten(c, MessageWidth)
	}
	err := renderTable(t.w, t.styled, PeekHeaders, t.rows)
	t.rows = t.rows[:0]
	return err
}

var (
	headerStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")).Padding(0, 1)
	cellStyle   = lipgloss.NewStyle().Padding(0, 1)
	plainHeader = lipgloss.NewStyle().PaddingRight(2)
	plainCell   = lipgloss.NewStyle().PaddingRight(2)
)

// renderTable writes one lipgloss table. Every cell is shown through
// kit.Visible: a message's or a handler's text (an id, a topic, a
// rejection message) never reaches the terminal as a control sequence.
func renderTable(w io.Writer, styled bool, headers []string, rows [][]string) error {
	for _, r := range rows {
		for i, c := range r {
			r[i] = kit.Visible(c)
		}
	}
	tb := table.New().Headers(headers...).Rows(rows...)
	if styled {
		tb = tb.Border(lipgloss.RoundedBorder()).StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return headerStyle
			}
			return cellStyle
		})
	} else {
		tb = tb.Border(lipgloss.HiddenBorder()).BorderTop(false).BorderBottom(false).BorderLeft(false).
			BorderRight(false).BorderColumn(false).BorderHeader(false).StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return plainHeader
			}
			return plainCell
		})
	}
	s := tb.String()
	if !styled {
		// Trailing padding is noise in a pipe.
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
		s = strings.Join(lines, "\n")
	}
	if _, err := io.WriteString(w, s+"\n"); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// minFold is the shortest shared prefix a cause is folded by (cells).
const minFold = 12

// FoldShared returns each of texts with the longest prefix it shares with
// any other of them folded to "…", cut at a word's start, so what
// tells them apart comes first: "redelivery budget exhausted: ... (a)"
// and "... (b)" become "…(a)" and "…(b)". Texts that part inside a
// parenthesis keep it whole when it fits width, and a number keeps the
// word before it (foldPoint), so the part shown reads on its own. A text shares nothing with
// itself; a prefix shorter than minFold is kept, and so is a text of at
// most width runes (it fits its column whole; width 0 folds every text).
// Tables (stats, peek, the triage console) fold their causes with it
// before they cut them to a column, so the column shows what differs, not
// the prefix.
func FoldShared(texts []string, width int) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		if width > 0 && utf8.RuneCountInString(t) <= width {
			out[i] = t
			continue
		}
		n := 0
		for j, u := range texts {
			if j != i && t != u {
				n = max(n, commonPrefix(t, u))
			}
		}
		// back to the start of the word the texts part in
		if n < len(t) {
			n = foldPoint(t, n, width)
		}
		if n < minFold || n >= len(t) {
			out[i] = t
			continue
		}
		out[i] = "…" + t[n:]
	}
	return out
}

// foldPoint is where FoldShared folds t when its shared prefix is n bytes
// long: the start of the word the texts part in, moved back so that the
// part shown reads on its own: to the "(" of a parenthesis the texts part
// inside when the text from there fits width ("…(delivered 5 times,
// handled 2 times in this process)", not "…2 times in this process)"), else, when that word is
// a number, to the word before it ("…handled 2 times in this process)").
func foldPoint(t string, n, width int) int {
	n = strings.LastIndexAny(t[:n], " /:,(=") + 1
	if open := unclosedParen(t[:n]); open >= 0 && (width <= 0 || utf8.RuneCountInString(t[open:]) < width) {
		return open
	}
	if n < len(t) && t[n] >= '0' && t[n] <= '9' && n > 0 {
		if w := strings.LastIndexAny(strings.TrimRight(t[:n], " /:,(="), " /:,(=") + 1; w > 0 {
			return w
		}
	}
	return n
}

// unclosedParen is the index of the last "(" of s that no ")" after it
// closes; -1 when there is none.
func unclosedParen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Shorten cuts s to at most n runes, ending in "…" when cut; new lines
// become spaces.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n || n < 1 {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Ago renders how long before now t was, coarsely: "45s ago", "12m ago",
// "3h ago", "5d ago"; a future t is "in the future".
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}

// CopyCounts counts the stored copies of each id among ms (as a scan
// returns them, every copy once): an id with more than one was dead-lettered
// or restored more than once with the same id. The console can show it
// beside each message ("×2").
func CopyCounts(ms []*message.Message) map[string]int {
	n := make(map[string]int, len(ms))
	for _, m := range ms {
		n[m.Header.MessageID]++
	}
	return n
}
