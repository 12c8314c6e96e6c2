package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowAckHold is the row of a failed acknowledgement on an ordered
// channel: the message stays on the broker, so it holds back its key.
const rowAckHold = "R-4/ack-hold"

// ackHoldBehaviours are the failed-acknowledgement ordering rows.
var ackHoldBehaviours = []Behaviour{
	{rowAckHold, "R-4, ADR 0006", "a failed acknowledgement holds back its key: the first acknowledgement of a key's first message fails (never reaching the broker); no later message of the key is handled before it is acknowledged, and none twice (ordered configurations; bufferSize 10, 3 performers in the Proactor: its batched acknowledgement)", KindPump},
}

// ackHoldPerKey is how many messages of one key the row publishes.
const ackHoldPerKey = 3

// errAckFault is the acknowledgement failure the row injects.
var errAckFault = errors.New("conformance: injected acknowledgement failure (the call never reached the broker)")

// runAckHold runs the failed-acknowledgement row over an ordered
// fixture in variant v (RunRows calls it; unordered configurations have no
// cell).
func runAckHold(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if !f.Ordered() {
		return
	}
	g.Run(t, rowAckHold, f, v, func(t *testing.T) {
		k := openKeyHold(t, f, ackHoldPerKey)
		logger, ch, ids, seq, rec := k.logger, k.ch, k.ids, k.seq, k.rec
		var (
			failed atomic.Bool
			// sent[s] is set when an acknowledgement of message s is let
			// through to the broker: from then on the broker may hand out
			// message s+1 (a FIFO group's next) to another performer
			// before the call has returned.
			sent [ackHoldPerKey]atomic.Bool
		)
		rec.AckFault = func(m *message.Message) error {
			s, ok := seq[m.OriginalID()]
			if !ok {
				return nil
			}
			if s == 0 && failed.CompareAndSwap(false, true) {
				return errAckFault
			}
			sent[s].Store(true)
			return nil
		}
		var (
			mu    sync.Mutex
			runs  = map[string]int{}
			early []string
			// together: the second message had been handed out when the
			// first's first run began (a receive returned both).
			together atomic.Bool
		)
		h := func(_ context.Context, m *message.Message) pump.Result {
			s, ok := seq[m.OriginalID()]
			if !ok {
				return pump.Result{Outcome: pump.Ack}
			}
			mu.Lock()
			defer mu.Unlock()
			runs[m.OriginalID()]++
			if s == 0 && runs[m.OriginalID()] == 1 {
				together.Store(rec.Handed(ids[1]) > 0)
			}
			if s > 0 && !sent[s-1].Load() {
				early = append(early, fmt.Sprintf("message %d handled before message %d was acknowledged", s, s-1))
			}
			return pump.Result{Outcome: pump.Ack}
		}
		opts := k.options(v)
		running := Start(t, rec.View(t), h, opts, pump.LogObserver{Logger: logger})
		all := k.allAcked
		polltest.Until(t, waitLong, "every message of the key acknowledged", all)
		polltest.Stays(t, quietWindow(ch), "a message was handled again after every message had been acknowledged", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return runs[ids[0]] <= 1 && runs[ids[1]] <= 1 && runs[ids[2]] <= 1
		})
		running.Quit(t)
		mu.Lock()
		defer mu.Unlock()
		if !failed.Load() {
			t.Fatal("no acknowledgement of the first message was made to fail")
		}
		if !together.Load() && batchesGroups(f) {
			t.Fatalf("the second message had not been handed out when the first's handler ran: no receive returned two messages of the key, so the row did not take the path it proves (%s returns several messages of a group in one receive: is the FIFOBatcher in front of the emulator?)", f.Configuration())
		}
		for _, e := range early {
			t.Errorf("%s (its first acknowledgement failed, so it was still on the broker)", e)
		}
		for s, id := range ids {
			// The first's failed acknowledgement left it on the broker; its
			// redelivery is acknowledged without a handler run.
			if runs[id] != 1 {
				t.Errorf("message %d handled %d times, want once (runs %v)", s, runs[id], runs)
			}
		}
	})
}

// init registers the failed-acknowledgement row after the rows every
// transport runs.
func init() { registerRows(ackHoldBehaviours...) }
