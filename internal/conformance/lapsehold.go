package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowLapseHold is the row of a keyed message whose lease lapses before
// dispatch on an ordered channel: the broker hands it out again, so it
// holds back its key as a deferred one does.
const rowLapseHold = "R-29/lapse-hold"

// lapseHoldBehaviours are the lapsed-lease ordering rows.
var lapseHoldBehaviours = []Behaviour{
	{rowLapseHold, "R-29", "a keyed message whose lease lapses before dispatch holds back its key: three messages of one key, the first's handler outlives the lease while every extension of the second fails (never reaching the broker); no later message of the key is handled before an acknowledgement of the one before it has been sent, none is handled twice, and every message is acknowledged with its newest receipt (ordered configurations; bufferSize 10, 3 performers)", KindPump},
}

// lapseHoldPerKey is how many messages of one key the row publishes.
const lapseHoldPerKey = 3

// errExtendFault is the lease extension failure the row injects.
var errExtendFault = errors.New("conformance: injected lease extension failure (the call never reached the broker)")

// runLapseHold runs the lapsed-lease row over an ordered fixture in
// variant v (RunRows calls it; unordered configurations have no cell).
//
// Where the broker hands out the three messages together (an SQS FIFO
// group through the FIFOBatcher, a Pub/Sub ordering key), the second
// waits behind the first's handler for longer than its lease, which is
// never extended: it lapses and is dropped, and the third, whose lease
// was extended, must be released unhandled rather than handled before the
// second comes back. Where the broker hands out a group one message at a
// time (RocketMQ FIFO groups) nothing lapses, and the cell proves only
// that no message is handled early or twice. Where the fixture always
// hands a group out together (batchesGroups: SQS FIFO) the cell fails
// when the second message was not handed out with the first.
func runLapseHold(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if !f.Ordered() {
		return
	}
	g.Run(t, rowLapseHold, f, v, func(t *testing.T) {
		k := openKeyHold(t, f, lapseHoldPerKey)
		logger, logs, ch, ids, seq, rec := k.logger, k.logs, k.ch, k.ids, k.seq, k.rec
		lease := leaseOf(ch, rec.Consumer)
		// sent[s] is set when an acknowledgement of message s is let
		// through to the broker: from then on the broker may hand out
		// message s+1.
		var sent [lapseHoldPerKey]atomic.Bool
		rec.AckFault = func(m *message.Message) error {
			if s, ok := seq[m.OriginalID()]; ok {
				sent[s].Store(true)
			}
			return nil
		}
		rec.ExtendFault = func(m *message.Message) error {
			if s, ok := seq[m.OriginalID()]; ok && s == 1 {
				return errExtendFault
			}
			return nil
		}
		var (
			mu    sync.Mutex
			runs  = map[string]int{}
			early []string
			// together: the second message was handed out while the
			// first's first run was under way (so it waited behind it).
			together atomic.Bool
			lapsed   atomic.Int64
		)
		h := func(_ context.Context, m *message.Message) pump.Result {
			s, ok := seq[m.OriginalID()]
			if !ok {
				return pump.Result{Outcome: pump.Ack}
			}
			mu.Lock()
			runs[m.OriginalID()]++
			first := runs[m.OriginalID()] == 1
			if s > 0 && !sent[s-1].Load() {
				early = append(early, fmt.Sprintf("message %d handled before message %d was acknowledged", s, s-1))
			}
			mu.Unlock()
			if s == 0 && first {
				time.Sleep(lease * 8 / 5) // the second message's lease lapses meanwhile
				together.Store(rec.Handed(ids[1]) > 0)
			}
			return pump.Result{Outcome: pump.Ack}
		}
		watch := pump.ObserverFunc(func(e pump.Event) {
			if e.Kind == pump.EventLeaseLapsed && e.Message != nil && e.Message.OriginalID() == ids[1] {
				lapsed.Add(1)
			}
		})
		opts := k.options(v)
		running := Start(t, rec.View(t), h, opts, pump.LogObserver{Logger: logger}, watch)
		all := k.allAcked
		polltest.Until(t, waitLong+2*lease, "every message of the key acknowledged", all)
		polltest.Stays(t, quietWindow(ch), "a message was handled again after every message had been acknowledged", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return runs[ids[0]] <= 1 && runs[ids[1]] <= 1 && runs[ids[2]] <= 1
		})
		running.Quit(t)
		mu.Lock()
		defer mu.Unlock()
		if !together.Load() && batchesGroups(f) {
			t.Fatalf("the second message was not handed out while the first's handler ran: no receive returned two messages of the key, so the row did not take the path it proves (%s returns several messages of a group in one receive: is the FIFOBatcher in front of the emulator?)", f.Configuration())
		}
		if together.Load() && lapsed.Load() == 0 {
			t.Fatal("the second message was handed out with the first, but its lease never lapsed before dispatch: the row did not take the path it proves")
		}
		for _, e := range early {
			t.Errorf("%s (the earlier message's lease had lapsed, so it was still on the broker)", e)
		}
		for s, id := range ids {
			if runs[id] != 1 {
				t.Errorf("message %d handled %d times, want once (runs %v)", s, runs[id], runs)
			}
			if !rec.SettledNewest(id) {
				t.Errorf("message %d was never acknowledged with the newest receipt it was handed out with", s)
			}
		}
		t.Logf("second message handed out with the first: %v; its lapses before dispatch: %d; deliveries released unhandled behind it: %d",
			together.Load(), lapsed.Load(), logs.Count(pump.LogHeldBack))
	})
}

// init registers the lapsed-lease row after the rows every transport runs.
func init() { registerRows(lapseHoldBehaviours...) }
