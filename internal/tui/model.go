package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/brightergo/brighter/internal/observe"
)

// Limits of what the model keeps.
const (
	// MaxMessages is how many messages the messages panel remembers; the
	// oldest settled ones are forgotten first.
	MaxMessages = 1000
	// MaxRejections is how many rejections the log keeps.
	MaxRejections = 200
	// MaxPending is how many records are held while paused; more are
	// counted as skipped.
	MaxPending = 50000
	// MaxLogs is how many Warn/Error log lines the model keeps;
	// DefaultLogLines how many the log panel shows (issue 13).
	MaxLogs         = 100
	DefaultLogLines = 5
	// rateWindow is the window of the received/s rate, in seconds.
	rateWindow = 10
	// DefaultWidth and DefaultHeight are used until the terminal reports
	// its size.
	DefaultWidth, DefaultHeight = 80, 24
)

// EventsMsg is a batch of records from the event stream.
type EventsMsg struct {
	Records []observe.Record
	// Dropped is how many records the feeder could not keep up with.
	Dropped uint64
	// Target is the consumer the records came from (its Batcher's
	// Target): brighter watch keeps each target's channel status apart;
	// "" in-process.
	Target string
}

// TotalsMsg carries one target's /metrics totals per subscription.
type TotalsMsg struct {
	Target string
	Totals map[string]observe.Totals
}

// TargetStatusMsg reports whether a target's /events stream is connected.
type TargetStatusMsg struct {
	Target    string
	Connected bool
	// Err is why it is not connected; RetryIn when the next attempt is;
	// Attempt counts failed attempts in a row.
	Err     error
	RetryIn time.Duration
	Attempt int
}

// TickMsg refreshes the rates once a second.
type TickMsg time.Time

// DrainingMsg tells the in-process dashboard that the consumer is draining
// for a reason of its own (a signal, a pump that failed): it shows
// "draining (N in flight)..." from then on, as after q (issue 13).
type DrainingMsg struct{}

// Options configure a Model.
type Options struct {
	// Title is the first word of the header ("brighter watch").
	Title string
	// Targets are the consumers watched, shown in the header; empty for the
	// in-process dashboard.
	Targets []string
	// NoColor renders without colour (NO_COLOR, or stdout not a terminal).
	NoColor bool
	// Now is the clock (time.Now when nil); Location the zone of the times
	// shown (time.Local when nil).
	Now      func() time.Time
	Location *time.Location
	// Tick is the rate refresh interval (1s when 0; negative: none, for
	// tests).
	Tick time.Duration
	// Interrupt, when set, makes q (and ctrl+c) act like a signal to an
	// in-process consumer (consume --tui, issue 13): the first asks it to
	// drain and the dashboard stays, showing "draining (N in flight)...",
	// until its caller ends the program; one while draining asks it to exit
	// at once. It is called on its own goroutine and must not block. Nil:
	// q quits the dashboard (brighter watch).
	Interrupt func()
	// LogLines is how many of the last Warn/Error log lines the log panel
	// shows (DefaultLogLines when 0).
	LogLines int
}

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
	styles styles
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
	case DrainingMsg:
		m.draining = true
		return m, nil
	case TargetStatusMsg:
		m.setTargetStatus(msg)
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if m.filtering {
		switch {
		case key.Matches(msg, m.keys.Apply):
			m.filtering = false
			m.filter.Blur()
			m.cursor = [2]int{}
			return m, nil
		case key.Matches(msg, m.keys.Back):
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
			return m, nil
		}
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		m.cursor = [2]int{}
		return m, cmd
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		if m.opt.Interrupt == nil {
			return m, tea.Quit
		}
		if m.draining {
			m.forced = true
		}
		m.draining = true
		interrupt := m.opt.Interrupt
		return m, func() tea.Msg { interrupt(); return nil }
	case key.Matches(msg, k.Help):
		m.help = !m.help
	case m.help && key.Matches(msg, k.Back):
		m.help = false
	case key.Matches(msg, k.Back):
		if m.details {
			m.details = false
		} else if m.filter.Value() != "" {
			m.filter.SetValue("")
		}
	case key.Matches(msg, k.Filter):
		m.filtering, m.help, m.details = true, false, false
		return m, m.filter.Focus()
	case key.Matches(msg, k.Sort):
		m.sort = (m.sort + 1) % sortMode(len(sortNames))
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
		m.pausedAt = m.opt.Now()
		if !m.paused {
			for _, b := range m.pending {
				for i := range b.Records {
					m.apply(&b.Records[i], b.Target)
				}
			}
			m.pending, m.pendingN = nil, 0
			m.trim()
		}
	case key.Matches(msg, k.Details):
		m.details = !m.details
	case key.Matches(msg, k.Tab):
		m.focus = 1 - m.focus
	case key.Matches(msg, k.Up):
		m.cursor[m.focus] = max(m.cursor[m.focus]-1, 0)
	case key.Matches(msg, k.Down):
		m.cursor[m.focus]++ // clamped when drawn
	}
	return m, nil
}

