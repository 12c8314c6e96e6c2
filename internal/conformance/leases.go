package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// The lease rows: a message the pump holds keeps its lease until it is
// settled (docs/adr/0005-leases.md).
var leaseBehaviours = []Behaviour{
	{"R-4/lease-overrun", "R-4, R-5", "handling longer than the lease (bufferSize 2): at most R invocations, exactly one DeliveryError rejection, one dead-letter copy, source empty", KindPump},
	{"R-4/slow-ack", "R-4", "an acknowledging handler slower than the lease handles each message once", KindPump},
}

// conformanceLease is the lease of the lease rows: short, so the rows stay
// quick; the handlers take 5/4 of it. The pump extends a lease at half of
// it, so the extension has lease/2 to reach the broker: 1 s at a 2 s lease
// was too little on a loaded machine (R-4/lease-overrun failed on RocketMQ
// under load), 2 s is not.
const conformanceLease = 4 * time.Second

// leaseHolder is a channel that knows the lease its broker grants (the
// Pub/Sub fixture: the ack deadline after Pub/Sub's 10 s minimum).
type leaseHolder interface{ Lease() time.Duration }

// leaseOf is the lease a message received from c on ch is held for: the
// consumer's own (broker.LeaseExtender), else the channel's (leaseHolder),
// else the channel's redelivery bound. The rows' handlers take 5/4 of it,
// so they are slower than the lease the broker really grants (Pub/Sub
// raises conformanceLease to 10 s).
func leaseOf(ch Channel, c broker.Consumer) time.Duration {
	if le, ok := c.(broker.LeaseExtender); ok {
		return le.Lease()
	}
	if lh, ok := ch.(leaseHolder); ok {
		return lh.Lease()
	}
	return ch.RedeliveryBound()
}

// leaseExtension is the MaxExtension the lease rows give a client that
// extends leases on its own (Pub/Sub stream): longer than a row holds one
// message (a wait in the buffer behind one handling, then its own, 5/4 of
// a 10 s lease each), so the client, not a lapse, decides.
const leaseExtension = 45 * time.Second

// lateLeases counts the lease events that show an extension came too late
// (failed, or the lease lapsed first); on a failed row it says so, since
// on a loaded machine that, not the code, is the usual cause.
type lateLeases struct{ failed, lapsed atomic.Int64 }

func (l *lateLeases) Observe(e pump.Event) {
	switch e.Kind {
	case pump.EventLeaseExtendFailed:
		l.failed.Add(1)
	case pump.EventLeaseLapsed:
		l.lapsed.Add(1)
	}
}

// explainOnFailure makes a failed t log how many extensions failed and
// leases lapsed during the row.
func (l *lateLeases) explainOnFailure(t *testing.T, lease time.Duration) {
	t.Cleanup(func() {
		if t.Failed() && l.failed.Load()+l.lapsed.Load() > 0 {
			t.Logf("%d lease extensions failed and %d leases lapsed before their extension (lease %s, extended at half of it): on a loaded machine an extension can come too late; rerun before blaming the code",
				l.failed.Load(), l.lapsed.Load(), lease)
		}
	})
}

// rejections counts the pump's rejections by original message id.
type rejections struct {
	mu sync.Mutex
	by map[string][]pump.Event
}

func (r *rejections) Observe(e pump.Event) {
	if e.Kind != pump.EventRejected || e.Message == nil {
		return
	}
	r.mu.Lock()
	if r.by == nil {
		r.by = map[string][]pump.Event{}
	}
	r.by[e.Message.OriginalID()] = append(r.by[e.Message.OriginalID()], e)
	r.mu.Unlock()
}

func (r *rejections) of(id string) []pump.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.by[id])
}

