package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowExhaustedFinal is the "exhausted is final" row.
const rowExhaustedFinal = "R-4/exhausted-final"

// exhaustedBehaviours are the exhausted-budget rows.
var exhaustedBehaviours = []Behaviour{
	{rowExhaustedFinal, "R-4, R-19, AC-3", "an exhausted message is never handled again while routing fails: budget 3, dead-letter destination down and then healed; the handler runs exactly 3 times, every failed routing releases with a back-off no shorter than the last, and the message reaches the dead-letter destination", KindPump},
}

// exhaustedBudget is R-4/exhausted-final's requeueCount.
const exhaustedBudget = 3

// runExhausted runs the exhausted-budget rows over f in variant v (RunRows
// calls it).
func runExhausted(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowExhaustedFinal, f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: exhaustedBudget, DeadLetterDown: true}, always(pump.Defer))
		hc, ok := sc.ch.(HealableChannel)
		if !ok {
			t.Fatalf("the %s fixture cannot heal a dead-letter destination", f.Configuration())
		}
		failed := func() int {
			n := 0
			for _, rj := range sc.rec.Rejects(sc.id) {
				if rj.Result.Released {
					n++
				}
			}
			return n
		}
		// The first failed routing: the handler has had its budget.
		polltest.Until(t, waitLong, "a failed routing", func() bool { return failed() >= 1 })
		handled := sc.counter.Count(sc.id)
		// A second failed routing, of a delivery that arrived exhausted.
		awaitScenario(t, sc, waitLong, "a second failed routing", len(sc.rec.Counts(sc.id))+1, func() bool { return failed() >= 2 })
		if n := sc.counter.Count(sc.id); n != handled || n > exhaustedBudget {
			t.Fatalf("handler invoked %d times when the first routing failed, %d by the second (budget %d; presented counts %v): an exhausted delivery was handled again",
				handled, n, exhaustedBudget, sc.rec.Counts(sc.id))
		}
		hc.HealDeadLetter(t)
		// The message must arrive: a pass can never come from the broker
		// (Google's emulator) dropping it, only from the routing landing.
		dlq := sc.ch.DeadLetter(t)
		arrived := newArrivals(func() []*message.Message { return Drain(t, dlq, 2*time.Second, 10) })
		awaitScenario(t, sc, waitLong, "the copy on the healed dead-letter destination", len(sc.rec.Counts(sc.id))+1, func() bool { return arrived.Final(sc.id) })
		m := arrived.got(sc.id)
		sc.running.Quit(t)
		checkMetadata(t, sc.ch, m, message.ReasonDeliveryError)
		// Exactly the budget where the broker's count is exact; an
		// approximate counter (a receive abandoned under load still counts
		// on SQS) may spend a delivery without a handler run, never add one.
		if n := sc.counter.Count(sc.id); n != handled || n < 1 || n > exhaustedBudget {
			t.Errorf("handler invoked %d times in all, %d when the first routing failed, want the same and 1..%d (AC-3 under routing failures; presented counts %v)",
				n, handled, exhaustedBudget, sc.rec.Counts(sc.id))
		} else if counts := sc.rec.Counts(sc.id); n != exhaustedBudget && !slices.ContainsFunc(counts, func(c int) bool { return c > 0 && !slices.Contains(counts, c-1) }) {
			t.Errorf("handler invoked %d times, not the budget %d, yet the presented counts %v skip none: a delivery below the budget was not handled", n, exhaustedBudget, counts)
		}
		rj := sc.rec.Rejects(sc.id)
		last := rj[len(rj)-1]
		if last.Result.Released || last.Result.Err != nil || last.Result.Route != broker.RouteDeadLetter {
			t.Errorf("the last rejection %+v, want routed to the dead-letter destination", last.Result)
		}
		for i, r := range rj {
			if r.Rejection.Reason != message.ReasonDeliveryError {
				t.Errorf("rejection %d has reason %s, want DeliveryError", i+1, r.Rejection.Reason)
			}
			if i > 0 && r.Result.Released && r.Result.ReleaseDelay < rj[i-1].Result.ReleaseDelay {
				t.Errorf("failed routing %d released after %s, the one before after %s: the back-off went down", i+1, r.Result.ReleaseDelay, rj[i-1].Result.ReleaseDelay)
			}
		}
		if n := sc.rec.Requeues(sc.id); n != exhaustedBudget-1 {
			t.Errorf("%d requeues, want %d (one per deferral within the budget)", n, exhaustedBudget-1)
		}
	})
}

// init registers the exhausted-budget rows after the rows every transport runs,
// before the Pub/Sub-specific ones.
func init() { registerRows(exhaustedBehaviours...) }
