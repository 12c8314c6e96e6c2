package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// TestRouterRedactsTheRejectionMessage: the rejectionMessage stamped
// on a routed copy (stored on the broker, shown by dlq peek) passes the
// redaction rule before anything cuts it: a URL's user-info and query
// values in a handler's description never reach the broker, whole or in
// part, also when the copy is retried with the message shortened.
func TestRouterRedactsTheRejectionMessage(t *testing.T) {
	desc := "GET https://svc:pw-SEKRIT@api.example/v1/x?api_key=key-SEKRIT-0123456789: 401 Unauthorized after 3 tries, " + strings.Repeat("x", 100)
	for name, publishErr := range map[string]error{"published": nil, "too large, shortened": broker.ErrTooLarge} {
		t.Run(name, func(t *testing.T) {
			f := &fake{publishErr: publishErr}
			r, _ := newRouter(f, "orders.dlq", "")
			r.Reject(context.Background(), received("m1"), message.Rejection{Reason: message.ReasonDeliveryError, Description: desc})
			if len(f.published) == 0 {
				t.Fatal("nothing published")
			}
			for _, c := range f.published {
				got, _ := c.Header.Bag.String(message.KeyRejectionMessage)
				if got == "" {
					t.Fatalf("no rejectionMessage on the copy")
				}
				if strings.Contains(got, "SEKRIT") || strings.Contains(got, "pw-") || strings.Contains(got, "key-") {
					t.Errorf("rejectionMessage %q keeps a secret", got)
				}
			}
		})
	}
}