// sleepCtx waits d or until ctx is done (the handler's simulated work).
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runLeases runs the lease rows over f in variant v (RunAll calls it).
func runLeases(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	const msgs, budget = 2, 2
	g.Run(t, "R-4/lease-overrun", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: budget, DeadLetter: true, Lease: conformanceLease, MaxExtension: leaseExtension, Logger: logger})
		base := uniqueID(t)
		ids := make([]string, msgs)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", base, i)
			ch.Send(t, newMessage(f, ids[i]))
		}
		counter, rej := &DispatchCounter{}, &rejections{}
		opts := pumpOptions(v, budget)
		opts.BufferSize = msgs
		// The consumer itself, not a RecordingConsumer: the pump must see
		// its broker.LeaseExtender.
		c := ch.Consumer(t, msgs)
		hold := leaseOf(ch, c) * 5 / 4
		late := &lateLeases{}
		late.explainOnFailure(t, leaseOf(ch, c))
		running := Start(t, c, counter.Wrap(func(ctx context.Context, _ *message.Message) pump.Result {
			sleepCtx(ctx, hold)
			return pump.Result{Outcome: pump.Defer}
		}), opts, rej, late, pump.LogObserver{Logger: logger})
		// At most R invocations only once each message was rejected (never
		// because the broker stopped redelivering it); its copy
		// on the dead-letter queue is checked below.
		AwaitFinal(t, waitLong+msgs*budget*hold, "every message rejected", Evidence{IDs: ids, Want: budget,
			Delivered: counter.Count, Final: func(id string) bool { return len(rej.of(id)) > 0 }})
		running.Quit(t)
		for _, id := range ids {
			if n := counter.Count(id); n > budget {
				t.Errorf("%s handled %d times, want at most %d (R-4)", id, n, budget)
			}
			if rs := rej.of(id); len(rs) != 1 || rs[0].Reason != message.ReasonDeliveryError {
				t.Errorf("%s rejected %d times (%v), want exactly one DeliveryError", id, len(rs), rs)
			}
		}
		copies := map[string]int{}
		for _, m := range Drain(t, ch.DeadLetter(t), waitShort, 10) {
			copies[m.OriginalID()]++
		}
		for _, id := range ids {
			if copies[id] != 1 {
				t.Errorf("%s has %d dead-letter copies, want one (R-5): %v", id, copies[id], copies)
			}
		}
		for _, m := range Drain(t, ch.Consumer(t, 10), 2*pumpTimeOut, 10) {
			if slices.Contains(ids, m.OriginalID()) {
				t.Errorf("%s is still on the source", m.OriginalID())
			}
		}
	})
	g.Run(t, "R-4/slow-ack", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, Lease: conformanceLease, MaxExtension: leaseExtension, Logger: logger})
		base := uniqueID(t)
		ids := make([]string, msgs)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", base, i)
			ch.Send(t, newMessage(f, ids[i]))
		}
		counter := &DispatchCounter{}
		opts := pumpOptions(v, 3)
		opts.BufferSize = msgs
		var mu sync.Mutex
		acked := map[string]bool{}
		c := ch.Consumer(t, msgs)
		hold := leaseOf(ch, c) * 5 / 4
		late := &lateLeases{}
		late.explainOnFailure(t, leaseOf(ch, c))
		running := Start(t, c, counter.Wrap(func(ctx context.Context, m *message.Message) pump.Result {
			sleepCtx(ctx, hold)
			mu.Lock()
			acked[m.OriginalID()] = true
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		}), opts, late, pump.LogObserver{Logger: logger})
		polltest.Until(t, waitLong+msgs*hold, "every message handled", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) == msgs
		})
		// A lapsed lease would bring a message back within the channel's
		// redelivery bound (the fixture's lease, which may be longer than
		// conformanceLease: Pub/Sub's minimum is 10 s).
		polltest.Stays(t, quietWindow(ch), "a message handled again after it was acknowledged", func() bool {
			for _, id := range ids {
				if counter.Count(id) > 1 {
					return false
				}
			}
			return true
		})
		running.Quit(t)
		for _, id := range ids {
			if n := counter.Count(id); n != 1 {
				t.Errorf("%s handled %d times, want once (R-4)", id, n)
			}
		}
	})
}

// init registers the lease rows in the ledger after the rows every
// transport runs, before the Pub/Sub-specific ones.
func init() { registerRows(leaseBehaviours...) }
