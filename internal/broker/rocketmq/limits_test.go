package rocketmq

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// TestCheckLimits_RefusesOverProxyPropertyLimits: a proxy's default limits, in
// bytes, which rmqtest does not enforce: 128 properties and 16 KiB of them
// together; a routed copy with the longest rejection text fits.
func TestCheckLimits_RefusesOverProxyPropertyLimits(t *testing.T) {
	enc := func(bag map[string]any) error {
		m := message.New("id", "t", message.MTCommand, []byte("{}"))
		for k, v := range bag {
			m.Header.Bag[k] = v
		}
		return CheckLimits(Encode(m, "t", "", time.Unix(0, 0)))
	}
	if err := enc(map[string]any{"k": strings.Repeat("a", 1000)}); err != nil {
		t.Errorf("a small message: %v", err)
	}
	many := map[string]any{}
	for i := range 130 {
		many["k"+strconv.Itoa(i)] = "v"
	}
	for name, bag := range map[string]map[string]any{
		"130 bag entries":           many,
		"17 KiB of property values": {"note": strings.Repeat("ü", 9*1024)},
	} {
		if err := enc(bag); !errors.Is(err, broker.ErrTooLarge) {
			t.Errorf("%s: %v, want broker.ErrTooLarge", name, err)
		}
	}
	m := message.New("id", "t", message.MTCommand, []byte("{}"))
	c := message.Stamp(m, "t-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: strings.Repeat("€", 2000)}, time.Unix(0, 0))
	if err := CheckLimits(Encode(c, "t-dlq", "", time.Unix(0, 0))); err != nil {
		t.Errorf("a routed copy with a long rejection reason: %v", err)
	}
}
