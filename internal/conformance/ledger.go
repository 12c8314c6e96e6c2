package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/brightergo/brighter/internal/pump"
)

// Behaviour is one row of the ledger.
type Behaviour struct {
	// ID is the row's stable id, e.g. "AC-3".
	ID string
	// Requirements names the requirements it proves, e.g. "R-4".
	Requirements string
	// Title says what is checked.
	Title string
	// Kind says what a cell of the row runs: KindPump rows drive a real
	// pump and have one cell per variant; KindConsumer rows call the
	// transport's consumer directly, with no pump, and have one cell per
	// configuration (a cell per variant would claim a variant
	// the row never runs).
	Kind Kind
}

// Kind is what a ledger row's cells run.
type Kind int

// Row kinds.
const (
	// KindPump rows run a pump of the column's variant over the emulator.
	KindPump Kind = iota
	// KindConsumer rows run consumer calls over the emulator, no pump.
	KindConsumer
)

// Behaviours lists the ledger's rows in order.
var Behaviours = []Behaviour{
	{"AC-1", "R-1", "counts strictly increase across requeues (budget -1)", KindPump},
	{"AC-2", "R-2", "first delivery presents 0; the acknowledged message is not delivered again past its lease", KindPump},
	{"AC-3", "R-4", "budget 3: at most 3 handler invocations, exactly one DeliveryError rejection", KindPump},
	{"AC-4", "R-5", "the dead-letter copy carries the five keys with their values (reason, type, non-empty message, parseable timestamp, source topic) and a count >= R-1", KindPump},
	{"AC-41", "R-28", "the dead-letter copy, read twice through the ordinary consumer whose own delivery counter advances, presents its stamped count both times", KindPump},
	{"AC-5", "R-6", "budget -1: more than 3 invocations, nothing dead-lettered", KindPump},
	{"AC-6/AC-35", "R-7", "budgets 1, 0 and -3: one invocation, no requeue, rejected", KindPump},
	{"AC-8", "R-8", "budget 3 under a native limit of 5: Brighter's route fires once, the source never redelivers past its lease, native target empty", KindPump},
	{"AC-9", "R-8, R-9", "budget 10 over a native limit of 3: native target, no metadata", KindPump},
	{"R-16/unacceptable", "R-16", "Unacceptable routes to the invalid-message channel", KindPump},
	{"R-16/fallback", "R-16", "Unacceptable with no invalid-message channel routes to the dead-letter queue", KindPump},
	{"R-17", "R-17", "no destination: one Warn record with the text, the message id and the reason; acknowledged (not redelivered past its lease)", KindPump},
	{"R-19", "R-19", "dead-letter destination missing: Error, released, redelivered", KindPump},
	// Pub/Sub-specific rows (gcp_test.go).
	{"AC-16", "R-16", "Unacceptable with no invalidMessageRoutingKey reaches the dead-letter topic", KindPump},
	{"AC-17", "R-17", "neither routing key: one Warn record naming the id and Unacceptable; acknowledged (not redelivered past its lease)", KindPump},
	{"AC-18", "R-19", "routing topic missing and not created: Error, released, redelivered within 10 s, topic still absent", KindPump},
	{"AC-43", "R-19, R-4, A-6", "routing keeps failing: the DeadLetterPolicy (5) ends the loop, copy without metadata; the handler ran no more than the budget's 3 times", KindPump},
	{"AC-11", "R-11, R-26", "no DeadLetterPolicy: exactly one channel-creation Warning however many messages; a deferring handler past the budget is never rejected (the budget is inert)", KindPump},
	// Consumer-level rows: no pump, one cell per configuration.
	{"AC-42", "R-1", "a lease lapse with no requeue presents a greater count", KindConsumer},
	{"R-16/none", "R-16", "reason None routes to the dead-letter queue", KindConsumer},
	{"AC-15", "R-16, R-18", "Reject with Unacceptable, DeliveryError, None: right topic, metadata keys, no ReceiptHandle, source empty past its lease", KindConsumer},
	{"AC-39", "R-13, A-2", "delivery_attempt on three deliveries recorded (measurement)", KindConsumer},
}

// behaviour returns the row with id, and whether there is one.
func behaviour(id string) (Behaviour, bool) {
	i := slices.IndexFunc(Behaviours, func(b Behaviour) bool { return b.ID == id })
	if i < 0 {
		return Behaviour{}, false
	}
	return Behaviours[i], true
}