// --- view -----------------------------------------------------------------

// View renders the dashboard.
func (m Model) View() tea.View {
	*m.views++
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = m.opt.Title
	return v
}

// Render returns the screen as a string of at most Height lines, each at
// most Width cells wide.
//
// The log panel and the key line are always at the bottom (the panels
// above give way on a small screen), and a draining consumer says so right
// under the header (issue 13).
func (m Model) Render() string {
	bottom := append(m.logPanel(), m.footer())
	var lines []string
	lines = append(lines, m.header())
	if m.draining {
		lines = append(lines, m.drainingLine())
	}
	lines = append(lines, m.targetLines()...)
	switch {
	case m.help:
		lines = append(lines, m.helpLines()...)
	case m.details:
		lines = append(lines, m.detailLines()...)
	default:
		lines = append(lines, m.subLines()...)
		rest := m.height - len(lines) - len(bottom)
		msgH := max(rest*3/5, 3)
		rejH := max(rest-msgH, 3)
		lines = append(lines, m.messageLines(msgH)...)
		lines = append(lines, m.rejectionLines(rejH)...)
	}
	body := max(m.height-len(bottom), 1)
	if len(lines) > body {
		lines = lines[:body]
	}
	for len(lines) < body {
		lines = append(lines, "")
	}
	lines = append(lines, bottom...)
	if len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}

func (m Model) header() string {
	parts := []string{m.styles.title.Render(m.opt.Title)}
	if n := len(m.opt.Targets); n > 0 {
		ok := 0
		for _, t := range m.targets {
			if t.connected {
				ok++
			}
		}
		parts = append(parts, fmt.Sprintf("%d/%d targets connected", ok, n))
	}
	parts = append(parts, "sort: "+sortNames[m.sort])
	if f := m.filter.Value(); f != "" && !m.filtering {
		parts = append(parts, "filter: "+f)
	}
	if m.dropped > 0 {
		parts = append(parts, m.styles.warn.Render(fmt.Sprintf("%d events dropped", m.dropped)))
	}
	if m.paused {
		p := "PAUSED"
		if n := m.pendingN; n > 0 {
			p += fmt.Sprintf(" (%d waiting)", n)
		}
		parts = append(parts, m.styles.warn.Render(p))
	}
	return strings.Join(parts, " · ")
}

func (m Model) targetLines() []string {
	var out []string
	for _, t := range sortedKeys(m.targets) {
		st := m.targets[t]
		if st.connected || !st.seen {
			continue
		}
		out = append(out, m.styles.bad.Render(fmt.Sprintf("✗ %s unreachable: %v", t, st.err)),
			m.styles.bad.Render(fmt.Sprintf("  retrying in %s (attempt %d)", st.retryIn.Round(time.Second/10), st.attempt)))
	}
	if m.filtering {
		out = append(out, m.filter.View())
	}
	return out
}

