package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// The redelivery rows: a lapsed lease never makes a message immortal
// (docs/adr/0005-leases.md decision 9).
var redeliveryBehaviours = []Behaviour{
	{"R-4/lapse-redelivery", "R-4", "extension off, handler slower than the lease: each message is handled at most twice (once more after the lapse), then settled for good (an acknowledgement with its newest receipt, nothing handed out again)", KindPump},
	{"R-4/stale-settle", "R-4", "a stale settle is counted and logged: an acknowledgement made after the lease lapsed, while the message was being handed out again, is counted (brighter_settles_stale_total or a refused settle) and logged at Warn with the message id; the later delivery is settled without the handler", KindPump},
}

func init() { registerRows(redeliveryBehaviours...) }

// againRounds bounds how many times settledForGood waits again for a
// message handed out after its newest receipt's acknowledgement was seen:
// each is one more delivery of it a stream client queued behind a busy run
// (one per message in the runs measured), or one a Receive under way
// handed out as the acknowledgement was answered (one per message).
const againRounds = 3

// handling records which messages' handlers are running, and when an
// acknowledgement of each began.
type handling struct {
	mu      sync.Mutex
	running map[string]bool
	acking  map[string]chan struct{}
}

func (h *handling) set(id string, on bool) {
	h.mu.Lock()
	if h.running == nil {
		h.running = map[string]bool{}
	}
	h.running[id] = on
	h.mu.Unlock()
}

func (h *handling) isRunning(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running[id]
}

func (h *handling) ackBegan(id string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.acking == nil {
		h.acking = map[string]chan struct{}{}
	}
	ch, ok := h.acking[id]
	if !ok {
		ch = make(chan struct{})
		h.acking[id] = ch
	}
	return ch
}

func (h *handling) acked(id string) {
	ch := h.ackBegan(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// staleSettles sums brighter_settles_stale_total over its labels.
func staleSettles(t *testing.T, m *observe.Metrics) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != observe.MetricStaleSettles {
			continue
		}
		for _, mm := range f.GetMetric() {
			sum += mm.GetCounter().GetValue()
		}
	}
	return sum
}

// lapseOf is how long a message c hands out may be held, with no
// extension by the pump, before the broker may hand it out again: its
// lease; for a client that keeps leases itself (broker.ClientLeaser, the
// Pub/Sub stream), the client's lease plus the deadline of the last
// extension it made (up to the channel's lease again).
func lapseOf(ch Channel, c broker.Consumer) time.Duration {
	if cl, ok := c.(broker.ClientLeaser); ok {
		return cl.ClientLease() + leaseOf(ch, c)
	}
	return leaseOf(ch, c)
}

