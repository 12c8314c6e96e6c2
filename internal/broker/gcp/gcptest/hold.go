package gcptest

import "github.com/brightergo/brighter/internal/faultproxy"

// HoldCalls makes every unary call of method (its last path segment, as
// "Acknowledge") wait until its context ends, recording its deadline in the
// returned Hold (a black-holed endpoint per call kind); nothing
// reaches the emulator. ReleaseCalls ends it.
func (f *Faults) HoldCalls(method string) *faultproxy.Hold {
	h := &faultproxy.Hold{}
	f.holds.Store(method, h)
	return h
}

// ReleaseCalls stops holding method's calls; calls held already wait on.
func (f *Faults) ReleaseCalls(method string) { f.holds.Delete(method) }
