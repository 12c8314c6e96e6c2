package observe

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/brightergo/brighter/internal/pump"
)

// Messages a stop released unstarted (pump.EventReleased) count in
// brighter_messages_released_total{reason="stop"}, one each, and neither
// in brighter_messages_received_total nor in the in-flight gauge: they
// were never taken up for handling.
func TestMetrics_ReleasedAtAStopCountedByReason(t *testing.T) {
	m := NewMetrics()
	for _, e := range []pump.Event{
		{Kind: pump.EventReceived},
		{Kind: pump.EventReleased, DeliveryCount: 2},
		{Kind: pump.EventReleased, DeliveryCount: 0},
		{Kind: pump.EventReleased, DeliveryCount: 5},
	} {
		e.Subscription = "orders"
		m.Observe(e)
	}
	if g := testutil.ToFloat64(m.released.WithLabelValues("orders", ReleasedAtStop)); g != 3 {
		t.Errorf("%s{reason=%q} = %v, want 3", MetricReleased, ReleasedAtStop, g)
	}
	if g := testutil.ToFloat64(m.received.WithLabelValues("orders")); g != 1 {
		t.Errorf("%s = %v, want 1 (the one taken up for handling)", MetricReceived, g)
	}
	if g := testutil.ToFloat64(m.inFlight.WithLabelValues("orders")); g != 1 {
		t.Errorf("%s = %v, want 1", MetricInFlight, g)
	}
}

// A released record (the pump's new event kind) passes to /events as
// "released", with its message id and delivery count.
func TestFromEvent_Released(t *testing.T) {
	r := FromEvent(pump.Event{Kind: pump.EventReleased, Subscription: "orders", DeliveryCount: 2})
	if r.Kind != "released" || r.DeliveryCount != 2 {
		t.Errorf("record kind %q deliveryCount %d, want released 2", r.Kind, r.DeliveryCount)
	}
}