// runRedeliveries runs the redelivery rows over f in variant v (RunAll calls
// it).
func runRedeliveries(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	const msgs = 2
	// settledForGood waits until each message was acknowledged with the
	// newest receipt it was handed out with, then watches the channel's
	// quiet window: nothing handed out again, no handler run again. The
	// rows need that positive evidence, so a message the broker stopped
	// handing out (Google's emulator drops redelivered messages,
	// docs/emulators.md#googles-pubsub-emulator) can never pass them: through AwaitFinal
	// one handed out fewer than twice (the lapse the rows force
	// must hand it out again unless its only receipt was acknowledged)
	// fails the cell as "emulator lost it"; one handed out again and still
	// not acknowledged with its newest receipt fails as brighter's.
	//
	// A client that keeps leases itself (broker.ClientLeaser, the Pub/Sub
	// stream) queues what it receives behind a busy run, and a redelivery
	// that waits there past the client's lease is handed out with an ack
	// id Pub/Sub has already let lapse; the live delivery is queued
	// behind it, in the client (measured on Google's emulator, Stream
	// reactor: a redelivery received at 22 s was handed out at 52 s and
	// acknowledged at once as superseded, and the next one, which Pub/Sub
	// sent when that one lapsed and the client queued, was handed out
	// milliseconds later). "The newest receipt handed out"
	// is then not yet the message's live one: there, a later hand-out
	// within the window starts the wait again (at most againRounds
	// times per message) provided no handler ran; any handler run after
	// the first such acknowledgement fails the row, as does a message
	// never settled for good (the rounds run out).
	//
	// On every transport, a delivery that crossed the acknowledgement
	// (RecordingConsumer.AckCrossed: the Receive that handed it out began
	// before the acknowledgement with the newest receipt was answered) is
	// no hand-out after it either, and starts the wait again the same
	// way. The pump receives while an acknowledgement is under way (the
	// Proactor's receiver pulls as soon as a worker takes the message's
	// buffered delivery, and the late acknowledgement leaves from the
	// settle batcher), and when that acknowledgement used a lapsed
	// receipt the broker may hand the message out to that Receive first:
	// measured on Google's emulator, PullOrdering proactor, R-4/stale-ack, a Pull
	// begun 2 ms before the acknowledgement of a lapsed ack id was sent
	// returned the message (attempt 3) in the same millisecond as the
	// acknowledgement's success, under a CPU burner; recorded after it,
	// that delivery read as a hand-out after the message was settled for
	// good, though the pump then acknowledged it with its receipt without
	// the handler, as it must (supersededBy). A delivery from a Receive
	// begun after the answer still fails the row at once.
	settledForGood := func(t *testing.T, ch Channel, rc *RecordingConsumer, counter *DispatchCounter, ids []string, within time.Duration) {
		t.Helper()
		_, clientHeld := rc.Consumer.(broker.ClientLeaser)
		handled := map[string]int{}
		rounds := map[string]int{} // waits started again, per message
		// handed: how many times each message had been handed out when its
		// newest receipt's acknowledgement was last seen (one read with
		// it, so no delivery recorded meanwhile is taken as acknowledged).
		handed := map[string]int{}
		settled := func(id string) bool {
			n, ok := rc.SettledNewestOf(id)
			if ok {
				handed[id] = n
			}
			return ok
		}
		for first := true; ; first = false {
			if first {
				AwaitFinal(t, within, "an acknowledgement with the newest receipt", Evidence{IDs: ids, Want: 2,
					Delivered: rc.Handed, Final: settled, Settled: rc.Acks})
			} else {
				polltest.Until(t, within, "every message acknowledged with its newest receipt", func() bool {
					for _, id := range ids {
						if !settled(id) {
							return false
						}
					}
					return true
				})
			}
			if first {
				for _, id := range ids {
					handled[id] = counter.Count(id)
				}
			}
			again := ""
			deadline := time.Now().Add(quietWindow(ch))
			for again == "" {
				ended := !time.Now().Before(deadline)
				for _, id := range ids {
					if counter.Count(id) != handled[id] {
						t.Fatalf("%s handled again (%d times, %d when it was first acknowledged with its newest receipt)", id, counter.Count(id), handled[id])
					}
					if rc.Handed(id) != handed[id] {
						again = id
					}
				}
				if ended {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if again == "" {
				return
			}
			rounds[again]++
			crossed := rc.AckCrossed(again, handed[again])
			if !clientHeld && !crossed || rounds[again] > againRounds {
				t.Fatalf("within %s: %s handed out again after it was acknowledged with its newest receipt (%d times)", quietWindow(ch), again, rounds[again])
			}
			if crossed {
				t.Logf("%s handed out again by a Receive begun before its newest receipt's acknowledgement was answered; waiting for its settle (%d of at most %d)", again, rounds[again], againRounds)
				continue
			}
			t.Logf("%s handed out again after its newest receipt's acknowledgement: a delivery the stream client held past its lease; waiting for its settle (%d of at most %d)", again, rounds[again], againRounds)
		}
	}
	g.Run(t, "R-4/lapse-redelivery", f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: conformanceLease, Logger: logger})
		base := uniqueID(t)
		ids := make([]string, msgs)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", base, i)
			ch.Send(t, newMessage(f, ids[i]))
		}
		counter := &DispatchCounter{}
		opts := pumpOptions(v, -1)
		opts.MaxLeaseExtension = -1 // off
		rc := NewRecordingConsumer(ch.Consumer(t, opts.BufferSize))
		hold := lapseOf(ch, rc.Consumer) * 5 / 4
		running := Start(t, rc.View(t), counter.Wrap(func(ctx context.Context, _ *message.Message) pump.Result {
			sleepCtx(ctx, hold)
			return pump.Result{Outcome: pump.Ack}
		}), opts, pump.LogObserver{Logger: logger})
		settledForGood(t, ch, rc, counter, ids, waitLong+4*msgs*hold)
		running.Quit(t)
		if _, ok := rc.Consumer.(broker.ClientLeaser); ok {
			// The stream's client decides when a lease lapses (up to a
			// deadline past its MaxExtension): the row proves nothing
			// unless the lapse happened.
			again := false
			for _, id := range ids {
				again = again || rc.Handed(id) >= 2
			}
			if !again {
				t.Errorf("no message was handed out again after the client's lease (%s) lapsed: the row proves nothing", lapseOf(ch, rc.Consumer))
			}
		}
		for _, id := range ids {
			if n := counter.Count(id); n < 1 || n > 2 {
				t.Errorf("%s handled %d times, want once or twice: a stale settle may let it be handled again, never more", id, n)
			}
		}
	})
	g.Run(t, "R-4/stale-settle", f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: conformanceLease, Logger: logger})
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		counter := &DispatchCounter{}
		opts := pumpOptions(v, -1)
		opts.MaxLeaseExtension = -1                       // off
		opts.NoOfPerformers = max(opts.NoOfPerformers, 2) // a receive is under way while the handler runs
		rc := NewRecordingConsumer(ch.Consumer(t, opts.BufferSize))
		h := &handling{}
		// The later delivery reaches the pump only once the earlier
		// delivery's acknowledgement has begun: the pump cannot know of it
		// before it settles, as when the broker hands it out during that
		// call.
		rc.AfterReceive = func(ms []*message.Message) {
			for _, m := range ms {
				if m.OriginalID() == id && h.isRunning(id) {
					select {
					case <-h.ackBegan(id):
					case <-time.After(waitLong):
					}
				}
			}
		}
		rc.BeforeAck = func(m *message.Message) { h.acked(m.OriginalID()) }
		hold := lapseOf(ch, rc.Consumer) * 5 / 4
		metrics := observe.NewMetrics()
		running := Start(t, rc.View(t), counter.Wrap(func(ctx context.Context, m *message.Message) pump.Result {
			h.set(m.OriginalID(), true)
			sleepCtx(ctx, hold)
			h.set(m.OriginalID(), false)
			return pump.Result{Outcome: pump.Ack}
		}), opts, metrics, pump.LogObserver{Logger: logger})
		if rc.Handed(id) < 2 {
			// Waited for below: the broker must hand the message out again
			// after the lapse, or the row proves nothing.
			polltest.Until(t, waitLong+2*hold, "the message handed out again after its lease lapsed", func() bool { return rc.Handed(id) >= 2 })
		}
		settledForGood(t, ch, rc, counter, []string{id}, waitLong+4*hold)
		running.Quit(t)
		if n := counter.Count(id); n != 1 {
			t.Errorf("handled %d times, want once: the later delivery is settled without the handler", n)
		}
		if n := staleSettles(t, metrics); n < 1 {
			t.Errorf("%s = %v, want at least 1", observe.MetricStaleSettles, n)
		}
		// One report: the acknowledgement sent with the lapsed receipt as
		// it ended (LogLapsedSettle; LogStaleSettle when the broker
		// refused it), or the superseded settle when its later delivery
		// came.
		warns := 0
		for _, text := range []string{pump.LogStaleSettle, pump.LogLapsedSettle} {
			for _, r := range logs.Records(t, text) {
				if r["level"] == "WARN" && r["message_id"] == id {
					warns++
				}
			}
		}
		if warns != 1 {
			t.Errorf("%d Warn records %q or %q naming %s, want one:\n%s", warns, pump.LogStaleSettle, pump.LogLapsedSettle, id, logs.String())
		}
	})
	runStale(t, g, f, v, settledForGood)
}
