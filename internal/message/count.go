package message

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// HandledCountLimit bounds the delivery count a message may carry on the wire
// (docs/adr/0001 §9). A stamped count must be a whole number in
// 0 <= count < HandledCountLimit; any other value (negative, not a number, at
// the limit or beyond, such as 9223372036854775807) makes the message
// Unacceptable, so no value on the wire can wrap the count arithmetic or skip
// a redelivery budget. The limit is far above any real budget: a budget of a
// million redeliveries would take weeks of requeues on any broker. Encoders
// never stamp more than HandledCountLimit-1 (ClampStamp).
const HandledCountLimit = 1_000_000

// ErrBadHandledCount is returned (wrapped, with the value) by
// ParseHandledCount for a stamped count that is not a whole number in
// 0..HandledCountLimit-1.
var ErrBadHandledCount = errors.New("bad handled count")

// ParseHandledCount reads a stamped delivery count as it travels (a decimal
// string such as "3"; surrounding spaces are ignored). It returns the count,
// or an error wrapping ErrBadHandledCount that says what is wrong with it:
// not a number, negative, or not below HandledCountLimit. It never panics.
func ParseHandledCount(s string) (int, error) {
	t := strings.TrimSpace(s)
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: %s is at or above the limit of %d", ErrBadHandledCount, quoteShort(s), HandledCountLimit)
	case err != nil:
		return 0, fmt.Errorf("%w: %s is not a whole number", ErrBadHandledCount, quoteShort(s))
	case n < 0:
		return 0, fmt.Errorf("%w: %s is negative", ErrBadHandledCount, quoteShort(s))
	case n >= HandledCountLimit:
		return 0, fmt.Errorf("%w: %s is at or above the limit of %d", ErrBadHandledCount, quoteShort(s), HandledCountLimit)
	}
	return int(n), nil
}

// HandledCountFromNumber is ParseHandledCount for a count that arrived as a
// JSON number (a bag written by a producer other than Brighter, which writes
// a string): it must be whole, not negative and below HandledCountLimit.
func HandledCountFromNumber(f float64) (int, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f):
		return 0, fmt.Errorf("%w: %v is not a whole number", ErrBadHandledCount, f)
	case f < 0:
		return 0, fmt.Errorf("%w: %v is negative", ErrBadHandledCount, f)
	case f >= HandledCountLimit:
		return 0, fmt.Errorf("%w: %v is at or above the limit of %d", ErrBadHandledCount, f, HandledCountLimit)
	}
	return int(f), nil
}

// ClampStamp is the count an encoder writes for a header count n: n itself
// when 0 <= n < HandledCountLimit, 0 below, HandledCountLimit-1 above (a
// count presented above the limit, by a broker counter that ran on, is
// stamped at the largest acceptable value so the routed copy stays
// decodable).
func ClampStamp(n int) int {
	return min(max(n, 0), HandledCountLimit-1)
}

// SaturatingAdd returns a+b for non-negative a and b, or math.MaxInt when the
// sum would overflow: count arithmetic never wraps to a negative count.
func SaturatingAdd(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// quoteShort quotes s for an error, cut to 40 bytes so a hostile value
// cannot flood a log line.
func quoteShort(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "..."
	}
	return strconv.Quote(s)
}
