package conformance

import (
	"sync/atomic"
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowAckRetry is the row of an acknowledgement that fails after the
// handler acknowledged: the message comes back, and its redelivery is
// acknowledged without a handler run.
const rowAckRetry = "R-4/ack-retry"

// ackRetryBehaviours are the failed-acknowledgement retry rows.
var ackRetryBehaviours = []Behaviour{
	{rowAckRetry, "R-4, AC-3", "a handler's Ack is final: the first acknowledgement of the message fails (never reaching the broker) and the broker redelivers it past the budget of 1; " +
		"the redelivery is acknowledged without a handler run, with its newest receipt (Info with the message id, an acknowledged event marked Retry); " +
		"the handler ran once, nothing was rejected, and the message is not delivered again past its lease", KindPump},
}

// runAckRetry runs the failed-acknowledgement retry row over f in variant v
// (RunRows calls it): every transport and configuration, keyed messages in
// the ordered ones. The first acknowledgement fails in the recording
// consumer, the Proactor's batched one and the Reactor's alike, before it
// reaches the broker. A budget of 1 makes the redelivery one the budget
// would otherwise judge (spent) or hand to the handler again: the row
// fails if either happens.
func runAckRetry(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowAckRetry, f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		logOnFailure(t, logs)
		ch := f.Open(t, Setup{RequeueCount: 1, Lease: shortLease, Logger: logger})
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		var failed atomic.Bool
		rec.AckFault = func(m *message.Message) error {
			if m.OriginalID() == id && failed.CompareAndSwap(false, true) {
				return errAckFault
			}
			return nil
		}
		var retried, handlerAcks atomic.Int64
		obs := pump.ObserverFunc(func(e pump.Event) {
			if e.Kind != pump.EventAcknowledged || e.Message == nil || e.Message.OriginalID() != id {
				return
			}
			if e.Retry {
				retried.Add(1)
			} else {
				handlerAcks.Add(1)
			}
		})
		counter := &DispatchCounter{}
		running := Start(t, rec.View(t), counter.Wrap(always(pump.Ack)), pumpOptions(v, 1), pump.LogObserver{Logger: logger}, obs)
		// Positive evidence: an acknowledgement the broker accepted, after
		// the failed one (two deliveries at least).
		AwaitFinal(t, waitLong, "an acknowledgement the broker accepted after the failed one",
			Evidence{IDs: []string{id}, Want: 2, Final: func(string) bool { return rec.Acks(id) > 0 }}.recorded(rec))
		delivered := len(rec.Counts(id))
		polltest.Stays(t, quietWindow(ch), "the message was handled or delivered again after its acknowledgement", func() bool {
			return counter.Count(id) == 1 && len(rec.Counts(id)) == delivered
		})
		running.Quit(t)
		if !failed.Load() {
			t.Fatal("no acknowledgement of the message was made to fail")
		}
		if n := counter.Count(id); n != 1 {
			t.Errorf("handler ran %d times, want once: its Ack is final, and a failed acknowledgement must not run it again", n)
		}
		if delivered < 2 {
			t.Errorf("delivered %d times, want 2 (the failed acknowledgement left it on the broker)", delivered)
		}
		if rj := rec.Rejects(id); len(rj) != 0 {
			t.Errorf("rejected %d times (%+v), want never: the handler acknowledged it", len(rj), rj[0].Rejection)
		}
		if n := rec.Acks(id); n != 1 {
			t.Errorf("%d acknowledgements accepted by the broker, want 1", n)
		}
		if !rec.SettledNewest(id) {
			t.Error("the message was never acknowledged with the newest receipt it was handed out with")
		}
		if r, h := retried.Load(), handlerAcks.Load(); r != 1 || h != 0 {
			t.Errorf("acknowledged events: %d marked Retry, %d not; want one, marked Retry (the handler's own acknowledgement failed)", r, h)
		}
		found := false
		for _, r := range logs.Records(t, pump.LogAckRetried) {
			if r["level"] == "INFO" && r["message_id"] == id {
				found = true
			}
		}
		if !found {
			t.Errorf("no Info %q naming %s", pump.LogAckRetried, id)
		}
	})
}

// init registers the failed-acknowledgement retry row after the rows every
// transport runs.
func init() { registerRows(ackRetryBehaviours...) }
