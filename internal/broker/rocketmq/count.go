package rocketmq

import (
	"github.com/brightergo/brighter/internal/broker"
)

// DeliveryCount is the delivery count a received RocketMQ message presents
// (requirements Group A, R-1..R-3, R-28; docs/adr/0001-delivery-count-contract.md): the
// HandledCount stamped in the stored message plus the broker's
// MessageView.DeliveryAttempt minus one, read at no extra broker call
// (NFR-1, NFR-3). RocketMQ 5 increments DeliveryAttempt on every redelivery,
// whether it follows ChangeInvisibleDuration (a requeue) or a lapse of the
// invisible duration (R-14's condition, A-3), so the count starts at the
// stamped value (0 for a fresh message, R-2) and advances by one per
// delivery. A routed copy (rejectionMetadata: it carries originalTopic and
// rejectionTimestamp) presents its stamped count only, however often it is
// re-read. An attempt of 0 or less counts as the first delivery
// (AC-33).
func DeliveryCount(stamped int, attempt int32, routedCopy bool) int {
	return broker.PresentedCount(stamped, int(attempt), routedCopy)
}
