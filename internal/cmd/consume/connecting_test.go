package consume

import (
	"context"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStartupWatch_SecondSignalExits130 drives consume's watch while it
// connects with injected signals: the first cancels the opens' context, a
// second within the merge window is the same stop, and one after it exits
// 130 at once.
func TestStartupWatch_SecondSignalExits130(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	const window = 200 * time.Millisecond
	ctx, done := startupWatch(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), sigs, window, func(code int) { exited <- code })
	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal did not cancel the opens' context")
	}
	sigs <- syscall.SIGINT // within the window: the same stop
	select {
	case code := <-exited:
		t.Fatalf("a signal within the merge window exited %d", code)
	case <-time.After(window + 100*time.Millisecond):
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
