package rocketmq_test

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

// A routed copy's rejectionPath (docs/wire-format.md#rejection) travels as
// a property of its own and comes back as the same bag string, so the
// Router can see a rejection cycle on RocketMQ.
func TestRejectionPathRoundTrips(t *testing.T) {
	now := time.Now()
	m := message.New("m1", "orders", message.MTCommand, []byte(`{}`))
	c := message.Stamp(message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError}, now),
		"audit", message.Rejection{Reason: message.ReasonDeliveryError}, now)
	out := rocketmq.Encode(c, "audit", "", now)
	if got := out.GetProperties()[message.KeyRejectionPath]; got != "orders-dlq,audit" {
		t.Fatalf("property %s = %q, want orders-dlq,audit", message.KeyRejectionPath, got)
	}
	back, err := rocketmq.Decode(rocketmq.WireFromMessage(out), now)
	if err != nil {
		t.Fatal(err)
	}
	if !message.RoutedTo(back, "orders-dlq") || message.RejectionPath(back) != "orders-dlq,audit" {
		t.Fatalf("decoded path %q, want orders-dlq,audit", message.RejectionPath(back))
	}
}
