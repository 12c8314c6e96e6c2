package tui

import (
	"maps"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/tui/kit"
)

type sortMode int

const (
	sortRecent sortMode = iota
	sortCount
	sortID
)

var sortNames = [...]string{"recent", "count", "id"}

type panel int

const (
	panelMessages panel = iota
	panelRejections
)

// Model is the dashboard. Its zero value is not usable: call New.
type Model struct {
	opt    Options
	styles kit.Styles
	keys   keyMap

	width, height int

	// state is what the feed, the scrapes and the targets' reports said.
	state

	paused bool
	// pausedAt is when the dashboard was last paused or resumed.
	pausedAt time.Time
	pending  []EventsMsg // held batches, pendingN records in all
	pendingN int
	skipped  uint64

	filter    textinput.Model
	filtering bool
	sort      sortMode
	focus     panel
	cursor    [2]int
	details   bool
	help      bool
	// draining: the consumer was asked to stop (q, or DrainingMsg);
	// forced: q was pressed again while draining.
	draining, forced bool
	// interrupted: ctrl+c (not q) quit the dashboard of brighter watch
	// (Interrupted).
	interrupted bool
	// connecting: the consumer is still opening its channels
	// (ConnectingMsg, until ConnectedMsg); connectStopping: q was pressed
	// meanwhile, and the consumer gives up the connection.
	connecting      *ConnectingMsg
	connectStopping bool
	// awaitingReceive: while draining, the subscriptions whose drain
	// waits only for their receive in flight, and for how long at most
	// (AwaitingReceiveMsg).
	awaitingReceive map[string]time.Duration

	// Updates and Views count calls, for the redraw budget (tests and the
	// benchmark read them).
	updates, views *int
}

// New returns a dashboard model.
func New(o Options) Model {
	if o.Title == "" {
		o.Title = "brighter watch"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	if o.LogLines <= 0 {
		o.LogLines = DefaultLogLines
	}
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "message id, subscription or reason"
	ti.CharLimit = 64
	ti.SetWidth(40)
	if o.NoColor {
		ti.SetStyles(plainInputStyles())
	}
	m := Model{
		opt: o, styles: newStyles(o.NoColor), keys: defaultKeys(),
		width: DefaultWidth, height: DefaultHeight,
		state:  newState(o.Targets),
		filter: ti, updates: new(int), views: new(int),
	}
	if o.Interrupt != nil {
		m.keys.Quit.SetHelp("q", "stop the consumer: drain, then exit (q again: exit at once)")
	}
	return m
}

// Interrupted reports whether ctrl+c ended the dashboard (an
// interruption: brighter watch exits 130) rather than q (a quit: 0).
// Always false with Options.Interrupt, where both ask the consumer to
// drain.
func (m Model) Interrupted() bool { return m.interrupted }

// Counts returns how many times Update and View were called (the redraw
// budget is checked with them).
func (m Model) Counts() (updates, views int) { return *m.updates, *m.views }

// Init starts the rate ticker.
func (m Model) Init() tea.Cmd {
	if m.opt.Tick < 0 {
		return nil
	}
	return m.tick()
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.opt.Tick, func(t time.Time) tea.Msg { return TickMsg(t) })
}

// Update applies a message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	*m.updates++
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		return m, nil
	case TickMsg:
		return m, m.tick()
	case EventsMsg:
		m.dropped += msg.Dropped
		if m.paused {
			room := MaxPending - m.pendingN
			if room < len(msg.Records) {
				m.skipped += uint64(len(msg.Records) - max(room, 0))
				msg.Records = msg.Records[:max(room, 0)]
			}
			if len(msg.Records) > 0 {
				m.pending = append(m.pending, EventsMsg{Records: msg.Records, Target: msg.Target})
				m.pendingN += len(msg.Records)
			}
			return m, nil
		}
		for i := range msg.Records {
			m.apply(&msg.Records[i], msg.Target)
		}
		m.trim()
		return m, nil
	case TotalsMsg:
		if m.paused {
			// Frozen with the events: a scrape taken now would count the
			// events still waiting, and count them twice once they are
			// applied. The first scrape after resuming sets things right.
			return m, nil
		}
		m.setTotals(msg.Target, msg.Totals)
		return m, nil
	case ConnectingMsg:
		m.connecting = &msg
		return m, nil
	case ConnectedMsg:
		m.connecting = nil
		if m.connectStopping {
			// The stop asked for while connecting is the consumer's
			// drain now.
			m.draining = true
		}
		return m, nil
	case DrainingMsg:
		m.draining = true
		return m, nil
	case AwaitingReceiveMsg:
		m.draining = true
		aw := make(map[string]time.Duration, len(m.awaitingReceive)+1)
		maps.Copy(aw, m.awaitingReceive)
		aw[msg.Subscription] = msg.UpTo
		m.awaitingReceive = aw
		return m, nil
	case TargetStatusMsg:
		m.setTargetStatus(msg)
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}
