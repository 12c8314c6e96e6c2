package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump"
)

// The stale settle's row: an acknowledgement sent with a receipt whose
// lease lapsed is reported and never counted as one
// (docs/adr/0005-leases.md decision 6 and 9).
var staleBehaviours = []Behaviour{
	{"R-4/stale-ack", "R-4", "a stale acknowledgement is reported and not counted: with extension off, one performer and bufferSize 1, a handler that acknowledges after two and a half leases (the Proactor's buffered later delivery lapses too) sends its acknowledgement with a lapsed receipt; it is reported (brighter_settles_stale_total, Warn with the message id, a stale-settle or stale settle-failed event) and never counted in brighter_messages_acknowledged_total; the message is handled once (the Pub/Sub stream: at most twice), never dead-lettered, and settled for good", KindPump},
}

func init() { registerRows(staleBehaviours...) }

// counterSum sums the counter name of m over its labels.
func counterSum(t *testing.T, m *observe.Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mm := range f.GetMetric() {
			sum += mm.GetCounter().GetValue()
		}
	}
	return sum
}

// runStale runs the stale settle's row over f in variant v. The broker
// answers a stale receipt as it does: SQS (fauxqs, as AWS) and Pub/Sub
// outside exactly-once with success, deleting nothing once the message was
// handed out again (and, on Google's emulator, removing it when it was not:
// TestEmulatorLapsedAckIDProbe); RocketMQ's client and the memory
// transport refuse it. In the Proactor cells the acknowledgement may cross
// a Receive that hands the message out again; the pump then acknowledges
// that delivery without the handler, and settledForGood waits for it
// (RecordingConsumer.AckCrossed). The row needs the lapse: a handler
// that held its message past its lease and was acknowledged without a
// stale report fails it, and so does a message never settled for good
// (settledForGood's evidence), so an emulator that loses the message
// cannot pass it.
func runStale(t *testing.T, g *Group, f Fixture, v pump.Variant, settledForGood func(t *testing.T, ch Channel, rc *RecordingConsumer, counter *DispatchCounter, ids []string, within time.Duration)) {
	g.Run(t, "R-4/stale-ack", f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, Lease: conformanceLease, Logger: logger})
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		counter := &DispatchCounter{}
		opts := pumpOptions(v, 3)
		opts.MaxLeaseExtension = -1 // off
		opts.NoOfPerformers, opts.BufferSize = 1, 1
		rc := NewRecordingConsumer(ch.Consumer(t, opts.BufferSize))
		_, clientHeld := rc.Consumer.(broker.ClientLeaser)
		hold := lapseOf(ch, rc.Consumer) * 5 / 2
		metrics := observe.NewMetrics()
		var handlerAcks, staleReports int
		var mu sync.Mutex
		obs := pump.ObserverFunc(func(e pump.Event) {
			if e.MessageID() != id {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e.Kind == pump.EventAcknowledged && e.Duration > 0:
				// A handler ran, and every run outlives its lease.
				handlerAcks++
			case e.Kind == pump.EventStaleSettle, e.Kind == pump.EventSettleFailed && errors.Is(e.Err, broker.ErrStaleReceipt):
				staleReports++
			}
		})
		running := Start(t, rc.View(t), counter.Wrap(func(ctx context.Context, _ *message.Message) pump.Result {
			sleepCtx(ctx, hold)
			return pump.Result{Outcome: pump.Ack}
		}), opts, metrics, obs, pump.LogObserver{Logger: logger})
		settledForGood(t, ch, rc, counter, []string{id}, waitLong+4*hold)
		running.Quit(t)
		mu.Lock()
		defer mu.Unlock()
		if handlerAcks != 0 {
			t.Errorf("%d acknowledgements sent after the handler outlived the lease were counted as acknowledged", handlerAcks)
		}
		if staleReports < 1 {
			t.Error("no stale settle reported, though the handler acknowledged after its lease lapsed")
		}
		if n := counterSum(t, metrics, observe.MetricStaleSettles); n < 1 {
			t.Errorf("%s = %v, want at least 1", observe.MetricStaleSettles, n)
		}
		if n := counterSum(t, metrics, observe.MetricAcknowledged); n > 1 {
			t.Errorf("%s = %v, want at most 1 (a message is removed once)", observe.MetricAcknowledged, n)
		}
		want := 1
		if clientHeld {
			want = 2
		}
		if n := counter.Count(id); n < 1 || n > want {
			t.Errorf("handled %d times, want 1..%d", n, want)
		}
		if rj := rc.Rejects(id); len(rj) != 0 {
			t.Errorf("rejected %d times (%+v), want never: the handler acknowledged it", len(rj), rj[0].Rejection)
		}
		warns := 0
		for _, text := range []string{pump.LogStaleSettle, pump.LogLapsedSettle} {
			for _, r := range logs.Records(t, text) {
				if r["level"] == "WARN" && r["message_id"] == id {
					warns++
				}
			}
		}
		if warns < 1 {
			t.Errorf("no Warn %q or %q naming %s:\n%s", pump.LogStaleSettle, pump.LogLapsedSettle, id, logs.String())
		}
	})
}
