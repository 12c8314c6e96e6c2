package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// Issue 12's rows: a message the pump holds keeps its lease until it is
// settled (docs/adr/0005-leases.md).
var leaseBehaviours = []Behaviour{
	{"I12-1", "R-4, R-5", "handling longer than the lease (bufferSize 2): at most R invocations, exactly one DeliveryError rejection, one dead-letter copy, source empty", KindPump},
	{"I12-2", "R-4", "an acknowledging handler slower than the lease handles each message once", KindPump},
}

// conformanceLease is the lease of issue 12's rows: short, so the rows stay
// quick; the handlers take 5/4 of it.
const conformanceLease = 2 * time.Second

// leaseDeferral says why a configuration cannot run issue 12's rows
// honestly: the Pub/Sub stream fixture caps the client's own extension
// (MaxExtension) at the lease so that AC-42 can see a lease lapse.
func leaseDeferral(f Fixture) (string, bool) {
	switch f.Configuration() {
	case "Stream", "StreamOrdering":
		return "the stream fixture caps the client's MaxExtension at the lease (AC-42); the stream client's own extension is tested in internal/broker/gcp (TestAckHandlerSlowerThanAckDeadlineHandlesOnce_R4)", true
	}
	return "", false
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

// runLeases runs issue 12's rows over f in variant v (RunAll calls it).
func runLeases(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if reason, ok := leaseDeferral(f); ok {
		for _, b := range leaseBehaviours {
			g.l.Defer(b.ID, f, v, reason)
		}
		return
	}
	const msgs, budget = 2, 2
	g.Run(t, "I12-1", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: budget, DeadLetter: true, Lease: conformanceLease, Logger: logger})
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
		running := Start(t, ch.Consumer(t, msgs), counter.Wrap(func(ctx context.Context, _ *message.Message) pump.Result {
			sleepCtx(ctx, conformanceLease*5/4)
			return pump.Result{Outcome: pump.Defer}
		}), opts, rej, pump.LogObserver{Logger: logger})
		Eventually(t, waitLong, "every message rejected", func() bool {
			for _, id := range ids {
				if len(rej.of(id)) == 0 {
					return false
				}
			}
			return true
		})
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
		for _, m := range Drain(t, ch.Consumer(t, 10), 2*conformanceLease, 10) {
			if slices.Contains(ids, m.OriginalID()) {
				t.Errorf("%s is still on the source", m.OriginalID())
			}
		}
	})
	g.Run(t, "I12-2", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, Lease: conformanceLease, Logger: logger})
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
		running := Start(t, ch.Consumer(t, msgs), counter.Wrap(func(ctx context.Context, m *message.Message) pump.Result {
			sleepCtx(ctx, conformanceLease*5/4)
			mu.Lock()
			acked[m.OriginalID()] = true
			mu.Unlock()
			return pump.Result{Outcome: pump.Ack}
		}), opts, pump.LogObserver{Logger: logger})
		Eventually(t, waitLong, "every message handled", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) == msgs
		})
		// A lapsed lease would bring a message back within the channel's
		// redelivery bound (the fixture's lease, which may be longer than
		// conformanceLease: Pub/Sub's minimum is 10 s).
		Stays(t, quietWindow(ch), "a message handled again after it was acknowledged", func() bool {
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

// init registers issue 12's rows in the ledger after the rows every
// transport runs, before the Pub/Sub-specific ones.
func init() { registerRows(leaseBehaviours...) }
