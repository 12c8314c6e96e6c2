package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowLeaseCeiling is the row of a broker's ceiling on holding a
// message (SQS: 12 hours of visibility from the receive).
const rowLeaseCeiling = "R-4/lease-ceiling"

// ceilingBehaviours are the ceiling rows.
var ceilingBehaviours = []Behaviour{
	{rowLeaseCeiling, "R-4, ADR 0005", "lease extension stops short of the broker's ceiling on holding a message (SQS: 12 h from the receive, shortened by the fixture to 70 s) with one Warn, never an extension past it nor an Error per tick; maxLeaseExtension is past the ceiling", KindPump},
}

// ceilingFixture is implemented by fixtures whose broker keeps a received
// message from other consumers for a bounded time however often its lease
// is extended (broker.LeaseCeiling), and which honour Setup.HoldCeiling.
type ceilingFixture interface{ HoldsToACeiling() bool }

// The shape of the ceiling row: the pump stops limits.CeilingMargin short of
// the ceiling, so a ceiling of the margin + the lease + ceilingReach leaves
// the pump ceilingReach of extensions (three at a 4 s lease).
const (
	ceilingReach = 6 * time.Second
	// ceilingMaxExtension is the row's maxLeaseExtension: past the
	// shortened ceiling, so the ceiling, not it, must stop the extensions.
	ceilingMaxExtension = 40 * time.Second
)

// runCeiling runs the ceiling row over a fixture whose broker has a
// ceiling, in variant v (RunRows calls it; other fixtures have no cell).
func runCeiling(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if cf, ok := f.(ceilingFixture); !ok || !cf.HoldsToACeiling() {
		return
	}
	g.Run(t, rowLeaseCeiling, f, v, func(t *testing.T) {
		ceiling := limits.CeilingMargin + conformanceLease + ceilingReach
		logger, logs := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: conformanceLease, HoldCeiling: ceiling, Logger: logger})
		id := uniqueID(t)
		rec := NewRecordingConsumer(ch.Consumer(t, 1))
		var extends atomic.Int64
		capped := make(chan pump.Event, 4)
		obs := pump.ObserverFunc(func(e pump.Event) {
			switch e.Kind {
			case pump.EventLeaseExtended:
				extends.Add(1)
			case pump.EventLeaseCapped:
				select {
				case capped <- e:
				default:
				}
			}
		})
		var handled atomic.Int64
		// The handler holds its message until the pump stops extending its
		// lease (at most twice the ceiling's reach from the mutant's view:
		// then the row fails on the missing Warn), then acknowledges it.
		h := func(ctx context.Context, m *message.Message) pump.Result {
			if m.OriginalID() != id || handled.Add(1) > 1 {
				return pump.Result{Outcome: pump.Ack}
			}
			select {
			case <-capped:
			case <-time.After(2*(conformanceLease+ceilingReach) + waitShort):
			case <-ctx.Done():
			}
			return pump.Result{Outcome: pump.Ack}
		}
		ch.Send(t, newMessage(f, id))
		opts := pumpOptions(v, -1)
		opts.BufferSize, opts.NoOfPerformers = 1, 1
		opts.MaxLeaseExtension = ceilingMaxExtension
		running := Start(t, rec.View(t), h, opts, pump.LogObserver{Logger: logger}, obs)
		polltest.Until(t, waitLong, "the message acknowledged", func() bool { return rec.Acks(id) >= 1 })
		running.Quit(t)
		out := logs.String()
		warns := 0
		for line := range strings.Lines(out) {
			if strings.Contains(line, pump.LogLeaseCeiling) {
				warns++
				if !strings.Contains(line, `"level":"WARN"`) || !strings.Contains(line, id) || !strings.Contains(line, fmt.Sprintf(`"ceiling":%d`, ceiling)) {
					t.Errorf("ceiling record %q, want a Warn naming %s and the %s ceiling", strings.TrimSpace(line), id, ceiling)
				}
			}
		}
		if warns != 1 {
			t.Errorf("%d %q records, want exactly one (the pump stops extending short of the %s ceiling, once)", warns, pump.LogLeaseCeiling, ceiling)
		}
		if strings.Contains(out, `"level":"ERROR"`) {
			t.Errorf("an Error was logged; an extension SQS would refuse must never be asked for:\n%s", out)
		}
		if extends.Load() < 2 {
			t.Errorf("%d lease extensions, want at least 2 before the ceiling (lease %s, ceiling %s)", extends.Load(), conformanceLease, ceiling)
		}
		if t.Failed() {
			t.Logf("logs:\n%s", out)
		}
	})
}

// init registers the ceiling row after the rows every transport runs.
func init() { registerRows(ceilingBehaviours...) }
