package triage

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/tui/kit"
)

// Starting is the console from its first frame: while dlq triage connects
// to the broker and reads the destination for the first time (a broker
// that does not answer holds that read for up to the transport's call
// deadline), it says which destination, on which transport and endpoint,
// and for how long, the count moving with the clock; q quits (Quit) and
// ctrl+c interrupts (Interrupted), as they do in the console. ReadyMsg
// hands it the console, which it shows from then on; StartFailedMsg ends
// it (the caller reports why).
type Starting struct {
	source, transport, endpoint string
	since                       time.Time
	now                         func() time.Time
	after                       func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	width, height               int
	styles                      kit.Styles
	keys                        keyMap
	// quit: q ended it while connecting; interrupted: ctrl+c did.
	quit, interrupted bool
	// console is the console once ReadyMsg came (nil before).
	console *Model
}

// ReadyMsg tells Starting that the first read is done: Console, made
// with its messages (Model.WithMessages), is shown from then on, at the
// terminal's size.
type ReadyMsg struct{ Console Model }

// StartFailedMsg tells Starting that the start-up failed (the destination
// could not be opened or read): the screen ends, for the caller to print
// why.
type StartFailedMsg struct{}

// NewStarting returns the connecting screen for source (the destination's
// URL), on transport at endpoint ("" when it has none), connecting since
// since; now is the clock of the count (nil: time.Now).
func NewStarting(source, transport, endpoint string, since time.Time, now func() time.Time) Starting {
	if now == nil {
		now = time.Now
	}
	return Starting{source: source, transport: transport, endpoint: endpoint, since: since, now: now, after: tea.Tick,
		width: 80, height: 24, styles: kit.NewStyles(kit.Mono), keys: defaultKeys()}
}

// Quit reports whether q ended the screen while it was connecting (the
// command exits 0: nothing was read or held).
func (s Starting) Quit() bool { return s.console == nil && s.quit }

// Interrupted reports whether ctrl+c ended the screen while it was
// connecting, or the console after it (Model.Interrupted): exit 130.
func (s Starting) Interrupted() bool {
	if s.console != nil {
		return s.console.Interrupted()
	}
	return s.interrupted
}

// Console returns the console, once ReadyMsg came.
func (s Starting) Console() (Model, bool) {
	if s.console == nil {
		return Model{}, false
	}
	return *s.console, true
}

// startingTick moves the count of seconds on.
type startingTick struct{}

// Init starts the clock of the count.
func (s Starting) Init() tea.Cmd { return s.tick() }

func (s Starting) tick() tea.Cmd {
	return s.after(tickEvery, func(time.Time) tea.Msg { return startingTick{} })
}

// Update handles a message: the console's once it is shown.
func (s Starting) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if s.console != nil {
		m, cmd := s.console.Update(msg)
		c := m.(Model)
		s.console = &c
		return s, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.width, s.height = max(msg.Width, 20), max(msg.Height, 6)
	case startingTick:
		return s, s.tick()
	case ReadyMsg:
		m, _ := msg.Console.Update(tea.WindowSizeMsg{Width: s.width, Height: s.height})
		c := m.(Model)
		s.console = &c
		return s, c.Init()
	case StartFailedMsg:
		return s, tea.Quit
	case tea.KeyPressMsg:
		switch {
		case s.keys.Quit.Matches(msg):
			s.quit = true
			return s, tea.Quit
		case s.keys.ForceQuit.Matches(msg):
			s.interrupted = true
			return s, tea.Quit
		}
	}
	return s, nil
}

// View renders the screen: the console's once it is shown.
func (s Starting) View() tea.View {
	if s.console != nil {
		return s.console.View()
	}
	return kit.Screen(s.Render(), "brighter dlq triage")
}

// Render returns the connecting screen: at most Height lines of at most
// Width cells.
func (s Starting) Render() string {
	if s.console != nil {
		return s.console.Render()
	}
	where := s.transport
	if s.endpoint != "" {
		where += " at " + s.endpoint
	}
	lines := []string{
		s.styles.Title.Render("brighter dlq triage") + " " + s.source,
		s.styles.Warn.Render(fmt.Sprintf("connecting to the broker for %s: reading %s...", s.now().Sub(s.since).Truncate(time.Second), s.source)),
		s.styles.Warn.Render("  " + where),
	}
	lines = kit.Pad(lines, max(s.height-1, 1))
	lines = append(lines, s.styles.Dim.Render("q quit (exit 0) · ctrl+c interrupt (exit 130): nothing is read or held"))
	return strings.Join(kit.CutLines(lines, s.width), "\n")
}
