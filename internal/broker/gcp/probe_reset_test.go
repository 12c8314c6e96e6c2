package gcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/faultproxy"
)

// TestProbeOfAResetConnectionSaysReset: a stream subscription whose
// connections are then reset (a fault proxy in front of Google's emulator
// that resets every connection, as a proxy refusing connections does)
// fails its receive, after StreamProbeAfter with nothing delivered, as a
// channel failure that says the probe found the connection reset and
// carries the reset, not that the probe "got no answer within 5s": it
// was answered at once, by a reset.
func TestProbeOfAResetConnectionSaysReset(t *testing.T) {
	t.Parallel()
	e, proxy := newEnvBehindProxy(t)
	c := e.ordersConsumer(t, modeStream)
	ctx := ctxT(t, 60*time.Second)
	if _, err := c.Receive(ctx, 100*time.Millisecond); err != nil {
		t.Fatalf("receive before the resets: %v", err)
	}
	proxy.SetMode(faultproxy.ResetNew)
	proxy.Reset()
	var err error
	for err == nil && ctx.Err() == nil {
		_, err = c.Receive(ctx, 500*time.Millisecond)
	}
	if !errors.Is(err, broker.ErrChannelFailure) {
		t.Fatalf("receive over reset connections = %v, want a channel failure", err)
	}
	msg := err.Error()
	t.Logf("receive: %s", msg)
	if !strings.Contains(msg, "a probe (GetSubscription) found the connection reset before any answer") || !strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "no answer within") {
		t.Errorf("receive over reset connections = %q, want it to say the probe found the connection reset", msg)
	}
}
