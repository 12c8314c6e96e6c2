package sqs

import (
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/message"
)

// The delivery count on SQS (requirements Group A; docs/adr/0001):
//
//	presented = stamped + ApproximateReceiveCount - 1
//
// where stamped is the bag's handled-count as written by the producer (0 for
// a fresh message) and ApproximateReceiveCount is the system attribute SQS
// returns on every ReceiveMessage that asks for it (NFR-1: no extra call). A
// routed copy (bag with rejection metadata, R-28) presents stamped only. The
// rule itself is broker.PresentedCount; this file only reads the two inputs,
// with no allocation (NFR-2).

// attrApproximateReceiveCount is the system attribute holding SQS's
// delivery counter (1 on the first receive).
const attrApproximateReceiveCount = string(types.MessageSystemAttributeNameApproximateReceiveCount)

// receiveCount reads ApproximateReceiveCount; a missing or malformed value
// is 0, which PresentedCount treats as a first delivery (AC-33).
func receiveCount(sys map[string]string) int {
	n, err := strconv.Atoi(sys[attrApproximateReceiveCount])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// stampedCount reads the bag's handled-count, a JSON string ("3") as
// Brighter writes it or a number; anything else, or a negative value, is 0.
func stampedCount(bag message.Bag) int {
	switch v := bag[BagHandledCount].(type) {
	case string:
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	case float64:
		if v > 0 && v < 1<<31 {
			return int(v)
		}
	}
	return 0
}