// DeferringFixture is a Fixture that cannot run some behaviours honestly on
// its broker or emulator (for example a native limit below the broker's
// minimum). Ledger.Run records those cells as Deferred with the reason
// instead of running them.
type DeferringFixture interface {
	Fixture
	// Deferred returns the reason the behaviour is deferred, and true, or
	// "", false when it runs.
	Deferred(behaviour string) (reason string, ok bool)
}

// Status of a cell.
type Status string

// Cell statuses.
const (
	Pass     Status = "Pass"
	Fail     Status = "Fail"
	Deferred Status = "Deferred"
	// Skip is a cell whose test called t.Skip: it proved nothing, and
	// TestMain fails the run when any cell is Skip.
	Skip Status = "Skip"
)

type cellKey struct {
	behaviour, transport, configuration string
	variant                             pump.Variant
}

type cell struct {
	status Status
	reason string
}

// Ledger collects the outcome of every cell run in this test binary and
// renders docs/conformance.md.
type Ledger struct {
	slots   chan struct{} // bounds the rows running at once (Group)
	mu      sync.Mutex
	cells   map[cellKey]cell
	configs map[string][]string // transport -> configurations in first-seen order
	notes   map[string][]string // transport -> paragraphs
}

// registerRows adds the rows of one area's file to Behaviours after the
// rows every transport runs, before the first Pub/Sub-specific one (AC-16),
// in the order the files' init functions run (file name order).
func registerRows(rows ...Behaviour) {
	at := len(Behaviours)
	for i, b := range Behaviours {
		if b.ID == "AC-16" {
			at = i
			break
		}
	}
	Behaviours = slices.Insert(Behaviours, at, rows...)
}

// NewLedger makes an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{slots: make(chan struct{}, concurrentRows), cells: map[cellKey]cell{}, configs: map[string][]string{}, notes: map[string][]string{}}
}

// concurrentRows is how many rows of one ledger run at once. Rows mostly
// wait on broker clocks (leases, quiet windows), so running them in series
// made the suite as long as the sum of its windows; more at once than this
// loads a two-core machine until lease timings suffer.
const concurrentRows = 24

// Group runs rows concurrently: each Run, RunConsumer or Go starts at once
// in its own goroutine when one of the ledger's slots is free, and Wait
// returns when all have ended. Rows that depend on each other go in series
// inside one Go. The subtests keep their names (t.Run may be called from
// several goroutines), so -run patterns select them as before.
type Group struct {
	l  *Ledger
	wg sync.WaitGroup
}

// Group makes an empty group of l's rows.
func (l *Ledger) Group() *Group { return &Group{l: l} }

// Go runs fn, which declares rows with the Ledger's Run and RunConsumer in
// series, in a slot of its own.
func (g *Group) Go(fn func()) {
	g.wg.Go(func() {
		g.l.slots <- struct{}{}
		defer func() { <-g.l.slots }()
		fn()
	})
}

// Run is Ledger.Run in a slot of its own.
func (g *Group) Run(t *testing.T, id string, f Fixture, v pump.Variant, fn func(t *testing.T)) {
	g.Go(func() { g.l.Run(t, id, f, v, fn) })
}

// RunConsumer is Ledger.RunConsumer in a slot of its own.
func (g *Group) RunConsumer(t *testing.T, id string, f Fixture, fn func(t *testing.T)) {
	g.Go(func() { g.l.RunConsumer(t, id, f, fn) })
}

// Wait returns when every row started in g has ended. Call it before the
// test that declared them returns.
func (g *Group) Wait() { g.wg.Wait() }

func (l *Ledger) addConfig(transport, configuration string) {
	if !slices.Contains(l.configs[transport], configuration) {
		l.configs[transport] = append(l.configs[transport], configuration)
	}
}

// Run runs fn as the subtest "<behaviour>" and records Pass, Fail or Skip
// for the cell (behaviour, fixture, variant). A DeferringFixture's deferred
// behaviours are recorded as Deferred without running. A KindConsumer row is
// run with RunConsumer instead; Run fails the test for one (and for an
// unknown row).
func (l *Ledger) Run(t *testing.T, id string, f Fixture, v pump.Variant, fn func(t *testing.T)) {
	t.Helper()
	if b, ok := behaviour(id); !ok || b.Kind != KindPump {
		t.Errorf("ledger: %s is not a pump row of Behaviours", id)
		return
	}
	l.run(t, id, f, v, fn)
}

