// Package triage is the model of `brighter dlq triage` (issue 30): an
// interactive console over one dead-letter destination. It shows the
// failure groups (count, oldest, newest, reason, a sample rejection
// message), the messages of a group, and one message (headers, bag,
// rejection metadata, body pretty-printed by content type), and lets the
// operator select messages, replay the selection or a group, edit one
// message and replay it, archive, toggle a dry run, filter, sort and quit.
// Every destructive action shows its destinations and count and asks once
// (y/n); progress is shown while it runs.
//
// The model never touches a broker: what it does is injected as Actions
// (cmd/brighter wires internal/inspect into them), so it is tested with
// plain Update calls.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/..., cmd/...
package triage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// Outcome is one message's result of an action, for the progress line.
type Outcome struct {
	// ID is the message id.
	ID string
	// Err is why it failed; nil when done.
	Err error
}

// Result is the end of an action.
type Result struct {
	// Done and Failed count the messages the action did and could not do.
	Done, Failed int
	// Summary is the line to show ("replayed 3, skipped 0, failed 0").
	Summary string
}

// Editing is one message's edit in progress: the editor command the
// console runs (suspending itself, tea.ExecProcess), then Finish replays
// the edited copy (`dlq edit`'s code path).
type Editing interface {
	// Command is the editor process to run on the terminal.
	Command() *exec.Cmd
	// Destination is where the edited copy would go.
	Destination() string
	// Check validates the edit as it stands (the body for its content
	// type, as dlq edit's inspect.ValidateBody); it sends nothing. The
	// console calls it as soon as the editor returns, so an invalid edit
	// is offered back to the editor, never for replay.
	Check() error
	// Finish validates the edit and replays the edited copy (nothing is
	// sent with dryRun); an invalid body is an error and nothing is sent.
	Finish(ctx context.Context, dryRun bool) (Result, error)
	// Close removes the edit's files.
	Close()
}

// Actions are what the console does to the dead-letter destination. Each
// reads the destination afresh and releases what it read before it
// returns: nothing is held between actions.
type Actions interface {
	// Source names the destination (a URL) for the header.
	Source() string
	// Load reads every message of the destination (as dlq peek: held while
	// read, released at once).
	Load(ctx context.Context) ([]*message.Message, error)
	// ReplayDestinations are where replaying ms would publish, distinct,
	// for the confirmation (a refused originalTopic is marked so).
	ReplayDestinations(ms []*message.Message) []string
	// Replay replays the messages with these ids as dlq replay does,
	// telling progress about each.
	Replay(ctx context.Context, ids []string, dryRun bool, progress func(Outcome)) (Result, error)
	// ArchiveDestination is the archive file.
	ArchiveDestination() string
	// Archive archives the messages with these ids as dlq archive does.
	Archive(ctx context.Context, ids []string, dryRun bool, progress func(Outcome)) (Result, error)
	// Edit starts an edit of m.
	Edit(m *message.Message) (Editing, error)
}

// LoadNoter is implemented by Actions whose Load can tell what it could
// not read: LoadNote, asked right after each Load, is a line for the status
// bar (for example how many messages another reader held invisible), ""
// when there is nothing to say (issue 30).
type LoadNoter interface {
	LoadNote() string
}

// view is the screen shown.
type view int

const (
	viewGroups view = iota
	viewMessages
	viewMessage
)

// sortMode orders the groups and the messages.
type sortMode int

const (
	sortCount sortMode = iota
	sortNewest
	sortOldest
)

var sortNames = []string{"count", "newest", "oldest"}

// group is one failure group as the console shows it.
type group struct {
	id             string
	key            inspect.GroupKey
	msgs           []*message.Message
	oldest, newest time.Time
}

// Messages the model sends itself.
type (
	// LoadedMsg carries the destination's messages (or why not).
	LoadedMsg struct {
		Messages []*message.Message
		Err      error
		// Note is the Actions' LoadNote, shown on the status line.
		Note string
	}
	progressMsg struct {
		ch  chan tea.Msg
		out Outcome
	}
	doneMsg struct {
		what string
		res  Result
		err  error
	}
	editedMsg struct {
		id  string // the edited message's id
		ed  Editing
		err error
	}
)

// confirm is a destructive action waiting for y/n.
type confirm struct {
	prompt string
	what   string
	total  int
	job    func(ctx context.Context, progress func(Outcome)) (Result, error)
	// yes, when set, is what y does instead of starting job.
	yes    func() tea.Cmd
	cancel func()
	// cancelled is the status line of n ("" for the default).
	cancelled string
}

