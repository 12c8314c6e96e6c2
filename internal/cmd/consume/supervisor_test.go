package consume

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// supervised is a Supervisor wired to channels and records of a test's
// own: no cobra, no pumps, no process signals.
type supervised struct {
	sup     *Supervisor
	sigs    chan os.Signal
	quit    chan struct{}
	stopped chan struct{} // closed by Stop
	cut     chan struct{} // closed by CutOff
	exited  chan int      // Exit's code
	mu      sync.Mutex
	logs    bytes.Buffer
}

func (s *supervised) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

func (s *supervised) logged(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.logs.String(), text)
}

func supervise(t *testing.T, runCtx context.Context, merge time.Duration) *supervised {
	t.Helper()
	s := &supervised{sigs: make(chan os.Signal, 4), quit: make(chan struct{}, 2), stopped: make(chan struct{}),
		cut: make(chan struct{}), exited: make(chan int, 1)}
	var stopOnce sync.Once
	s.sup = &Supervisor{
		Logger: slog.New(slog.NewTextHandler(s, nil)), Signals: s.sigs, Quit: s.quit,
		Stop:        func() { stopOnce.Do(func() { close(s.stopped) }) },
		CutOff:      func() { close(s.cut) },
		Restore:     func() {},
		Exit:        func(code int) { s.exited <- code },
		MergeWindow: merge, Grace: time.Minute,
	}
	s.sup.Start(runCtx)
	t.Cleanup(s.sup.Finish)
	return s
}

func await(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen within 10s", what)
	}
}

// TestSupervisor_FirstSignalDrainsSecondExits: the first SIGTERM stops
// the run (the pumps drain) and nothing more; a second, outside the merge
// window, cuts the handlers off, waits for the pumps and exits 1, and the
// run reports it was forced.
func TestSupervisor_FirstSignalDrainsSecondExits(t *testing.T) {
	s := supervise(t, t.Context(), 0)
	s.sigs <- syscall.SIGTERM
	await(t, "Stop after the first signal", s.stopped)
	select {
	case <-s.cut:
		t.Fatal("the first signal cut the handlers off")
	case <-time.After(100 * time.Millisecond):
	}
	if s.sup.Forced() {
		t.Fatal("forced after one signal")
	}
	s.sigs <- syscall.SIGTERM
	await(t, "CutOff after the second signal", s.cut)
	if !s.sup.Forced() {
		t.Fatal("not forced after the second signal")
	}
	s.sup.PumpsDone()
	select {
	case code := <-s.exited:
		if code != 1 {
			t.Fatalf("exit %d after the second signal, want 1", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after the second signal and the pumps' return")
	}
	if !s.logged(logConsumeStopping) || !s.logged(logConsumeForced) {
		t.Fatalf("logs:\n%s\nwant %q and %q", s.logs.String(), logConsumeStopping, logConsumeForced)
	}
}

// TestSupervisor_SignalsAtOnceAreOneStop: a signal within the merge
// window of the first is the same stop: logged as such, never an exit.
func TestSupervisor_SignalsAtOnceAreOneStop(t *testing.T) {
	s := supervise(t, t.Context(), time.Hour)
	s.sigs <- syscall.SIGTERM
	s.sigs <- syscall.SIGINT
	await(t, "Stop after the first signal", s.stopped)
	deadline := time.Now().Add(10 * time.Second)
	for !s.logged(logConsumeSignalMerged) {
		if time.Now().After(deadline) {
			t.Fatalf("the repeated signal was not taken as the same stop; logs:\n%s", s.logs.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	select {
	case code := <-s.exited:
		t.Fatalf("exit %d after two signals at once, want none", code)
	case <-s.cut:
		t.Fatal("two signals at once cut the handlers off")
	case <-time.After(100 * time.Millisecond):
	}
	if s.sup.Forced() {
		t.Fatal("forced by two signals at once")
	}
}

// TestSupervisor_RunStoppedOnItsOwnTakesTheNextSignalAsTheSecond: when the
// run's context ends first (a pump failed), the supervisor stops the run,
// and the next signal, however soon, exits at once.
func TestSupervisor_RunStoppedOnItsOwnTakesTheNextSignalAsTheSecond(t *testing.T) {
	runCtx, cancel := context.WithCancel(t.Context())
	s := supervise(t, runCtx, time.Hour)
	cancel()
	await(t, "Stop after the run's own end", s.stopped)
	s.sigs <- syscall.SIGTERM
	await(t, "CutOff after a signal during the run's own drain", s.cut)
	s.sup.PumpsDone()
	if code := <-s.exited; code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
}

// TestSupervisor_QuitKeyIsASignalsTwin: q on the dashboard drains as a
// first signal does; q again exits at once.
func TestSupervisor_QuitKeyIsASignalsTwin(t *testing.T) {
	s := supervise(t, t.Context(), time.Hour)
	s.quit <- struct{}{}
	await(t, "Stop after q", s.stopped)
	s.quit <- struct{}{}
	await(t, "CutOff after q again", s.cut)
	s.sup.PumpsDone()
	if code := <-s.exited; code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !s.logged(logConsumeQuitKey) || !s.logged(logConsumeQuitForced) {
		t.Fatalf("logs:\n%s\nwant %q and %q", s.logs.String(), logConsumeQuitKey, logConsumeQuitForced)
	}
}