// RunConsumer runs a KindConsumer row once per configuration (no variant:
// no pump runs) and records its cell.
func (l *Ledger) RunConsumer(t *testing.T, id string, f Fixture, fn func(t *testing.T)) {
	t.Helper()
	if b, ok := behaviour(id); !ok || b.Kind != KindConsumer {
		t.Errorf("ledger: %s is not a consumer row of Behaviours", id)
		return
	}
	l.run(t, id, f, "", fn)
}

func (l *Ledger) run(t *testing.T, id string, f Fixture, v pump.Variant, fn func(t *testing.T)) {
	t.Helper()
	if df, ok := f.(DeferringFixture); ok {
		if reason, ok := df.Deferred(id); ok {
			l.Defer(id, f, v, reason)
			return
		}
	}
	name := strings.NewReplacer("/", "_", "-", "").Replace(id)
	skipped := false
	ok := t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		fn(t)
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addConfig(f.Transport(), f.Configuration())
	st := Pass
	switch {
	case skipped:
		st = Skip
	case !ok:
		st = Fail
	}
	l.cells[cellKey{id, f.Transport(), f.Configuration(), v}] = cell{status: st}
}

// Skipped lists the cells recorded as Skip, as "transport configuration
// variant behaviour".
func (l *Ledger) Skipped() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k, c := range l.cells {
		if c.status == Skip {
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", k.transport, k.configuration, k.variant, k.behaviour)))
		}
	}
	sort.Strings(out)
	return out
}

// Defer records a Deferred cell with its reason.
func (l *Ledger) Defer(behaviour string, f Fixture, v pump.Variant, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addConfig(f.Transport(), f.Configuration())
	l.cells[cellKey{behaviour, f.Transport(), f.Configuration(), v}] = cell{status: Deferred, reason: reason}
}

// Note adds a paragraph under the transport's table.
func (l *Ledger) Note(transport, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.notes[transport], text) {
		l.notes[transport] = append(l.notes[transport], text)
	}
}

// configOrder is the ledger's column order (the nine configurations of
// docs/requirements.md); any other configuration sorts after them by name.
var configOrder = []string{"SqsStandard", "SqsFifo", "SnsStandard", "SnsFifo", "Pull", "PullOrdering", "Stream", "StreamOrdering", "RocketMq"}

func configRank(c string) string {
	if i := slices.Index(configOrder, c); i >= 0 {
		return fmt.Sprintf("%02d", i)
	}
	return "99" + c
}