// Model is the console's bubbletea model.
type Model struct {
	act     Actions
	ctx     context.Context
	now     func() time.Time
	width   int
	height  int
	view    view
	groups  []*group
	cursor  [3]int
	sel     map[string]bool
	dryRun  bool
	sort    sortMode
	help    bool
	filter  textinput.Model
	editing bool // typing a filter
	ask     *confirm
	busy    string
	done    int
	failed  int
	total   int
	status  string
	loading bool
	cur     *group
	curMsg  *message.Message
	styles  styles
}

type styles struct {
	title, faint, bold, cursor, selected, err lipgloss.Style
}

// New returns the console over act. ctx bounds every action; now is the
// clock of the ages shown (nil: time.Now).
func New(ctx context.Context, act Actions, now func() time.Time) Model {
	if now == nil {
		now = time.Now
	}
	f := textinput.New()
	f.Prompt = "/"
	return Model{act: act, ctx: ctx, now: now, width: 80, height: 24, sel: map[string]bool{}, filter: f, loading: true,
		styles: styles{
			title: lipgloss.NewStyle().Bold(true), faint: lipgloss.NewStyle().Faint(true), bold: lipgloss.NewStyle().Bold(true),
			cursor: lipgloss.NewStyle().Reverse(true), selected: lipgloss.NewStyle().Bold(true), err: lipgloss.NewStyle().Bold(true),
		}}
}

// WithDryRun returns m with the dry run on or off (dlq triage --dry-run).
func (m Model) WithDryRun(on bool) Model {
	m.dryRun = on
	return m
}

// WithMessages returns m showing ms, the destination's first read, done
// by the caller before the console starts (so a destination that cannot
// be opened is an error of the command, not a screen); Init then reads
// nothing. The Actions' LoadNote of that read, if any, is the status line.
func (m Model) WithMessages(ms []*message.Message) Model {
	m.loading = false
	m.setMessages(ms)
	if n, ok := m.act.(LoadNoter); ok {
		m.status = n.LoadNote()
	}
	return m
}

// Init loads the destination unless WithMessages gave its first read.
func (m Model) Init() tea.Cmd {
	if !m.loading {
		return nil
	}
	return m.load()
}

