// Package polltest is how a test waits for something without sleeping a
// fixed time: Until (and UntilMsg, whose failure can say what the test
// saw then) polls a condition until it holds or a deadline passes, and
// Stays holds a condition for a whole window (a negative check: something
// must NOT happen). Both check the condition at once, then every
// Interval, and fail the test with t.Fatalf naming the time they waited and
// what they waited for, so a failure reads as what did not happen in how
// long. Callers derive the time from what they wait for (a lease, a stop
// bound), never guess it (docs/testing.md).
//
// It is test support with nothing of the module below it, so that every
// package's tests, the pump's and the transports' test support and the
// conformance suite share the one loop. Only tests and test support use it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
//
// Imported by: internal/cmd/cmdtest, internal/cmd/dlq/dlqtest, internal/conformance, internal/pump/pumptest
package polltest

import (
	"testing"
	"time"
)

// Interval is how long Until and Stays sleep between two checks of the
// condition: 10 ms. A condition that calls a broker may take longer than
// that itself; the checks then follow each other without a pause.
const Interval = 10 * time.Millisecond

// Until calls cond at once and then every Interval until it returns true,
// and returns then. When within (a duration, measured from the call) passes
// first, it fails the test with t.Fatalf("timed out after <within>
// waiting for <what>"), so what names the awaited state ("every message
// acknowledged"). cond runs on the calling goroutine: it may itself fail
// the test with t.Fatal (a process it watches has exited, say), which ends
// the wait at once.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	UntilMsg(t, within, func() string { return what }, cond)
}

// UntilMsg is Until with what given by a function, which it calls once,
// when within has passed and just before it fails the test: what the test
// sees then (a terminal's screen, a process's output so far) can be part
// of the failure ("timed out after 30s waiting for the command to exit;
// the screen: ..."). It never calls what when cond holds in time.
func UntilMsg(t testing.TB, within time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what())
		}
		time.Sleep(Interval) // poll interval, not a wait for the condition
	}
}

// Stays calls cond at once, then every Interval for the whole window (a
// duration, measured from the call), and once more when it has passed, and
// fails the test with t.Fatalf("within <window>: <msg>") the first time
// cond returns false: a negative check (a message must NOT come back) that
// fails at the first miss instead of after a blind wait, so msg says what
// happened ("the acknowledged message came back"). It returns after window
// when cond held at every check.
func Stays(t testing.TB, window time.Duration, msg string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(window)
	for {
		if !cond() {
			t.Fatalf("within %s: %s", window, msg)
		}
		if !time.Now().Before(deadline) {
			return
		}
		time.Sleep(Interval) // poll interval
	}
}
