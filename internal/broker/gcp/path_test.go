package gcp

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// A routed copy's rejectionPath (docs/wire-format.md#rejection) travels as
// an attribute of its own and comes back as the same bag string, so the
// Router can see a rejection cycle on Pub/Sub.
func TestRejectionPathRoundTrips(t *testing.T) {
	m := message.New("m1", "orders", message.MTCommand, []byte(`{}`))
	c := message.Stamp(message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError}, time.Now()),
		"audit", message.Rejection{Reason: message.ReasonDeliveryError}, time.Now())
	w := Encode(c)
	if got := w.Attributes[message.KeyRejectionPath]; got != "orders-dlq,audit" {
		t.Fatalf("attribute %s = %q, want orders-dlq,audit", message.KeyRejectionPath, got)
	}
	back, err := Decode(w, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !message.RoutedTo(back, "orders-dlq") || !message.RoutedTo(back, "audit") || message.RejectionPath(back) != "orders-dlq,audit" {
		t.Fatalf("decoded path %q, want orders-dlq,audit", message.RejectionPath(back))
	}
}