func (m Model) footer() string {
	if m.filtering {
		return m.styles.dim.Render("enter apply · esc clear")
	}
	if m.draining && m.opt.Interrupt != nil {
		return m.styles.dim.Render("q exit at once (unsettled messages are left to the broker) · / filter · ? help")
	}
	return m.styles.dim.Render("/ filter · s sort · p pause · tab panel · enter details · ? help · q quit")
}

// drainingLine is shown from q (or DrainingMsg) until the program ends.
func (m Model) drainingLine() string {
	if m.forced {
		return m.styles.bad.Render(fmt.Sprintf("exiting at once (%d in flight left to the broker)...", m.inFlight()))
	}
	return m.styles.warn.Render(fmt.Sprintf("draining (%d in flight)... handlers finish and settle, then the consumer exits", m.inFlight()))
}

// statusLines are the subscription's channel status under its row:
// connected; failing since T (for how long, how many calls in a row,
// whether that made the consumer not ready) with the last error on a line
// of its own, cut in the middle to the width; or stopped.
//
// With several targets (replicas of one consumer) each target that is not
// connected has lines of its own, named; "connected" means all are.
func (m Model) statusLines(s *subState) []string {
	var out []string
	targets := sortedKeys(s.health)
	for _, t := range targets {
		name := ""
		if len(targets) > 1 || len(m.opt.Targets) > 1 {
			name = t + ": "
		}
		out = append(out, m.targetStatus(*s.health[t], name)...)
	}
	if len(out) == 0 {
		return []string{m.styles.ok.Render("  ✓ connected")}
	}
	return out
}

// targetStatus is one target's status lines, nil when it is connected;
// name prefixes them ("" with one target).
func (m Model) targetStatus(h channelStatus, name string) []string {
	switch {
	case h.stopped && h.stopErr != "":
		head := "  ✗ " + name + "stopped: "
		return []string{m.styles.bad.Render(head + squeeze(h.stopErr, m.width-ansi.StringWidth(head)))}
	case h.stopped:
		return []string{m.styles.dim.Render("  ■ " + name + "stopped")}
	case h.failing:
		head := "  ✗ " + name + "failing since " + h.since.In(m.opt.Location).Format("15:04:05")
		var extra []string
		if d := m.rateNow().Sub(h.since); d >= time.Second {
			extra = append(extra, d.Round(time.Second).String())
		}
		if h.failures > 0 {
			extra = append(extra, fmt.Sprintf("%d failed calls", h.failures))
		}
		if len(extra) > 0 {
			head += " (" + strings.Join(extra, ", ") + ")"
		}
		if h.stalled {
			head += " · not ready"
		}
		out := []string{m.styles.bad.Render(head)}
		if h.lastErr != "" {
			const label = "    last error: "
			e := strings.TrimPrefix(h.lastErr, "channel failure: ")
			out = append(out, m.styles.bad.Render(label+squeeze(e, m.width-len(label))))
		}
		return out
	}
	return nil
}

// squeeze fits s into w cells by cutting its middle: the start of an error
// says which call failed, its end why ("connection refused").
func squeeze(s string, w int) string {
	s = strings.Join(strings.Fields(s), " ")
	sw := ansi.StringWidth(s)
	if sw <= w || w < 8 {
		return s
	}
	head := w / 3
	tail := w - head - 1
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-tail, "")
}

// visibleLogs returns the log lines the filter lets through, oldest first.
func (m Model) visibleLogs() []logLine {
	if !m.filterSet() {
		return m.logs
	}
	var out []logLine
	for _, l := range m.logs {
		if m.matches(l.text, l.sub, l.id) {
			out = append(out, l)
		}
	}
	return out
}

