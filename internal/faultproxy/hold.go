package faultproxy

import (
	"context"
	"sync"
	"time"
)

// Hold is a black hole for calls a test support server or interceptor
// intercepts (a black-holed endpoint per call kind): Hold.Call
// waits until the call's context ends, as a broker that accepts the call
// and never answers, and records the deadline the call arrived with.
type Hold struct {
	mu   sync.Mutex
	left []time.Duration
	at   []time.Time
}

// Call holds one call until ctx ends and returns ctx's error, recording the
// deadline ctx had left on arrival (0: none). A call with no deadline is let
// go after a minute with context.DeadlineExceeded, so that a test fails on
// the record instead of hanging.
func (h *Hold) Call(ctx context.Context) error {
	var left time.Duration
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	h.mu.Lock()
	h.left = append(h.left, left)
	h.at = append(h.at, time.Now())
	h.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return context.DeadlineExceeded
	}
}

// Deadlines returns, for each call held so far, the deadline it had left
// when it arrived (0: the call had no deadline).
func (h *Hold) Deadlines() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.left...)
}

// Arrivals returns when each call held so far arrived, in order: a test
// measures from it how long the caller waited (a caller that stops waiting
// before the call's own deadline).
func (h *Hold) Arrivals() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.at...)
}
