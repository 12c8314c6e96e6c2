package conformance

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// delayBehaviours are the requeueDelay row: the delay a user sets is
// real on every transport, not just logged.
var delayBehaviours = []Behaviour{
	{"R-7/requeue-delay", "R-7, R-19", "requeueDelay: a deferred message is not delivered again before the delay (each of two redeliveries)", KindPump},
}

const (
	// rowDelay is the requeueDelay of R-7/requeue-delay: whole seconds, because the
	// brokers take delays in seconds.
	rowDelay = 3 * time.Second
	// delaySlack allows for clocks and timers: a redelivery this much early
	// still counts as on time (the broker may round, the handler's clock
	// reads after the receive).
	delaySlack = 250 * time.Millisecond
)

// runDelay runs R-7/requeue-delay over f in variant v (RunRows calls it).
func runDelay(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, "R-7/requeue-delay", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		// The lease is longer than the delay, so a redelivery can only
		// come from the requeue, not from a lapse.
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: 4 * rowDelay, Logger: logger})
		id := uniqueID(t)
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		ch.Send(t, newMessage(f, id))
		var (
			mu sync.Mutex
			at []time.Time
		)
		opts := pumpOptions(v, -1)
		opts.RequeueDelay = rowDelay
		running := Start(t, rec.View(t), func(_ context.Context, m *message.Message) pump.Result {
			if m.OriginalID() == id {
				mu.Lock()
				at = append(at, time.Now())
				mu.Unlock()
			}
			return pump.Result{Outcome: pump.Defer}
		}, opts, pump.LogObserver{Logger: logger})
		polltest.Until(t, waitLong, "three deliveries", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(at) >= 3
		})
		running.Quit(t)
		mu.Lock()
		times := slices.Clone(at)
		mu.Unlock()
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < rowDelay-delaySlack {
				t.Errorf("delivery %d came %s after the previous one, before requeueDelay %s (R-7)", i+1, gap.Round(time.Millisecond), rowDelay)
			}
		}
		if n := rec.Requeues(id); n < 2 {
			t.Errorf("%d requeue calls, want one per deferred delivery", n)
		}
	})
}

// init registers the requeueDelay row after the rows every transport runs,
// before the Pub/Sub-specific ones.
func init() { registerRows(delayBehaviours...) }