// logPanel is the footer panel of the last Warn/Error log lines, oldest of
// them first.
func (m Model) logPanel() []string {
	ls := m.visibleLogs()
	title := "LOG · warnings and errors"
	if m.logCount > 0 {
		title += fmt.Sprintf(" · %d", m.logCount)
	}
	out := []string{m.styles.section.Render(title)}
	if len(ls) == 0 {
		return append(out, m.styles.dim.Render("  no warnings or errors"))
	}
	for _, l := range ls[max(len(ls)-m.opt.LogLines, 0):] {
		var b strings.Builder
		fmt.Fprintf(&b, "  %s %-5s ", l.at.In(m.opt.Location).Format("15:04:05"), l.level)
		if l.sub != "" {
			b.WriteString(oneLine(l.sub) + ": ")
		}
		b.WriteString(oneLine(l.text))
		if l.id != "" {
			b.WriteString(" message_id=" + logValue(l.id))
		}
		// The error first: it is what a cut-off line must keep.
		for _, a := range l.attrs {
			if a.Key == "error" {
				b.WriteString(" " + a.Key + "=" + logValue(a.Value))
			}
		}
		for _, a := range l.attrs {
			if a.Key != "error" {
				b.WriteString(" " + a.Key + "=" + logValue(a.Value))
			}
		}
		if l.level == "ERROR" {
			out = append(out, m.styles.bad.Render(b.String()))
		} else {
			out = append(out, m.styles.warn.Render(b.String()))
		}
	}
	return out
}

// oneLine turns line breaks and tabs into spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// logValue quotes a value as slog's text handler would when it has spaces,
// quotes or an equals sign, or is empty.
func logValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"\t\n") {
		return strconv.Quote(v)
	}
	return v
}

// matches applies the filter.
// rateNow is the instant rates are measured at: the moment of the pause
// while paused, so the whole row stays frozen.
func (m Model) rateNow() time.Time {
	if m.paused {
		return m.pausedAt
	}
	return m.opt.Now()
}

// filterSet reports whether a filter is set.
func (m Model) filterSet() bool { return strings.TrimSpace(m.filter.Value()) != "" }

