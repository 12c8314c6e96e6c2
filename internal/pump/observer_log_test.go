package pump_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// TestLogObserverLevels_NFR4: at Info an operator sees each deferral (the
// budget running down) but no receive or acknowledgement line; a handler
// failure is one Error line with the budget as a deferral's, not also a
// deferral; a failed stop the caller
// reports itself is not logged as an error a second time.
func TestLogObserverLevels_NFR4(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	o := pump.LogObserver{Logger: l, StopErrorReported: true}
	m := message.New("m1", "orders", message.MTCommand, nil)
	o.Observe(pump.Event{Kind: pump.EventReceived, Subscription: "s", Message: m})
	o.Observe(pump.Event{Kind: pump.EventDeferred, Subscription: "s", Message: m, DeliveryCount: 1, Budget: 3})
	o.Observe(pump.Event{Kind: pump.EventDeferred, Subscription: "s", Message: m, DeliveryCount: 2, Budget: 3, Spent: 2, Err: errors.New("boom")})
	o.Observe(pump.Event{Kind: pump.EventAcknowledged, Subscription: "s", Message: m})
	o.Observe(pump.Event{Kind: pump.EventStopped, Subscription: "s", Err: errors.New("limit reached")})
	out := buf.String()
	for _, want := range []string{
		`level=INFO msg="message deferred" subscription=s message_id=m1 delivery_count=1 budget=3`,
		`level=ERROR msg="handler failed; message deferred" subscription=s message_id=m1 delivery_count=2 budget=3 budget_spent=2 delay=0s error=boom`,
		`level=INFO msg="message pump stopped" subscription=s failed=true`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{pump.LogReceived, pump.LogAcknowledged, `msg="message deferred" subscription=s message_id=m1 delivery_count=2`, "limit reached"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("log has %q at Info:\n%s", unwanted, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("%d lines, want 3:\n%s", n, out)
	}
}
