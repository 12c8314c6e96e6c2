package shared

import (
	"context"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestConnecting_FirstSignalCancelsSecondExits130 drives the connect
// watch with injected signals: the first cancels the connection's context
// and done reports it; a second, while the connection has still not given
// up, exits 130 at once.
func TestConnecting_FirstSignalCancelsSecondExits130(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, Exit: func(code int) { exited <- code }}
	defer o.unsubscribe()
	ctx, done := o.connecting(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel the connection's context")
	}
	sigs <- syscall.SIGINT
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Fatalf("second signal exited %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second signal did not exit")
	}
	if !done() {
		t.Fatal("done reports no signal after one came")
	}
}

// TestConnecting_NoSignalLeavesContext: a connection no signal
// interrupted keeps a live context (what it opened may hold it), and done
// reports no signal.
func TestConnecting_NoSignalLeavesContext(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
	defer o.unsubscribe()
	ctx, done := o.connecting(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if done() {
		t.Fatal("done reports a signal when none came")
	}
	if ctx.Err() != nil {
		t.Fatalf("the connection's context ended without a signal: %v", ctx.Err())
	}
}
