package conformance

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// Wire is one message as it travels on a transport, before the broker
// assigns its own id: the body and the string attributes (SQS message
// attributes, Pub/Sub attributes, RocketMQ properties).
type Wire struct {
	// Body is the message body (SQS MessageBody, Pub/Sub data, RocketMQ
	// body).
	Body []byte
	// Attrs are the attributes; SendWire leaves out an attribute whose
	// value is "" (SQS refuses empty attribute values).
	Attrs map[string]string
}

// WireChannel is a Channel that can publish what a producer other than
// Brighter could put on the broker: a message in the
// transport's wire format, edited, sent with the transport's own client
// rather than Brighter's producer.
type WireChannel interface {
	Channel
	// SendWire encodes m as Brighter's producer would for this channel,
	// applies edit (nil for none) to the wire form and publishes the result
	// raw.
	SendWire(t testing.TB, m *message.Message, edit func(w *Wire))
	// StampCount sets the stamped handled count of w to text, verbatim
	// (SQS: the bag's handled-count; Pub/Sub and RocketMQ: HandledCount).
	StampCount(w *Wire, text string)
}

// The hostile-count rows, in ledger order (registered in Behaviours).
const (
	rowStampedLimit   = "R-4/stamped-limit"
	rowRoutedCopy     = "R-11/routed-copy"
	rowForgedMetadata = "R-11/forged-metadata"
)

// hostileBehaviours are the hostile-count ledger rows
// (docs/adr/0001-delivery-count-contract.md §9).
var hostileBehaviours = []Behaviour{
	{rowStampedLimit, "R-4, R-16", "a stamped count at the maximum and beyond is unacceptable, never a loop", KindPump},
	{rowRoutedCopy, "R-11, R-28", "a budget on a channel that receives routed copies runs down", KindPump},
	{rowForgedMetadata, "R-11", "forged rejection metadata on a source message does not make its budget inert", KindPump},
}

