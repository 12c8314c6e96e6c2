package pump

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// ceilingConsumer is a memory consumer whose broker, like SQS, holds a
// message at most hold from its receive (broker.LeaseCeiling), and which
// records the extensions asked of it (each succeeds) instead of making them:
// the schedule is driven by an injected clock, hours in a moment.
type ceilingConsumer struct {
	*memory.Consumer
	hold  time.Duration
	calls []time.Duration // each call's d
}

func (c *ceilingConsumer) MaxHold() time.Duration { return c.hold }

func (c *ceilingConsumer) ExtendLeases(_ context.Context, ms []*message.Message, d time.Duration) []error {
	c.calls = append(c.calls, d)
	return make([]error, len(ms))
}

var _ broker.LeaseCeiling = (*ceilingConsumer)(nil)

// TestLeaseExtensionStopsAtTheSQSCeiling: with maxLeaseExtension
// past SQS's 12 hours from the receive, the pump extends a held message's
// lease up to (a margin short of) 12 hours from its receive and no further,
// reports the ceiling once (one lease-capped event naming it, one Warning),
// makes no extension call the broker would refuse, and the lease then
// lapses. The clock is injected: each tick is a call of extendDue with the
// time it would run at.
func TestLeaseExtensionStopsAtTheSQSCeiling(t *testing.T) {
	const lease = 30 * time.Minute
	const hold = 12 * time.Hour
	c := &ceilingConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease}), hold: hold}
	var events []Event
	l := newLeases(c, 24*time.Hour, func(e Event) { events = append(events, e) })
	if l == nil {
		t.Fatal("no lease tracker")
	}
	m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "held"}}
	h := l.hold([]*message.Message{m})
	received := l.base.Add(h.b.received)
	tick := l.tick()
	var ends []time.Duration // each extension's lease end, from the receive
	for now := received; now.Sub(received) < 14*time.Hour; now = now.Add(tick) {
		before := len(c.calls)
		l.extendDue(t.Context(), now)
		if len(c.calls) > before {
			ends = append(ends, now.Sub(received)+c.calls[len(c.calls)-1])
		}
	}
	if len(ends) == 0 {
		t.Fatal("no lease was extended")
	}
	for _, end := range ends {
		if end > hold {
			t.Fatalf("an extension asked for the lease to end %s after the receive, past the %s ceiling (SQS refuses it)", end, hold)
		}
	}
	if last := ends[len(ends)-1]; last < hold-lease-leaseCeilingMargin {
		t.Errorf("the last extension ends %s after the receive: stopped more than a lease short of the %s ceiling", last, hold)
	}
	var capped []Event
	for _, e := range events {
		if e.Kind == EventLeaseCapped {
			capped = append(capped, e)
		}
		if e.Kind == EventLeaseExtendFailed {
			t.Errorf("an extension failed: %v", e.Err)
		}
	}
	if len(capped) != 1 || capped[0].Ceiling != hold || capped[0].MessageID() != "held" {
		t.Fatalf("lease-capped events %+v, want exactly one naming the %s ceiling", capped, hold)
	}
	// One Warning, not an Error per tick.
	var logs strings.Builder
	obs := LogObserver{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, e := range events {
		obs.Observe(e)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\""+LogLeaseCeiling); n != 1 || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("logs:\n%s\nwant exactly one Warning %q and no Error", logs.String(), LogLeaseCeiling)
	}
	if !l.lapsed(h.at(0), received.Add(hold)) {
		t.Fatal("the lease had not lapsed at the ceiling")
	}
}

// TestLeaseCeilingLeavesShorterCapsAlone: maxLeaseExtension that
// stays within the ceiling is kept, and its cap is reported as before.
func TestLeaseCeilingLeavesShorterCapsAlone(t *testing.T) {
	c := &ceilingConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: time.Minute}), hold: 12 * time.Hour}
	l := newLeases(c, time.Hour, func(Event) {})
	if l.maxExt != time.Hour || l.ceiling != 0 {
		t.Fatalf("maxExt %s ceiling %s, want 1h and none", l.maxExt, l.ceiling)
	}
	l = newLeases(c, 13*time.Hour, func(Event) {})
	if want := 12*time.Hour - leaseCeilingMargin - time.Minute; l.maxExt != want || l.ceiling != 12*time.Hour {
		t.Fatalf("maxExt %s ceiling %s, want %s and 12h", l.maxExt, l.ceiling, want)
	}
}
