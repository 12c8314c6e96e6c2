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
}

// Behaviours lists the ledger's rows in order.
var Behaviours = []Behaviour{
	{"AC-1", "R-1", "counts strictly increase across requeues (budget -1)"},
	{"AC-2", "R-2", "first delivery presents 0"},
	{"AC-42", "R-1", "a lease lapse with no requeue presents a greater count"},
	{"AC-3", "R-4", "budget 3: at most 3 handler invocations, exactly one DeliveryError rejection"},
	{"AC-4", "R-5", "the dead-letter copy carries the five keys and a count >= R-1"},
	{"AC-41", "R-28", "the dead-letter copy read through the ordinary consumer presents its stamped count, twice"},
	{"AC-5", "R-6", "budget -1: more than 3 invocations, nothing dead-lettered"},
	{"AC-6/AC-35", "R-7", "budgets 1, 0 and -3: one invocation, no requeue, rejected"},
	{"AC-8", "R-8", "budget 3 under a native limit of 5: Brighter's route fires, native target empty"},
	{"AC-9", "R-8, R-9", "budget 10 over a native limit of 3: native target, no metadata"},
	{"R-16/unacceptable", "R-16", "Unacceptable routes to the invalid-message channel"},
	{"R-16/fallback", "R-16", "Unacceptable with no invalid-message channel routes to the dead-letter queue"},
	{"R-16/none", "R-16", "reason None routes to the dead-letter queue"},
	{"R-17", "R-17", "no destination: acknowledged with a Warning naming id and reason"},
	{"R-19", "R-19", "dead-letter destination missing: Error, released, redelivered"},
	// Pub/Sub-specific rows (gcp_test.go).
	{"AC-14", "R-15", "a gcp subscription's deadLetterRoutingKey and invalidMessageRoutingKey read back"},
	{"AC-15", "R-16, R-18", "Reject with Unacceptable, DeliveryError, None: right topic, metadata keys, no ReceiptHandle, source empty"},
	{"AC-16", "R-16", "Unacceptable with no invalidMessageRoutingKey reaches the dead-letter topic"},
	{"AC-17", "R-17", "neither routing key: Warning naming the id and Unacceptable, source empty"},
	{"AC-18", "R-19", "routing topic missing and not created: Error, released, redelivered within 10 s, topic still absent"},
	{"AC-43", "R-19, R-4, A-6", "routing keeps failing: the DeadLetterPolicy (5) ends the loop, copy without metadata"},
	{"AC-11", "R-11, R-26", "no DeadLetterPolicy: exactly one channel-creation Warning however many messages"},
	{"AC-39", "R-13, A-2", "delivery_attempt on three deliveries recorded (measurement)"},
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
	mu      sync.Mutex
	cells   map[cellKey]cell
	configs map[string][]string // transport -> configurations in first-seen order
	notes   map[string][]string // transport -> paragraphs
}

// NewLedger makes an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{cells: map[cellKey]cell{}, configs: map[string][]string{}, notes: map[string][]string{}}
}

func (l *Ledger) addConfig(transport, configuration string) {
	if !slices.Contains(l.configs[transport], configuration) {
		l.configs[transport] = append(l.configs[transport], configuration)
	}
}

// Run runs fn as the subtest "<behaviour>" and records Pass or Fail for the
// cell (behaviour, fixture, variant). A DeferringFixture's deferred
// behaviours are recorded as Deferred without running.
func (l *Ledger) Run(t *testing.T, behaviour string, f Fixture, v pump.Variant, fn func(t *testing.T)) {
	t.Helper()
	if df, ok := f.(DeferringFixture); ok {
		if reason, ok := df.Deferred(behaviour); ok {
			l.Defer(behaviour, f, v, reason)
			return
		}
	}
	name := strings.NewReplacer("/", "_", "-", "").Replace(behaviour)
	ok := t.Run(name, fn)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addConfig(f.Transport(), f.Configuration())
	st := Pass
	if !ok {
		st = Fail
	}
	l.cells[cellKey{behaviour, f.Transport(), f.Configuration(), v}] = cell{status: st}
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

// configOrder is the ledger's column order (GO-MAPPING's nine
// configurations); any other configuration sorts after them by name.
var configOrder = []string{"SqsStandard", "SqsFifo", "SnsStandard", "SnsFifo", "Pull", "PullOrdering", "Stream", "StreamOrdering", "RocketMq"}

func configRank(c string) string {
	if i := slices.Index(configOrder, c); i >= 0 {
		return fmt.Sprintf("%02d", i)
	}
	return "99" + c
}

// Render returns docs/conformance.md: one table per transport, rows =
// behaviours, columns = configuration x variant. Transports are sorted by
// name; a cell never run is shown as "-".
func (l *Ledger) Render() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	b.WriteString("# Conformance ledger\n\n")
	b.WriteString("Generated by `go test ./internal/conformance` (set `BRIGHTER_UPDATE_LEDGER=1` to rewrite it; a test fails when this file is not current).\n")
	b.WriteString("Each cell is the result of running the behaviour against the transport's emulator or test broker in that pump variant: R = Reactor, P = Proactor.\n")
	transports := make([]string, 0, len(l.configs))
	for tr := range l.configs {
		transports = append(transports, tr)
	}
	sort.Strings(transports)
	var deferred []string
	for _, tr := range transports {
		fmt.Fprintf(&b, "\n## %s\n\n| behaviour | requirement |", tr)
		cols := slices.Clone(l.configs[tr])
		sort.SliceStable(cols, func(i, j int) bool { return configRank(cols[i]) < configRank(cols[j]) })
		for _, c := range cols {
			fmt.Fprintf(&b, " %s R | %s P |", c, c)
		}
		b.WriteString("\n|---|---|")
		for range cols {
			b.WriteString("---|---|")
		}
		b.WriteString("\n")
		for _, bh := range Behaviours {
			fmt.Fprintf(&b, "| %s %s | %s |", bh.ID, bh.Title, bh.Requirements)
			for _, c := range cols {
				for _, v := range []pump.Variant{pump.Reactor, pump.Proactor} {
					ce, ok := l.cells[cellKey{bh.ID, tr, c, v}]
					switch {
					case !ok:
						b.WriteString(" - |")
					case ce.status == Deferred:
						b.WriteString(" Deferred |")
						deferred = append(deferred, fmt.Sprintf("- %s %s %s %s: %s", tr, c, v, bh.ID, ce.reason))
					default:
						fmt.Fprintf(&b, " %s |", ce.status)
					}
				}
			}
			b.WriteString("\n")
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