func (m Model) load() tea.Cmd {
	act, ctx := m.act, m.ctx
	return func() tea.Msg {
		ms, err := act.Load(ctx)
		var note string
		if n, ok := act.(LoadNoter); ok {
			note = n.LoadNote()
		}
		return LoadedMsg{Messages: ms, Err: err, Note: note}
	}
}

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
	case LoadedMsg:
		m.loading = false
		if msg.Err != nil {
			m.status = "read failed: " + msg.Err.Error()
			return m, nil
		}
		m.setMessages(msg.Messages)
		if msg.Note != "" {
			m.status = msg.Note
		}
	case progressMsg:
		if msg.out.Err != nil {
			m.failed++
		} else {
			m.done++
		}
		return m, wait(msg.ch)
	case doneMsg:
		m.busy = ""
		switch {
		case msg.err != nil:
			m.status = msg.what + " failed: " + msg.err.Error()
		default:
			m.status = msg.res.Summary
		}
		m.sel = map[string]bool{}
		m.loading = true
		return m, m.load()
	case editedMsg:
		if msg.err != nil {
			msg.ed.Close()
			m.status = "editor failed: " + msg.err.Error() + "; nothing was sent"
			return m, nil
		}
		ed, dry, id := msg.ed, m.dryRun, msg.id
		if err := ed.Check(); err != nil {
			// As dlq edit on a terminal: edit again or abandon; an invalid
			// edit is never offered for replay.
			m.ask = &confirm{
				prompt:    fmt.Sprintf("The edit of %s is not valid: %v. Edit it again? (y: edit again, n: abandon, nothing is sent)", id, err),
				what:      "edit",
				yes:       func() tea.Cmd { return editCmd(id, ed) },
				cancel:    ed.Close,
				cancelled: "edit of " + id + " abandoned; nothing was sent",
			}
			return m, nil
		}
		m.ask = &confirm{
			prompt: fmt.Sprintf("%sReplay the edited message %s to %s (the original is removed from %s once it is accepted)? (y/n)", m.dryTag(), id, ed.Destination(), m.act.Source()),
			what:   "edit", total: 1,
			job: func(ctx context.Context, _ func(Outcome)) (Result, error) {
				defer ed.Close()
				return ed.Finish(ctx, dry)
			},
			cancel: ed.Close,
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// setMessages groups ms, keeping the view where it was when it can: the
// cursor stays on the group and the message it was on (by id), else on
// the row it was on, clamped so a row is always under it.
func (m *Model) setMessages(ms []*message.Message) {
	var curGroup, curMsgID string
	if g := m.groupAtCursor(); g != nil && m.view == viewGroups {
		curGroup = g.id
	}
	switch {
	case m.view == viewMessage && m.curMsg != nil:
		curMsgID = m.curMsg.Header.MessageID
	case m.view == viewMessages:
		if t := m.visibleMessages(); m.cursor[viewMessages] < len(t) {
			curMsgID = t[m.cursor[viewMessages]].Header.MessageID
		}
	}
	defer func() {
		if curGroup != "" {
			if i := slices.IndexFunc(m.visibleGroups(), func(g *group) bool { return g.id == curGroup }); i >= 0 {
				m.cursor[viewGroups] = i
			}
		}
		if curMsgID != "" && m.view >= viewMessages {
			if i := slices.IndexFunc(m.visibleMessages(), func(x *message.Message) bool { return x.Header.MessageID == curMsgID }); i >= 0 {
				m.cursor[viewMessages] = i
			}
		}
		for _, v := range []view{viewGroups, viewMessages} {
			saved := m.view
			m.view = v
			m.clamp()
			m.view = saved
		}
	}()
	byID := map[string]*group{}
	m.groups = m.groups[:0]
	for _, msg := range ms {
		k := inspect.GroupOf(msg)
		id := k.ID()
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
		slices.SortStableFunc(g.msgs, func(a, b *message.Message) int {
			return cmp.Or(rejectedAt(b).Compare(rejectedAt(a)), strings.Compare(a.Header.MessageID, b.Header.MessageID))
		})
	}
	if m.cur != nil {
		m.cur = byID[m.cur.id]
		if m.cur == nil {
			m.view = viewGroups
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

func rejectedAt(msg *message.Message) time.Time {
	d := inspect.Describe(msg)
	if !d.RejectedAt.IsZero() {
		return d.RejectedAt
	}
	return d.Timestamp
}

// wait reads the next message of an action's channel.
func wait(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

// start runs an action in the background, reporting progress.
func (m *Model) start(what string, total int, run func(ctx context.Context, progress func(Outcome)) (Result, error)) tea.Cmd {
	m.busy, m.done, m.failed, m.total, m.status = what, 0, 0, total, ""
	ch := make(chan tea.Msg, 64)
	ctx := m.ctx
	go func() {
		defer close(ch)
		res, err := run(ctx, func(o Outcome) { ch <- progressMsg{ch: ch, out: o} })
		ch <- doneMsg{what: what, res: res, err: err}
	}()
	return wait(ch)
}

func (m Model) dryTag() string {
	if m.dryRun {
		return "[dry run] "
	}
	return ""
}

// visibleGroups are the groups the filter keeps, in the sort order.
func (m Model) visibleGroups() []*group {
	q := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	var out []*group
	for _, g := range m.groups {
		if q == "" || strings.Contains(strings.ToLower(strings.Join([]string{g.id, g.key.OriginalTopic, g.key.MessageType, g.key.Reason, g.key.Message}, " ")), q) {
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
		d := inspect.Describe(x)
		if q == "" || strings.Contains(strings.ToLower(d.ID+" "+d.RejectionMessage+" "+string(x.Body)), q) {
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
		return []*message.Message{m.curMsg}
	case viewMessages:
		ms := m.visibleMessages()
		if c := m.cursor[viewMessages]; c < len(ms) {
			return []*message.Message{ms[c]}
		}
	case viewGroups:
		if g := m.groupAtCursor(); g != nil {
			return g.msgs
		}
	}
	return nil
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

func ids(ms []*message.Message) []string {
	out := make([]string, len(ms))
	for i, x := range ms {
		out[i] = x.Header.MessageID
	}
	return out
}

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

// editCmd runs the editor of ed on the terminal (the console suspended)
// and reports its end as an editedMsg.
func editCmd(id string, ed Editing) tea.Cmd {
	return tea.ExecProcess(ed.Command(), func(err error) tea.Msg { return editedMsg{id: id, ed: ed, err: err} })
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
	m.cursor[m.view] = min(m.cursor[m.view], max(n-1, 0))
}

func (m Model) askReplay(ms []*message.Message, what string) (tea.Model, tea.Cmd) {
	if len(ms) == 0 {
		return m, nil
	}
	dests, act, list, dry := m.act.ReplayDestinations(ms), m.act, ids(ms), m.dryRun
	m.ask = &confirm{
		prompt: fmt.Sprintf("%sReplay %s (%s: %s) from %s to %s? (y/n)", m.dryTag(), count(len(ms)), what, idList(list), m.act.Source(), strings.Join(dests, ", ")),
		what:   "replay", total: len(list),
		job: func(ctx context.Context, p func(Outcome)) (Result, error) {
			return act.Replay(ctx, list, dry, p)
		},
	}
	return m, nil
}

// idList names the messages a prompt acts on: every id up to five, else
// the first four and how many more.
func idList(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:4], ", "), len(ids)-4)
}

func count(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}

// --- view -----------------------------------------------------------------

// View renders the console.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "brighter dlq triage"
	return v
}

// Render returns the screen: at most Height lines of at most Width cells.
func (m Model) Render() string {
	head := m.styles.title.Render("brighter dlq triage") + " " + m.act.Source()
	var tags []string
	if m.dryRun {
		tags = append(tags, "DRY RUN")
	}
	if n := len(m.sel); n > 0 {
		tags = append(tags, fmt.Sprintf("%d selected", n))
	}
	tags = append(tags, "sort: "+sortNames[m.sort])
	head += "  " + m.styles.faint.Render(strings.Join(tags, " · "))
	var body []string
	switch {
	case m.help:
		body = helpLines
	case m.loading && m.groups == nil:
		body = []string{"reading " + m.act.Source() + "..."}
	case m.view == viewGroups:
		body = m.groupLines()
	case m.view == viewMessages:
		body = m.messageLines()
	default:
		body = m.detailLines()
	}
	var bottom []string
	if m.editing || m.filter.Value() != "" {
		bottom = append(bottom, m.filter.View())
	}
	// A confirmation or a result is wrapped, never cut: the destinations
	// of a destructive action are always shown whole.
	switch {
	case m.ask != nil:
		for l := range strings.SplitSeq(wrap(m.ask.prompt, m.width), "\n") {
			bottom = append(bottom, m.styles.bold.Render(l))
		}
	case m.busy != "":
		bottom = append(bottom, fmt.Sprintf("%s: %d of %d done, %d failed...", m.busy, m.done+m.failed, m.total, m.failed))
		if m.status != "" {
			bottom = append(bottom, m.status)
		}
	case m.status != "":
		bottom = append(bottom, strings.Split(wrap(m.status, m.width), "\n")...)
	}
	bottom = append(bottom, m.styles.faint.Render("enter open esc back space select r/R replay e edit a archive d dry / s ? q"))
	room := max(m.height-1-len(bottom), 1)
	if len(body) > room {
		body = body[:room]
	}
	for len(body) < room {
		body = append(body, "")
	}
	lines := append([]string{head}, body...)
	lines = append(lines, bottom...)
	for i, l := range lines {
		lines[i] = ansi.Truncate(strings.ReplaceAll(l, "\t", " "), m.width, "…")
	}
	return strings.Join(lines, "\n")
}

var helpLines = []string{
	"keys",
	"  up/down, j/k    move            enter    open a group, a message",
	"  esc             back, clear the filter",
	"  space           select the message (or group) under the cursor",
	"  r               replay the selection (or what is under the cursor)",
	"  R               replay the whole group",
	"  e               edit the message in $EDITOR, then replay the edited copy",
	"  a               archive the selection (or what is under the cursor)",
	"  d               dry run on/off: actions show what they would do",
	"  /               filter         s  sort: count, newest, oldest",
	"  q               quit (nothing is held: every read is released at once)",
	"",
	"Every replay, archive and edit names its destinations and count and asks once (y/n).",
}

func (m Model) ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return inspect.Ago(m.now(), t)
}

// window returns the rows of lines to show so the cursor stays visible.
func (m Model) window(rows []string, cursor int) []string {
	room := max(m.height-5, 1)
	start := 0
	if cursor >= room {
		start = cursor - room + 1
	}
	return rows[start:]
}

func (m Model) groupLines() []string {
	gs := m.visibleGroups()
	lines := []string{m.styles.bold.Render(fmt.Sprintf(" %-12s %5s %-7s %-7s %-13s %s", "GROUP", "COUNT", "OLDEST", "NEWEST", "REASON", "SAMPLE"))}
	if len(gs) == 0 {
		return append(lines, m.styles.faint.Render("no dead-lettered messages"+map[bool]string{true: " match the filter", false: ""}[m.filter.Value() != ""]))
	}
	var rows []string
	for i, g := range gs {
		sample := g.key.Message
		if d := inspect.Describe(g.msgs[0]); d.RejectionMessage != "" {
			sample = d.RejectionMessage
		}
		mark := " "
		if m.allSelected(g.msgs) {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-12s %5d %-7s %-7s %-13s %s", mark, g.id, len(g.msgs), m.ago(g.oldest), m.ago(g.newest), g.key.Reason, oneLine(sample+" ("+g.key.OriginalTopic+")"))
		if i == m.cursor[viewGroups] {
			row = m.styles.cursor.Render(ansi.Truncate(row, m.width, "…"))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewGroups])...)
}

func (m Model) allSelected(ms []*message.Message) bool {
	for _, x := range ms {
		if !m.sel[x.Header.MessageID] {
			return false
		}
	}
	return len(ms) > 0
}

func (m Model) messageLines() []string {
	g := m.cur
	lines := []string{
		fmt.Sprintf("group %s · %s · %s · %s", g.id, g.key.OriginalTopic, g.key.Reason, count(len(g.msgs))),
		m.styles.bold.Render(fmt.Sprintf(" %-36s %-8s %5s %s", "ID", "REJECTED", "COUNT", "MESSAGE")),
	}
	var rows []string
	for i, x := range m.visibleMessages() {
		d := inspect.Describe(x)
		mark := " "
		if m.sel[d.ID] {
			mark = "*"
		}
		row := fmt.Sprintf("%s%-36s %-8s %5d %s", mark, d.ID, m.ago(rejectedAt(x)), d.HandledCount, oneLine(d.RejectionMessage))
		if i == m.cursor[viewMessages] {
			row = m.styles.cursor.Render(ansi.Truncate(row, m.width, "…"))
		}
		rows = append(rows, row)
	}
	return append(lines, m.window(rows, m.cursor[viewMessages])...)
}

// detailLines show one message: headers, rejection metadata, bag, body.
func (m Model) detailLines() []string {
	x := m.curMsg
	h := x.Header
	d := inspect.Describe(x)
	sel := ""
	if m.sel[h.MessageID] {
		sel = " (selected)"
	}
	lines := []string{
		m.styles.bold.Render("message " + h.MessageID + sel),
		"headers",
		"  topic " + h.Topic + " · type " + h.MessageType.String() + " · content type " + h.ContentType,
		"  correlation id " + h.CorrelationID + " · partition key " + h.PartitionKey + " · created " + m.ago(h.Timestamp),
		"rejection",
		fmt.Sprintf("  %s from %s after %d deliveries, %s", d.Reason, d.OriginalTopic, d.HandledCount, m.ago(d.RejectedAt)),
		"  " + oneLine(d.RejectionMessage),
		"bag",
	}
	for _, k := range slices.Sorted(maps.Keys(h.Bag)) {
		if slices.Contains(message.RejectionKeys[:], k) || k == message.KeyPumpRejectionReason {
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s: %v", k, h.Bag[k]))
	}
	lines = append(lines, "body")
	for l := range strings.SplitSeq(PrettyBody(h.ContentType, x.Body), "\n") {
		lines = append(lines, "  "+l)
	}
	start := min(m.cursor[viewMessage], max(len(lines)-1, 0))
	return lines[start:]
}

// PrettyBody is body as the console shows it: JSON (by content type)
// indented; other UTF-8 text as it is; anything else as a byte count.
func PrettyBody(contentType string, body []byte) string {
	if inspect.IsJSON(contentType) {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			return buf.String()
		}
	}
	if !isText(body) {
		return fmt.Sprintf("(%d bytes, not text)", len(body))
	}
	return string(body)
}

func isText(b []byte) bool {
	return !bytes.ContainsRune(b, 0) && strings.ToValidUTF8(string(b), "\uFFFD") == string(b)
}

// wrap breaks s into lines of at most width cells, at spaces where it can.
func wrap(s string, width int) string {
	return ansi.Hardwrap(ansi.Wordwrap(s, width, " /,"), width, true)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
