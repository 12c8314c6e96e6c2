package cmdutil_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestWatchSignals: the first signal cancels the phase's context and is
// logged; a signal within the merge window is the same stop (logged at
// Info, no exit); a later one exits 130; done reports whether a signal
// came, and without one the context stays alive.
func TestWatchSignals(t *testing.T) {
	w := func(log io.Writer, exit func(int)) cmdutil.SignalWatch {
		return cmdutil.SignalWatch{Logger: slog.New(slog.NewTextHandler(log, nil)), Stopping: "stopping", Forced: "forced",
			MergeWindow: 200 * time.Millisecond, Merged: "merged", Exit: exit}
	}
	t.Run("no signal", func(t *testing.T) {
		ctx, done := cmdutil.WatchSignals(context.Background(), make(chan os.Signal), w(io.Discard, nil))
		if done() || ctx.Err() != nil {
			t.Fatalf("done = true or the context ended (%v) without a signal", ctx.Err())
		}
	})
	t.Run("first, merged, second", func(t *testing.T) {
		var mu sync.Mutex
		var log bytes.Buffer
		exited := make(chan int, 1)
		sigs := make(chan os.Signal)
		ctx, done := cmdutil.WatchSignals(context.Background(), sigs, w(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return log.Write(p)
		}), func(code int) { exited <- code }))
		sigs <- syscall.SIGTERM
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the first signal did not cancel the context")
		}
		sigs <- syscall.SIGINT // within the merge window: the same stop
		select {
		case code := <-exited:
			t.Fatalf("a signal within the merge window exited %d", code)
		case <-time.After(300 * time.Millisecond):
		}
		sigs <- syscall.SIGINT
		select {
		case code := <-exited:
			if code != cmdutil.ExitInterrupted {
				t.Fatalf("exit %d, want %d", code, cmdutil.ExitInterrupted)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a second signal did not exit")
		}
		if !done() {
			t.Error("done = false after a signal")
		}
		mu.Lock()
		defer mu.Unlock()
		for _, want := range []string{"msg=stopping", "msg=merged", "msg=forced"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log lacks %s:\n%s", want, log.String())
			}
		}
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
