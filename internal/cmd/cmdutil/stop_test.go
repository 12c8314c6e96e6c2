package cmdutil

import (
	"context"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStopOnSignals_ReportingASignalKeepsWatching: a command that stops
// at the first signal (send, lint --live, demo) asks signalled while it
// cleans up; asking does not end the watch, so a second signal after the
// merge window still exits ExitInterrupted at once, and one within it is
// the same stop. stop ends the watch and unsubscribes.
func TestStopOnSignals_ReportingASignalKeepsWatching(t *testing.T) {
	sigs := make(chan os.Signal, 4)
	unsubscribed := make(chan struct{})
	exited := make(chan int, 1)
	ctx, signalled, stop := StopOnSignals(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), "stopping",
		func() (<-chan os.Signal, func()) { return sigs, func() { close(unsubscribed) } },
		func(code int) { exited <- code })
	if signalled() {
		t.Fatal("signalled before any signal")
	}
	sigs <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not end the context")
	}
	if !signalled() {
		t.Fatal("signalled is false after the first signal")
	}
	sigs <- syscall.SIGINT // the same stop (timeout(1)'s repeat)
	// The gap under test, not a wait for something: the repeat must not
	// exit within the merge window, and the SIGTERM after it is a second
	// signal.
	time.Sleep(SignalMergeWindow + 100*time.Millisecond)
	select {
	case code := <-exited:
		t.Fatalf("a signal within the merge window exited %d", code)
	default:
	}
	sigs <- syscall.SIGTERM
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Fatalf("second signal exited %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a second signal during the clean-up did not exit")
	}
	stop()
	select {
	case <-unsubscribed:
	default:
		t.Error("stop did not end the subscription")
	}
	stop() // a second call does nothing
	if !signalled() {
		t.Error("signalled is false after stop")
	}
}
