package gcp

import (
	"testing"

	"github.com/brightergo/brighter/internal/broker/limits"
)

// TestCloseHoldBoundIsTheOneLintUses: the longest requeue hold the stream
// consumer keeps through its Close (its default bound less what it leaves
// the client) is limits.PubSubStreamHoldAcrossStop, the value lint's
// requeue-delay-lost-at-stop judges requeueDelay against.
func TestCloseHoldBoundIsTheOneLintUses(t *testing.T) {
	if got := DefaultCloseTimeout - closeHoldLimit; got != limits.PubSubStreamHoldAcrossStop {
		t.Fatalf("the stream consumer keeps holds ending within %s of its Close; limits.PubSubStreamHoldAcrossStop is %s", got, limits.PubSubStreamHoldAcrossStop)
	}
}
