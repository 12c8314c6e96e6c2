package gcp

import (
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// DeliveryCount is the delivery count a Pub/Sub delivery presents (R-1..R-3,
// R-28, AC-33): the count stamped in the HandledCount attribute plus the
// delivery_attempt Pub/Sub reports minus one, through broker.PresentedCount.
// A nil or zero attempt (a subscription without a DeadLetterPolicy, where
// Pub/Sub leaves delivery_attempt unset) counts as the first delivery, so the
// result is the stamped count, never negative and never a panic. A routed
// copy (one carrying rejection metadata) presents its stamped count however
// often it is read.
func DeliveryCount(stamped int, attempt *int, routedCopy bool) int {
	a := 0
	if attempt != nil {
		a = *attempt
	}
	return broker.PresentedCount(stamped, a, routedCopy)
}

// present applies DeliveryCount to a decoded message in place: HandledCount
// becomes the presented count and DeliveryAttempt records the broker's
// attempt (0 when Pub/Sub gave none).
func present(m *message.Message, attempt *int) {
	m.Header.HandledCount = DeliveryCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())
	m.DeliveryAttempt = 0
	if attempt != nil && *attempt > 0 {
		m.DeliveryAttempt = *attempt
	}
}
