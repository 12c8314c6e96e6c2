package gcptest

import (
	"context"
	"sync"
	"time"
)

// Hold records the calls a black hole held (HoldCalls).
type Hold struct {
	mu   sync.Mutex
	left []time.Duration
}

// hold waits until ctx ends, as a service that accepts the call and never
// answers, recording the deadline ctx had left when the call arrived (0:
// none); it returns ctx's error. A call with no deadline is let go after a
// minute, so a test fails on the record instead of hanging.
func (h *Hold) hold(ctx context.Context) error {
	var left time.Duration
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	h.mu.Lock()
	h.left = append(h.left, left)
	h.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return context.DeadlineExceeded
	}
}

// Deadlines returns, for each call held so far, the deadline its context
// had left when it arrived (0: the call had no deadline).
func (h *Hold) Deadlines() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.left...)
}

// HoldCalls makes every unary call of method (its last path segment, as
// "Acknowledge") wait until its context ends, recording its deadline in the
// returned Hold (issue 31: a black-holed endpoint per call kind); nothing
// reaches the emulator. ReleaseCalls ends it.
func (f *Faults) HoldCalls(method string) *Hold {
	h := &Hold{}
	f.holds.Store(method, h)
	return h
}

// ReleaseCalls stops holding method's calls; calls held already wait on.
func (f *Faults) ReleaseCalls(method string) { f.holds.Delete(method) }
