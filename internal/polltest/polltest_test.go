package polltest

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the failure and ends the
// goroutine, as the testing package's does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own (Fatalf ends it)
// and returns what it failed with ("" when it returned) and how long it
// took.
func run(t *testing.T, f func(tb testing.TB)) (string, time.Duration) {
	r := &recorder{TB: t}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed, time.Since(start)
}

func TestUntil_ReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	failed, took := run(t, func(tb testing.TB) {
		Until(tb, time.Minute, "the third call", func() bool { calls++; return calls == 3 })
	})
	if failed != "" || calls != 3 {
		t.Fatalf("failed %q after %d calls, want a return at the third", failed, calls)
	}
	if took < 2*Interval || took > 10*time.Second {
		t.Errorf("took %s for three calls, want two intervals (%s each)", took, Interval)
	}
}

func TestUntil_FailsAfterWithinNamingWhat(t *testing.T) {
	const within = 50 * time.Millisecond
	calls := 0
	failed, took := run(t, func(tb testing.TB) {
		Until(tb, within, "the impossible", func() bool { calls++; return false })
	})
	if want := "timed out after 50ms waiting for the impossible"; failed != want {
		t.Errorf("failed %q, want %q", failed, want)
	}
	if took < within || calls < 2 {
		t.Errorf("failed after %s and %d calls, want after %s and a call every %s", took, calls, within, Interval)
	}
}

func TestUntilMsg_AsksWhatOnlyWhenItFails(t *testing.T) {
	const within = 50 * time.Millisecond
	calls, asked := 0, 0
	what := func() string { asked++; return fmt.Sprintf("the impossible; %d calls so far", calls) }
	failed, _ := run(t, func(tb testing.TB) {
		UntilMsg(tb, within, what, func() bool { calls++; return false })
	})
	if want := fmt.Sprintf("timed out after 50ms waiting for the impossible; %d calls so far", calls); failed != want || asked != 1 {
		t.Errorf("failed %q, asking what %d times, want %q, asking once", failed, asked, want)
	}
	asked = 0
	failed, _ = run(t, func(tb testing.TB) {
		UntilMsg(tb, time.Minute, what, func() bool { return true })
	})
	if failed != "" || asked != 0 {
		t.Errorf("failed %q, asking what %d times, want a return without asking", failed, asked)
	}
}

func TestStays_FailsAtTheFirstMiss(t *testing.T) {
	calls := 0
	failed, took := run(t, func(tb testing.TB) {
		Stays(tb, time.Minute, "the message came back", func() bool { calls++; return calls < 3 })
	})
	if want := "within 1m0s: the message came back"; failed != want || calls != 3 {
		t.Errorf("failed %q at call %d, want %q at the third", failed, calls, want)
	}
	if took > 10*time.Second {
		t.Errorf("failed after %s, want at the first miss", took)
	}
}

func TestStays_ChecksTheWholeWindow(t *testing.T) {
	const window = 50 * time.Millisecond
	start := time.Now()
	var last time.Time
	failed, _ := run(t, func(tb testing.TB) {
		Stays(tb, window, "never", func() bool { last = time.Now(); return true })
	})
	if failed != "" {
		t.Fatalf("failed %q, want a return", failed)
	}
	if last.Sub(start) < window {
		t.Errorf("last check %s into a window of %s, want one after it", last.Sub(start), window)
	}
}