// Render returns docs/conformance.md: per transport, a table of the pump
// rows (columns = configuration x variant) and a table of the consumer rows
// (columns = configuration). Transports are sorted by name; a cell never run
// is shown as "-".
func (l *Ledger) Render() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	b.WriteString("# Conformance ledger\n\n")
	b.WriteString("Generated by `go test ./internal/conformance` (set `BRIGHTER_UPDATE_LEDGER=1` to rewrite it; a test fails when this file is not current).\n\n")
	b.WriteString("What a cell means:\n\n")
	b.WriteString("- **Pump rows** (first table of each transport): the behaviour ran a real pump of that variant (R = Reactor, P = Proactor) over the transport's emulator or test broker, through a recording consumer that exposes exactly the optional capabilities of the transport's consumer (batch acknowledgement, concurrent receive, lease extension), so the pump takes its production paths. Reactor cells run one performer with a buffer of 1; Proactor cells run the production scale of several performers (3) with a buffer of 10.\n")
	b.WriteString("- **Consumer rows** (second table): the behaviour calls the transport's consumer directly with no pump, so it has one cell per configuration, not one per variant.\n")
	b.WriteString("- Pass: every assertion of the behaviour held. Fail: one did not. Deferred: not run, for the reason listed under Deferred cells. Skip: the test skipped; a run with any Skip cell fails.\n")
	b.WriteString("- Negative checks (\"not redelivered\", \"source empty\") watch for longer than the channel's lease plus any client-side lease extension, so a message left unacknowledged would have come back inside the window.\n")
	transports := make([]string, 0, len(l.configs))
	for tr := range l.configs {
		transports = append(transports, tr)
	}
	sort.Strings(transports)
	var deferred []string
	renderCell := func(tr, c, id string, v pump.Variant) {
		ce, ok := l.cells[cellKey{id, tr, c, v}]
		switch {
		case !ok:
			b.WriteString(" - |")
		case ce.status == Deferred:
			b.WriteString(" Deferred |")
			where := strings.TrimSpace(fmt.Sprintf("%s %s %s", tr, c, v))
			deferred = append(deferred, fmt.Sprintf("- %s %s: %s", where, id, ce.reason))
		default:
			fmt.Fprintf(&b, " %s |", ce.status)
		}
	}
	for _, tr := range transports {
		cols := slices.Clone(l.configs[tr])
		sort.SliceStable(cols, func(i, j int) bool { return configRank(cols[i]) < configRank(cols[j]) })
		fmt.Fprintf(&b, "\n## %s\n\n### Pump rows\n\n| behaviour | requirement |", tr)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s R | %s P |", c, c)
		}
		b.WriteString("\n|---|---|")
		for range cols {
			b.WriteString("---|---|")
		}
		b.WriteString("\n")
		consumerRows := 0
		for _, bh := range Behaviours {
			if bh.Kind != KindPump {
				consumerRows++
				continue
			}
			if !l.hasRow(tr, bh.ID) {
				continue
			}
			fmt.Fprintf(&b, "| %s %s | %s |", bh.ID, bh.Title, bh.Requirements)
			for _, c := range cols {
				for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
					renderCell(tr, c, bh.ID, v)
				}
			}
			b.WriteString("\n")
		}
		if consumerRows > 0 {
			b.WriteString("\n### Consumer rows (no pump)\n\n| behaviour | requirement |")
			for _, c := range cols {
				fmt.Fprintf(&b, " %s consumer |", c)
			}
			b.WriteString("\n|---|---|")
			for range cols {
				b.WriteString("---|")
			}
			b.WriteString("\n")
			for _, bh := range Behaviours {
				if bh.Kind != KindConsumer || !l.hasRow(tr, bh.ID) {
					continue
				}
				fmt.Fprintf(&b, "| %s %s | %s |", bh.ID, bh.Title, bh.Requirements)
				for _, c := range cols {
					renderCell(tr, c, bh.ID, "")
				}
				b.WriteString("\n")
			}
		}
		for _, n := range l.notes[tr] {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
	}
	if len(deferred) > 0 {
		b.WriteString("\n## Deferred cells\n\n")
		b.WriteString(strings.Join(deferred, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// hasRow reports whether any cell of the row was recorded for the
// transport (transport-specific rows appear only in their transport's
// table).
func (l *Ledger) hasRow(transport, id string) bool {
	for k := range l.cells {
		if k.transport == transport && k.behaviour == id {
			return true
		}
	}
	return false
}

// Markers of the mutation-check table in docs/conformance.md: `make
// mutants` (internal/conformance/mutants) writes what lies between them,
// and the ledger keeps it when it regenerates the file.
const (
	mutantsBegin = "<!-- mutants:begin -->"
	mutantsEnd   = "<!-- mutants:end -->"
)

// MutantsSection returns the ledger's closing section: the mutation-check
// table as committed (between the markers), or a placeholder when doc has
// none yet.
func MutantsSection(doc string) string {
	body := mutantsBegin + "\nNot recorded yet: run `make mutants`.\n" + mutantsEnd + "\n"
	i, j := strings.Index(doc, mutantsBegin), strings.Index(doc, mutantsEnd)
	if i >= 0 && j > i {
		body = doc[i:j+len(mutantsEnd)] + "\n"
	}
	return "\n## Mutation check of the suite\n\n" +
		"`make mutants` applies each deliberate bug of internal/conformance/mutants (a catalogue per layer: conformance, pump, transports, dlq, handlers, config) alone to a copy of the tree and runs the tests named for it; every mutant must be killed (a test fails). `make test` runs the mutants marked CI. A mutant whose tests are not the conformance cells mutates what no row can observe (an exec handler's process group, the stall clock, signals, lint, a log line, SNS's size limit, which no routed copy meets); docs/adr/0001-delivery-count-contract.md §10.1 says why for each of those of an exhausted delivery.\n\n" + body
}
