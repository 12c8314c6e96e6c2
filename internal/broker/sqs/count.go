package sqs

import (
	"fmt"
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

// stampedCount reads the bag's handled-count: a JSON string ("3") as
// Brighter writes it, or a number. ok is false when the bag has none (or an
// empty string). A value that is not a whole number in
// 0..message.HandledCountLimit-1 is an error (the message is then
// Unacceptable): never read as 0, never wrapped.
func stampedCount(bag message.Bag) (n int, ok bool, err error) {
	v, present := bag[BagHandledCount]
	if !present {
		return 0, false, nil
	}
	switch x := v.(type) {
	case string:
		if x == "" {
			return 0, false, nil
		}
		n, err = message.ParseHandledCount(x)
	case float64:
		n, err = message.HandledCountFromNumber(x)
	default:
		err = fmt.Errorf("%w: a JSON %s, not a string or number", message.ErrBadHandledCount, jsonKind(x))
	}
	return n, err == nil, err
}

// jsonKind names the JSON type of a decoded value, for an error.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
