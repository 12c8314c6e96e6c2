package rocketmq

import (
	"errors"
	"testing"
	"time"
)

// ADR 0003: the client's deadline error that comes back before the
// receive's own deadline is a lost answer; one at the deadline, or any other
// error, is not.
func TestLostResponse_ADR0003(t *testing.T) {
	await := 300 * time.Millisecond
	for _, tc := range []struct {
		err     error
		elapsed time.Duration
		want    bool
	}{
		{errors.New(clientDeadlineText), 50 * time.Millisecond, true},
		{errors.New(clientDeadlineText), await + 3*time.Second, false},
		{errors.New("CODE=DEADLINE_EXCEEDED from somewhere else"), 50 * time.Millisecond, false},
		{errors.New("connection refused"), 50 * time.Millisecond, false},
	} {
		if got := lostResponse(tc.err, tc.elapsed, await); got != tc.want {
			t.Errorf("lostResponse(%q, %s) = %v, want %v", tc.err, tc.elapsed, got, tc.want)
		}
	}
}
