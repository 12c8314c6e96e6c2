package triage

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/tui/kit"
)

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

// Messages the model sends itself.
type (
	// LoadedMsg carries the destination's messages (or why not).
	LoadedMsg struct {
		Messages []*message.Message
		Err      error
		// Note is the Actions' LoadNote, shown on the status line.
		Note string
		// Retries is the Actions' retry history (HistoryReader), nil
		// without one.
		Retries []inspect.Retry
		// Notes is the Actions' group notes (NoteKeeper), nil without.
		Notes map[string]inspect.GroupNote
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
	// tickMsg is the clock: relative times move on, and a read starts
	// when the last one is --refresh old.
	tickMsg struct{}
	// archivedMsg is the archive file's records (ArchiveReader), read for
	// the archived view.
	archivedMsg struct {
		ms  []*message.Message
		err error
	}
	// restoreCheckMsg is a Restorer's AlreadyThere for the records an
	// archived view's r or R would restore.
	restoreCheckMsg struct {
		ids   []string
		what  string
		there map[string]int
		err   error
	}
	editedMsg struct {
		id  string // the edited message's id
		ed  Editing
		err error
	}
)

// Model is the console's bubbletea model.
type Model struct {
	// interrupted is set when ctrl+c ended the console (Interrupted).
	interrupted bool
	// stop ends the context of the last action started (start): ctrl+c
	// stops an action under way with it. nil before the first action.
	stop   context.CancelFunc
	act    Actions
	ctx    context.Context
	now    func() time.Time
	width  int
	height int
	// avail is the lines the body has on the screen being rendered.
	avail  int
	view   view
	groups []*group
	// all is the last read's messages (a search looks in them).
	all []*message.Message
	// copies is how many stored copies of each id the last read found
	// (inspect.CopyCounts): the list and the message view mark an id
	// with more than one (×N).
	copies map[string]int
	// retries is the retry history by message id, oldest first; settle
	// is how long after its last retry a message not back is pending
	// (WithSettle).
	retries map[string][]inspect.Retry
	settle  time.Duration
	// archived is the archived view: the screens show the archive file's
	// records, read-only; live keeps the destination's last read meanwhile.
	archived bool
	live     []*message.Message
	// inDLQ is the ids of live, for the archived view's ↺ mark: an
	// archived record whose id the dead-letter destination holds again
	// (restored).
	inDLQ map[string]bool
	// notes are the group notes by group id; noting is the group whose
	// note is being typed into noteInput ("" when none).
	notes     map[string]inspect.GroupNote
	noting    string
	noteInput textinput.Model
	cursor    [3]int
	sel       map[string]bool
	dryRun    bool
	sort      sortMode
	groupBy   groupBy
	help      bool
	// helpTop is the first help line shown (up/down scroll the help).
	helpTop int
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
	styles  kit.Styles
	keys    keyMap
	// selGroup is the group the selection belongs to (group.id): the
	// selection is cleared when the current group is another (scope).
	selGroup string
	// refresh is how often the destination is read again (0: only on
	// ctrl+r and after an action); clock makes the console tick (every
	// second) for it and for the relative times; lastRead is when the
	// last read ended.
	refresh  time.Duration
	clock    bool
	lastRead time.Time
	// pending is a confirmed action waiting for the read under way to end
	// (a read holds what it reads, so the action would miss it).
	pending *confirm
	// after schedules the clock's next tick (tea.Tick; tests replace it).
	after func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
}

// tickEvery is the clock's period: relative times are shown to the second.
const tickEvery = time.Second

// WithRefresh returns m reading the destination again every d (0: never
// by itself, only on ctrl+r and after an action); either way the console
// ticks every second so the ages shown move on.
func (m Model) WithRefresh(d time.Duration) Model {
	m.refresh, m.clock = d, true
	return m
}

func (m Model) tick() tea.Cmd {
	if !m.clock {
		return nil
	}
	return m.after(tickEvery, func(time.Time) tea.Msg { return tickMsg{} })
}

// reload starts a read unless one (or an action, which reads when it
// ends) is under way.
func (m Model) reload() (Model, tea.Cmd) {
	if m.loading || m.busy != "" {
		return m, nil
	}
	m.loading = true
	return m, m.load()
}

// New returns the console over act. ctx bounds every action; now is the
// clock of the ages shown (nil: time.Now).
func New(ctx context.Context, act Actions, now func() time.Time) Model {
	if now == nil {
		now = time.Now
	}
	f := textinput.New()
	f.Prompt = "/"
	// A steady cursor: the model does not forward blink ticks.
	st := f.Styles()
	st.Cursor.Blink = false
	f.SetStyles(st)
	ni := textinput.New()
	ni.Prompt = "note: "
	ni.SetStyles(st)
	return Model{act: act, ctx: ctx, now: now, width: 80, height: 24, sel: map[string]bool{}, filter: f, noteInput: ni, loading: true,
		styles: kit.NewStyles(kit.Mono), keys: defaultKeys(), after: tea.Tick, settle: DefaultSettle}
}

// DefaultSettle is how long after its last retry a message that has not
// come back to the dead-letter destination counts as pending (WithSettle).
const DefaultSettle = 15 * time.Minute

// WithSettle returns m counting a retried message pending for d after its
// last retry unless it comes back (failed again); after d it is settled.
func (m Model) WithSettle(d time.Duration) Model {
	m.settle = d
	return m
}

// WithDryRun returns m with the dry run on or off (dlq triage --dry-run).
func (m Model) WithDryRun(on bool) Model {
	m.dryRun = on
	return m
}

// WithMessages returns m showing ms, the destination's first read, done
// by the caller before the console is shown (Starting says meanwhile what
// it connects to, and a destination that cannot be opened is an error of
// the command, not a screen); Init then reads
// nothing. The Actions' LoadNote of that read, if any, is the status line.
func (m Model) WithMessages(ms []*message.Message) Model {
	m.loading = false
	m.lastRead = m.now()
	if h, ok := m.act.(HistoryReader); ok {
		rs, _ := h.Retries()
		m.setRetries(rs)
	}
	if n, ok := m.act.(NoteKeeper); ok {
		m.notes, _ = n.Notes()
	}
	m.setMessages(ms)
	if n, ok := m.act.(LoadNoter); ok {
		m.status = n.LoadNote()
	}
	return m
}

// Init loads the destination unless WithMessages gave its first read,
// and starts the clock (WithRefresh).
func (m Model) Init() tea.Cmd {
	var load tea.Cmd
	if m.loading {
		load = m.load()
	}
	return tea.Batch(load, m.tick())
}

func (m Model) load() tea.Cmd {
	act, ctx := m.act, m.ctx
	return func() tea.Msg {
		ms, err := act.Load(ctx)
		var note string
		if n, ok := act.(LoadNoter); ok {
			note = n.LoadNote()
		}
		var rs []inspect.Retry
		if h, ok := act.(HistoryReader); ok && err == nil {
			var herr error
			if rs, herr = h.Retries(); herr != nil {
				note = strings.TrimPrefix(note+"; ", "; ") + "retry history: " + herr.Error()
			}
		}
		var notes map[string]inspect.GroupNote
		if n, ok := act.(NoteKeeper); ok && err == nil {
			var nerr error
			if notes, nerr = n.Notes(); nerr != nil {
				note = strings.TrimPrefix(note+"; ", "; ") + nerr.Error()
			}
		}
		return LoadedMsg{Messages: ms, Err: err, Note: note, Retries: rs, Notes: notes}
	}
}

// Edited is the message the console receives when the editor of ed, run
// for message id, ends (err is the editor's failure): what the terminal's
// tea.ExecProcess delivers. A caller driving the model without a terminal
// runs ed.Command itself and sends this.
func Edited(id string, ed Editing, err error) tea.Msg { return editedMsg{id: id, ed: ed, err: err} }

// Interrupted reports whether the console was ended by ctrl+c (an
// interruption: the command exits 130) rather than by q (a quit: 0).
func (m Model) Interrupted() bool { return m.interrupted }

// Update handles a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
	case tickMsg:
		next := m.tick()
		if m.refresh > 0 && m.ask == nil && !m.archived && !m.lastRead.IsZero() && m.now().Sub(m.lastRead) >= m.refresh {
			var load tea.Cmd
			m, load = m.reload()
			return m, tea.Batch(load, next)
		}
		return m, next
	case archivedMsg:
		return m.openArchived(msg)
	case restoreCheckMsg:
		return m.confirmRestore(msg)
	case LoadedMsg:
		m.loading = false
		m.lastRead = m.now()
		if m.archived && msg.Err == nil && m.pending == nil {
			// the archived view stays; the destination's read waits for A
			m.setLive(msg.Messages)
			m.setRetries(msg.Retries)
			return m, nil
		}
		if a := m.pending; a != nil {
			m.pending = nil
			if msg.Err == nil {
				m.setRetries(msg.Retries)
				m.setMessages(msg.Messages)
			}
			cmd := m.start(a.what, a.total, a.job)
			return m, cmd
		}
		if msg.Err != nil {
			m.status = "read failed: " + msg.Err.Error()
			return m, nil
		}
		m.setRetries(msg.Retries)
		if msg.Notes != nil {
			m.notes = msg.Notes
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
			prompt: editPrompt(m.dryTag(), id, ed, m.act.Source()),
			what:   "edit", total: 1,
			job: func(ctx context.Context, _ func(Outcome)) (Result, error) {
				defer ed.Close()
				return ed.Finish(ctx, dry)
			},
			cancel: ed.Close,
		}
	case tea.KeyPressMsg:
		nm, cmd := m.key(msg)
		mm := nm.(Model)
		mm.scope()
		return mm, cmd
	}
	return m, nil
}

// editPromptMax is how many runes of the edit the confirmation shows.
const editPromptMax = 400

// editPrompt is the confirmation of an edit: how many stored copies it
// goes to, where, and the edit itself (the edited body, or headers), on
// one line, control characters shown as "?", cut to editPromptMax runes.
func editPrompt(dry, id string, ed Editing, source string) string {
	what := "the edited message " + id
	if n := ed.Copies(); n > 1 {
		what = fmt.Sprintf("the edit of %s to each of its %d stored copies", id, n)
	}
	shown := []rune(kit.CollapseSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return '?'
		}
		return r
	}, ed.Edited())))
	if len(shown) > editPromptMax {
		shown = append(shown[:editPromptMax], []rune(kit.Ellipsis)...)
	}
	return fmt.Sprintf("%sReplay %s to %s (each original is removed from %s once its copy is accepted)? (y/n)\nEdited: %s", dry, what, ed.Destination(), source, string(shown))
}