func (m Model) matches(fields ...string) bool {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	if f == "" {
		return true
	}
	for _, s := range fields {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

func (m Model) subLines() []string {
	w := m.width
	nameW := max(w-62, 8)
	out := []string{
		m.styles.section.Render("SUBSCRIPTIONS"),
		m.styles.header.Render(fmt.Sprintf("%-*s %7s %6s %6s %6s %5s %4s %4s %4s %6s", nameW, "NAME", "RECV/S", "RECV", "ACK", "DEFER", "REJ", "R", "M", "EFF", "DLQ")),
	}
	names := sortedKeys(m.subs)
	shown := 0
	for _, n := range names {
		s := m.subs[n]
		if !m.matches(n) {
			continue
		}
		t := s.counts
		if tt, ok := m.subTotals(n); ok {
			// /metrics counts everything since the consumer started, events
			// only what this dashboard saw: the last scrape plus the events
			// since it.
			t = tt
			t.Received += s.counts.Received - s.atScrape.Received
			t.Acknowledged += s.counts.Acknowledged - s.atScrape.Acknowledged
			t.Deferred += s.counts.Deferred - s.atScrape.Deferred
			t.Rejected += s.counts.Rejected - s.atScrape.Rejected
		}
		r, mm, eff := fmtLimit(s.budget), "-", fmtLimit(s.budget)
		if s.info != nil {
			if s.info.NativeLimit > 0 {
				mm = strconv.Itoa(s.info.NativeLimit)
			}
			eff = fmtLimit(s.info.EffectiveLimit)
		}
		dlq := "-"
		switch {
		case s.depthOK:
			dlq = strconv.FormatInt(s.depth, 10)
		case t.HasDLQDepth:
			dlq = strconv.FormatFloat(t.DLQDepth, 'f', 0, 64)
		}
		line := fmt.Sprintf("%-*s %7.1f %6.0f %6.0f %6.0f %5.0f %4s %4s %4s %6s", nameW, ansi.Truncate(n, nameW, "…"),
			s.rate(m.rateNow()), t.Received, t.Acknowledged, t.Deferred, t.Rejected, r, mm, eff, dlq)
		if t.Rejected > 0 {
			line = m.styles.warn.Render(line)
		}
		out = append(out, line)
		out = append(out, m.statusLines(s)...)
		shown++
	}
	if shown == 0 {
		msg := "waiting for events…"
		switch {
		case len(m.subs) > 0 && m.filterSet():
			msg = "no subscription matches the filter " + strconv.Quote(strings.TrimSpace(m.filter.Value()))
		case m.allUnreachable():
			msg = "no consumer reachable yet; still trying (see above)"
		}
		out = append(out, m.styles.dim.Render(msg))
	}
	return out
}

func fmtLimit(n int) string {
	if n < 0 {
		return "∞"
	}
	return strconv.Itoa(n)
}

// visibleMessages returns the filtered, sorted messages.
func (m Model) visibleMessages() []*msgState {
	out := make([]*msgState, 0, len(m.msgs))
	for _, ms := range m.msgs {
		if m.matches(ms.id, ms.sub, ms.reason, ms.state) {
			out = append(out, ms)
		}
	}
	slices.SortFunc(out, func(a, b *msgState) int {
		switch m.sort {
		case sortCount:
			if c := cmp.Compare(b.count, a.count); c != 0 {
				return c
			}
		case sortID:
			if c := cmp.Compare(a.id, b.id); c != 0 {
				return c
			}
			return cmp.Compare(a.sub, b.sub)
		}
		// In flight first, then most recently changed.
		if a.settled != b.settled {
			if a.settled {
				return 1
			}
			return -1
		}
		return cmp.Compare(b.seq, a.seq)
	})
	return out
}

func (m Model) visibleRejections() []rejection {
	var out []rejection
	for _, r := range m.rejections {
		if m.matches(r.id, r.sub, r.reason, r.route) {
			out = append(out, r)
		}
	}
	return out
}

// bar draws count against budget: "███░░ 3/5"; "3/∞" without a budget.
func (m Model) bar(count, budget int) string {
	if budget <= 0 {
		return fmt.Sprintf("%d/%s", count, fmtLimit(budget))
	}
	const cells = 10
	n := min(count*cells/budget, cells)
	if count > 0 && n == 0 {
		n = 1
	}
	full := strings.Repeat("█", n)
	empty := strings.Repeat("░", cells-n)
	style := m.styles.ok
	if count >= budget {
		style = m.styles.bad
	} else if count*2 >= budget {
		style = m.styles.warn
	}
	return style.Render(full) + m.styles.dim.Render(empty) + fmt.Sprintf(" %d/%d", count, budget)
}

func clampCursor(c, n int) int {
	if n == 0 {
		return 0
	}
	return min(max(c, 0), n-1)
}

// window returns the first index to show so that cursor is visible in rows.
func window(cursor, rows int) int {
	if cursor < rows {
		return 0
	}
	return cursor - rows + 1
}

func (m Model) marker(selected bool) string {
	if selected {
		return "›"
	}
	return " "
}

func (m Model) messageLines(h int) []string {
	msgs := m.visibleMessages()
	inFlight := 0
	for _, ms := range msgs {
		if !ms.settled {
			inFlight++
		}
	}
	title := fmt.Sprintf("MESSAGES · %d in flight · %d recently settled", inFlight, len(msgs)-inFlight)
	if m.focus == panelMessages {
		title += " ◂"
	}
	idW := max(m.width-60, 10)
	out := []string{
		m.styles.section.Render(title),
		m.styles.header.Render(fmt.Sprintf("  %-*s %-14s %-16s %-13s %s", idW, "MESSAGE ID", "SUBSCRIPTION", "COUNT/BUDGET", "STATE", "LAST")),
	}
	rows := h - 2
	cur := clampCursor(m.cursor[panelMessages], len(msgs))
	start := window(cur, rows)
	for i := start; i < len(msgs) && i < start+rows; i++ {
		ms := msgs[i]
		sel := i == cur && m.focus == panelMessages
		barPlain := ansi.Strip(m.bar(ms.count, ms.budget))
		pad := max(16-ansi.StringWidth(barPlain), 0)
		line := fmt.Sprintf("%s %-*s %-14s %s%s %-13s %s", m.marker(sel), idW, ansi.Truncate(ms.id, idW, "…"), ansi.Truncate(ms.sub, 14, "…"),
			m.bar(ms.count, ms.budget), strings.Repeat(" ", pad), ms.state, ms.updated.In(m.opt.Location).Format("15:04:05"))
		if sel {
			line = m.styles.selected.Render(ansi.Strip(line))
		}
		out = append(out, line)
	}
	if len(msgs) == 0 {
		if len(m.msgs) > 0 && m.filterSet() {
			out = append(out, m.styles.dim.Render("  no message matches the filter "+strconv.Quote(strings.TrimSpace(m.filter.Value()))))
		} else {
			out = append(out, m.styles.dim.Render("  no messages yet"))
		}
	}
	return out
}

func (m Model) rejectionLines(h int) []string {
	rs := m.visibleRejections()
	title := fmt.Sprintf("REJECTIONS · %d", len(rs))
	if m.focus == panelRejections {
		title += " ◂"
	}
	idW := max(m.width-66, 10)
	out := []string{
		m.styles.section.Render(title),
		m.styles.header.Render(fmt.Sprintf("  %-8s %-*s %5s %-14s %-15s %s", "TIME", idW, "MESSAGE ID", "COUNT", "REASON", "ROUTE", "DESTINATION")),
	}
	rows := h - 2
	cur := clampCursor(m.cursor[panelRejections], len(rs))
	start := window(cur, rows)
	for i := start; i < len(rs) && i < start+rows; i++ {
		r := rs[i]
		sel := i == cur && m.focus == panelRejections
		route := r.route
		if r.err != "" {
			route += " (failed)"
		}
		line := fmt.Sprintf("%s %-8s %-*s %5d %-14s %-15s %s", m.marker(sel), r.at.In(m.opt.Location).Format("15:04:05"), idW, ansi.Truncate(r.id, idW, "…"),
			r.count, r.reason, route, r.dest)
		switch {
		case sel:
			line = m.styles.selected.Render(line)
		case r.err != "":
			line = m.styles.bad.Render(line)
		}
		out = append(out, line)
	}
	if len(rs) == 0 {
		if len(m.rejections) > 0 && m.filterSet() {
			out = append(out, m.styles.dim.Render("  no rejection matches the filter "+strconv.Quote(strings.TrimSpace(m.filter.Value()))))
		} else {
			out = append(out, m.styles.dim.Render("  no rejections"))
		}
	}
	return out
}

func (m Model) detailLines() []string {
	type kv struct{ k, v string }
	var rows []kv
	var d *observe.MessageDetail
	title := "DETAILS"
	if m.focus == panelMessages {
		msgs := m.visibleMessages()
		if len(msgs) == 0 {
			return []string{m.styles.section.Render(title), "  nothing selected (esc to go back)"}
		}
		ms := msgs[clampCursor(m.cursor[panelMessages], len(msgs))]
		d = ms.detail
		title += " · message " + ms.id
		rows = append(rows, kv{"subscription", ms.sub}, kv{"delivery count", ansi.Strip(m.bar(ms.count, ms.budget))}, kv{"state", ms.state})
		if ms.reason != "" {
			rows = append(rows, kv{"rejected", ms.reason + " → " + ms.route + " " + ms.dest}, kv{"rejection message", ms.desc})
		}
	} else {
		rs := m.visibleRejections()
		if len(rs) == 0 {
			return []string{m.styles.section.Render(title), "  nothing selected (esc to go back)"}
		}
		r := rs[clampCursor(m.cursor[panelRejections], len(rs))]
		d = r.detail
		title += " · rejection of " + r.id
		rows = append(rows, kv{"subscription", r.sub}, kv{"delivery count", ansi.Strip(m.bar(r.count, r.budget))},
			kv{"reason", r.reason}, kv{"route", r.route + " " + r.dest}, kv{"rejection message", r.desc})
		if r.err != "" {
			rows = append(rows, kv{"routing error", r.err})
		}
	}
	if d != nil {
		rows = append(rows, kv{"topic", d.Topic}, kv{"message type", d.MessageType}, kv{"correlation id", d.CorrelationID},
			kv{"content type", d.ContentType}, kv{"partition key", d.PartitionKey}, kv{"traceparent", d.TraceParent})
		for _, k := range sortedKeys(d.Bag) {
			rows = append(rows, kv{"bag." + k, fmt.Sprint(d.Bag[k])})
		}
	}
	out := []string{m.styles.section.Render(title + " (esc to go back)")}
	for _, r := range rows {
		if r.v == "" {
			continue
		}
		out = append(out, fmt.Sprintf("  %-18s %s", r.k, r.v))
	}
	if d != nil {
		out = append(out, m.styles.section.Render(fmt.Sprintf("BODY · %d bytes", d.BodySize)))
		body := strings.ReplaceAll(d.BodyPreview, "\r", "")
		for _, l := range strings.Split(ansi.Wrap(body, m.width-4, ""), "\n") {
			out = append(out, "  "+l)
		}
	}
	return out
}

func (m Model) helpLines() []string {
	out := []string{m.styles.section.Render("KEYS (? or esc to close)")}
	for _, b := range m.keys.all() {
		h := b.Help()
		out = append(out, fmt.Sprintf("  %-12s %s", h.Key, h.Desc))
	}
	out = append(out, "",
		"  COUNT/BUDGET draws a message's delivery count against requeueCount (R):",
		"  at R the next Defer rejects it with DeliveryError to the dead-letter route.",
		"  M is the broker's native redrive limit; EFF the smaller of R and M.")
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// --- keys and styles ------------------------------------------------------

type keyMap struct {
	Filter, Sort, Pause, Details, Help, Quit, Tab, Up, Down, Back, Apply key.Binding
}

func defaultKeys() keyMap {
	return keyMap{
		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter by message id, subscription or reason")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort messages: recent, count, id")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause / resume (events wait while paused)")),
		Details: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "details: headers, bag, body preview")),
		Tab:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "switch between messages and rejections")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "move up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "move down")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close details or help, clear the filter")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Apply:   key.NewBinding(key.WithKeys("enter")),
	}
}

func (k keyMap) all() []key.Binding {
	return []key.Binding{k.Filter, k.Sort, k.Pause, k.Details, k.Tab, k.Up, k.Down, k.Back, k.Help, k.Quit}
}

type styles struct {
	title, section, header, ok, warn, bad, dim, selected lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		p := lipgloss.NewStyle()
		return styles{p, p, p, p, p, p, p, p}
	}
	return styles{
		title:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		section:  lipgloss.NewStyle().Bold(true),
		header:   lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		ok:       lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		bad:      lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		selected: lipgloss.NewStyle().Reverse(true),
	}
}

func plainInputStyles() textinput.Styles {
	s := textinput.DefaultStyles(true)
	p := lipgloss.NewStyle()
	s.Focused = textinput.StyleState{Text: p, Placeholder: p, Suggestion: p, Prompt: p}
	s.Blurred = s.Focused
	s.Cursor.Color = nil
	s.Cursor.Blink = false
	return s
}