// runHostile runs the hostile-count behaviours over f in variant v (RunAll calls
// it; AC-41, the other half of R-28, stays in RunAll unchanged).
func runHostile(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowStampedLimit, f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Invalid: true, Logger: logger})
		wc, ok := ch.(WireChannel)
		if !ok {
			t.Fatalf("the %s fixture cannot publish raw wire messages", f.Configuration())
		}
		base := uniqueID(t)
		// The maximum itself, one beyond it, and the value that wrapped
		// the count arithmetic before stamped counts were bounded.
		counts := []string{strconv.Itoa(message.HandledCountLimit), strconv.Itoa(message.HandledCountLimit + 1), "9223372036854775807"}
		ids := make([]string, len(counts))
		for i, c := range counts {
			ids[i] = base + "-" + strconv.Itoa(i)
			wc.SendWire(t, newMessage(f, ids[i]), func(w *Wire) { wc.StampCount(w, c) })
		}
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		counter := &DispatchCounter{}
		running := Start(t, rec.View(t), counter.Wrap(always(pump.Defer)), pumpOptions(v, 3), pump.LogObserver{Logger: logger})
		inv := ch.Invalid(t)
		for i, id := range ids {
			m := firstOn(t, inv, id, waitLong)
			if got, _ := m.Header.Bag.String(message.KeyRejectionReason); got != message.ReasonUnacceptable.String() {
				t.Errorf("count %s: rejectionReason %q, want Unacceptable", counts[i], got)
			}
			if got, _ := m.Header.Bag.String(message.KeyRejectionMessage); got == "" {
				t.Errorf("count %s: the invalid-message copy has no rejectionMessage saying why", counts[i])
			}
			// Its originalMessageType is the type the message carried, not
			// MT_UNACCEPTABLE.
			if got, _ := m.Header.Bag.String(message.KeyOriginalMessageType); got != message.MTCommand.String() {
				t.Errorf("count %s: originalMessageType %q, want %q (the type it carried)", counts[i], got, message.MTCommand)
			}
			if m.Header.CorrelationID != "corr-"+id {
				t.Errorf("count %s: correlation id %q, want %q (identity kept)", counts[i], m.Header.CorrelationID, "corr-"+id)
			}
			if m.Header.HandledCount < 0 || m.Header.HandledCount >= message.HandledCountLimit {
				t.Errorf("count %s: the copy presents %d, want 0..%d", counts[i], m.Header.HandledCount, message.HandledCountLimit-1)
			}
		}
		running.Quit(t)
		for i, id := range ids {
			if n := counter.Count(id); n != 0 {
				t.Errorf("count %s: handler invoked %d times, want 0 (Unacceptable before dispatch)", counts[i], n)
			}
			if n := rec.Requeues(id); n != 0 {
				t.Errorf("count %s: %d requeues, want 0 (never a loop)", counts[i], n)
			}
			rj := rec.Rejects(id)
			if len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonUnacceptable || rj[0].Result.Route != broker.RouteInvalidMessage {
				t.Errorf("count %s: rejections %+v, want exactly one Unacceptable to the invalid-message channel", counts[i], rj)
			}
			for _, c := range rec.Counts(id) {
				if c < 0 {
					t.Errorf("count %s: presented %d (wrapped)", counts[i], c)
				}
			}
		}
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	g.Run(t, rowRoutedCopy, f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Logger: logger})
		base := uniqueID(t)
		// What other subscriptions' rejections put on this channel: copies
		// stamped with their source channel's count and the five keys. A
		// copy stamped 0 (rejected on its first delivery there) would
		// present 0 for ever if the budget were judged on the presented
		// count; one stamped 2 would be rejected at once.
		stamps := []int{0, 2}
		ids := make([]string, len(stamps))
		for i, stamped := range stamps {
			ids[i] = base + "-" + strconv.Itoa(i)
			src := newMessage(f, ids[i])
			src.Header.HandledCount = stamped
			src.Header.Topic = "conformance-source"
			ch.Send(t, message.Stamp(src, "conformance-source.dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "rejected on the source"}, time.Now()))
		}
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		counter := &DispatchCounter{}
		running := Start(t, rec.View(t), counter.Wrap(always(pump.Defer)), pumpOptions(v, 3), pump.LogObserver{Logger: logger})
		AwaitFinal(t, waitLong, "a rejection of each routed copy, routed", Evidence{IDs: ids, Want: 3,
			Final: func(id string) bool { return routed(rec, id) }}.recorded(rec))
		running.Quit(t)
		dlq := ch.DeadLetter(t)
		for i, id := range ids {
			if n := counter.Count(id); n < 1 || n > 3 {
				t.Errorf("stamped %d: handler invoked %d times, want 1..3: the budget must run down (R-11)", stamps[i], n)
			}
			for k, c := range rec.Counts(id) {
				if c != stamps[i] {
					t.Errorf("stamped %d: delivery %d presented %d, want the stamped count (R-28)", stamps[i], k+1, c)
				}
			}
			rj := rec.Rejects(id)
			if len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonDeliveryError || rj[0].Result.Route != broker.RouteDeadLetter {
				t.Fatalf("stamped %d: rejections %+v, want exactly one DeliveryError to this subscription's dead-letter destination", stamps[i], rj)
			}
			m := firstOn(t, dlq, id, waitShort)
			if got, _ := m.Header.Bag.String(message.KeyRejectionReason); got != message.ReasonDeliveryError.String() {
				t.Errorf("stamped %d: rejectionReason %q, want DeliveryError", stamps[i], got)
			}
			if got, _ := m.Header.Bag.String(message.KeyOriginalTopic); got == "conformance-source" {
				t.Errorf("stamped %d: originalTopic is still the source's %q: the copy was not routed by this subscription", stamps[i], got)
			}
		}
	})
	g.Run(t, rowForgedMetadata, f, v, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Logger: logger})
		id := uniqueID(t)
		m := newMessage(f, id)
		// A raw producer's forgery: the two keys of R-28's discriminator
		// on a fresh source message (stamped count 0).
		m.Header.Bag[message.KeyOriginalTopic] = "forged-topic"
		m.Header.Bag[message.KeyRejectionTimestamp] = "2026-01-01T00:00:00.0000000+00:00"
		ch.Send(t, m)
		buffer, _ := scale(v)
		rec := NewRecordingConsumer(ch.Consumer(t, buffer))
		counter := &DispatchCounter{}
		running := Start(t, rec.View(t), counter.Wrap(always(pump.Defer)), pumpOptions(v, 3), pump.LogObserver{Logger: logger})
		AwaitFinal(t, waitLong, "a rejection of the forged message, routed", Evidence{IDs: []string{id}, Want: 3,
			Final: func(id string) bool { return routed(rec, id) }}.recorded(rec))
		running.Quit(t)
		if n := counter.Count(id); n < 1 || n > 3 {
			t.Errorf("handler invoked %d times, want 1..3: forged metadata made the budget inert (R-11)", n)
		}
		rj := rec.Rejects(id)
		if len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonDeliveryError || rj[0].Result.Route != broker.RouteDeadLetter {
			t.Fatalf("rejections %+v, want exactly one DeliveryError to the dead-letter destination", rj)
		}
		firstOn(t, ch.DeadLetter(t), id, waitShort)
	})
}

// sendContext bounds a raw publish.
func sendContext(t testing.TB) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// init registers the hostile-count rows in the ledger after the rows every
// transport runs, before the Pub/Sub-specific ones.
func init() { registerRows(hostileBehaviours...) }
