package conformance

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// rowAckWaiting is the row of a redelivery that arrives while the
// handler's acknowledgement of an earlier delivery is still waiting for
// the broker's answer: it is acknowledged, not handled again.
const rowAckWaiting = "R-4/ack-waiting"

// ackWaitingBehaviours are the rows of acknowledgements still waiting.
var ackWaitingBehaviours = []Behaviour{
	{rowAckWaiting, "R-4, AC-3", "a handler's Ack is final while it waits for its answer: the first acknowledgement of the message (batched) is held before it reaches the broker " +
		"until the message's next acknowledgement is made, and the broker redelivers the message when its lease lapses meanwhile; the redelivery is acknowledged " +
		"without a handler run, with its newest receipt (Info with the message id, an acknowledged event marked Retry and AckWaiting); the handler ran once, nothing was rejected", KindPump},
}

// runAckWaiting runs the waiting-acknowledgement row over f in variant v
// (RunRows calls it): every configuration whose consumer acknowledges in
// batches (the pump's settle batcher), keyed messages in the ordered
// ones; fixtures whose consumer acknowledges one message per call defer
// it. The first acknowledgement of the message is held in the recording
// consumer until another acknowledgement of it is made: the redelivery's,
// or, were the redelivery handled, its handler's. Should neither come
// (the redelivery waiting for its own key's acknowledgement), the held
// one goes after twice the channel's redelivery bound, and the row fails.
func runAckWaiting(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowAckWaiting, f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		logOnFailure(t, logs)
		ch := f.Open(t, Setup{RequeueCount: 1, Lease: shortLease, Logger: logger})
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		release := make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		fallback := time.AfterFunc(2*ch.RedeliveryBound(), free)
		t.Cleanup(func() { fallback.Stop(); free() })
		var acks, held atomic.Int64
		rec.AckFault = func(m *message.Message) error {
			if m.OriginalID() != id {
				return nil
			}
			if acks.Add(1) == 1 {
				held.Add(1)
				<-release // the handler's acknowledgement waits for its answer
				return nil
			}
			free()
			return nil
		}
		var waited, others atomic.Int64
		obs := pump.ObserverFunc(func(e pump.Event) {
			if e.Kind != pump.EventAcknowledged || e.Message == nil || e.Message.OriginalID() != id {
				return
			}
			if e.Retry && e.AckWaiting {
				waited.Add(1)
			} else {
				others.Add(1)
			}
		})
		counter := &DispatchCounter{}
		running := Start(t, rec.View(t), counter.Wrap(always(pump.Ack)), pumpOptions(v, 1), pump.LogObserver{Logger: logger}, obs)
		// Positive evidence: a second acknowledgement, made after the
		// redelivery, that the broker accepted.
		AwaitFinal(t, waitLong, "an acknowledgement the broker accepted after the held one",
			Evidence{IDs: []string{id}, Want: 2, Final: func(string) bool { return acks.Load() >= 2 && rec.Acks(id) > 0 }}.recorded(rec))
		running.Quit(t)
		if held.Load() == 0 {
			t.Fatal("no acknowledgement of the message was held")
		}
		if n := counter.Count(id); n != 1 {
			t.Errorf("handler ran %d times, want once: the redelivery arrived while its acknowledgement waited for its answer", n)
		}
		if rj := rec.Rejects(id); len(rj) != 0 {
			t.Errorf("rejected %d times (%+v), want never: the handler acknowledged it", len(rj), rj[0].Rejection)
		}
		if !rec.SettledNewest(id) {
			t.Error("the message was never acknowledged with the newest receipt it was handed out with")
		}
		if w := waited.Load(); w != 1 {
			t.Errorf("acknowledged events marked Retry and AckWaiting: %d (and %d others), want one (the redelivery's)", w, others.Load())
		}
		found := false
		for _, r := range logs.Records(t, pump.LogAckWhileWaiting) {
			if r["level"] == "INFO" && r["message_id"] == id {
				found = true
			}
		}
		if !found {
			t.Errorf("no Info %q naming %s", pump.LogAckWhileWaiting, id)
		}
	})
}

// init registers the waiting-acknowledgement row after the rows every
// transport runs.
func init() { registerRows(ackWaitingBehaviours...) }
