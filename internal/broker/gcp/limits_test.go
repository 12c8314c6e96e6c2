package gcp

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// TestCheckLimits_RefusesOverPubSubAttributeLimits: Pub/Sub's attribute limits,
// in bytes, which the emulator does not enforce: a value of exactly 1,024 bytes
// passes, 1,025 (or a multi-byte value over 1,024 bytes but under 1,024
// characters) is refused as too large; so are 101 attributes and a 257-byte
// key.
func TestCheckLimits_RefusesOverPubSubAttributeLimits(t *testing.T) {
	ok := func(a map[string]string) Wire { return Wire{Data: []byte("{}"), Attributes: a} }
	if err := CheckLimits(ok(map[string]string{"k": strings.Repeat("a", 1024)})); err != nil {
		t.Errorf("a 1,024-byte value: %v", err)
	}
	many := map[string]string{}
	for i := range 101 {
		many["k"+strconv.Itoa(i)] = "v"
	}
	for name, w := range map[string]Wire{
		"1,025 bytes":             ok(map[string]string{"k": strings.Repeat("a", 1025)}),
		"600 two-byte characters": ok(map[string]string{"k": strings.Repeat("é", 600)}),
		"101 attributes":          ok(many),
		"257-byte key":            ok(map[string]string{strings.Repeat("k", 257): "v"}),
	} {
		if err := CheckLimits(w); !errors.Is(err, broker.ErrTooLarge) {
			t.Errorf("%s: %v, want broker.ErrTooLarge", name, err)
		}
	}
	// A routed copy with the longest rejection text fits.
	m := message.New("id", "t", message.MTCommand, []byte("{}"))
	c := message.Stamp(m, "t.dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: strings.Repeat("€", 2000)}, m.Header.Timestamp)
	if err := CheckLimits(Encode(c)); err != nil {
		t.Errorf("a routed copy with a long rejection reason: %v", err)
	}
}

// TestPublishOverAttributeLimitRefused (Google's emulator, which
// would take it): a message whose bag value is over Pub/Sub's 1,024-byte
// attribute value limit is refused by the producer as too large, as real
// Pub/Sub refuses it, and nothing reaches the topic; one at the limit is
// published.
func TestPublishOverAttributeLimitRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1})
	p := NewProducer(e.client, ProducerOptions{})
	defer p.Close(context.Background())
	big := message.New("big-1", "orders", message.MTCommand, []byte("{}"))
	big.Header.Bag["note"] = strings.Repeat("ü", 600) // 1,200 bytes, 600 characters
	if err := p.Send(ctxT(t, 10*time.Second), big); !errors.Is(err, broker.ErrTooLarge) {
		t.Fatalf("Send = %v, want broker.ErrTooLarge", err)
	}
	fits := message.New("fits-1", "orders", message.MTCommand, []byte("{}"))
	fits.Header.Bag["note"] = strings.Repeat("a", 1024)
	if err := p.Send(ctxT(t, 10*time.Second), fits); err != nil {
		t.Fatalf("Send at the limit = %v", err)
	}
	if got := e.pullRaw(t, "orders-sub", 10*time.Second); got.GetAttributes()[AttrID] != "fits-1" {
		t.Fatalf("pulled %v, want only fits-1", got.GetAttributes()[AttrID])
	}
}
