package shared

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

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// syncBuffer is a log destination safe for the watch's goroutine and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSignalsWithinMergeWindowAreOneStop drives each way a dlq verb
// watches its signals (the scan, the connection, the triage console) as
// NewOptions builds it: a signal right after the first (timeout(1)
// signals the command and then its process group) is logged as merged and
// neither exits nor counts as a second; a signal after the window does.
func TestSignalsWithinMergeWindowAreOneStop(t *testing.T) {
	for _, phase := range []string{"scan", "connecting", "console"} {
		t.Run(phase, func(t *testing.T) {
			sigs := make(chan os.Signal, 4)
			exited := make(chan int, 1)
			o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, Exit: func(code int) { exited <- code },
				MergeWindow: 300 * time.Millisecond}
			defer o.unsubscribe()
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			seconds := make(chan struct{}, 4)
			switch phase {
			case "scan":
				_, stop := o.Interruptible(context.Background(), logger)
				defer stop()
			case "connecting":
				_, done := o.connecting(context.Background(), logger)
				defer done()
			case "console":
				stop := o.OnSignals(logger, func() {}, func() { seconds <- struct{}{}; o.Exit(cmdutil.ExitInterrupted) })
				defer stop()
			}
			start := time.Now()
			sigs <- syscall.SIGINT
			sigs <- syscall.SIGINT
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(logs.String(), cmdutil.LogSignalMerged) {
				if time.Now().After(deadline) {
					t.Fatalf("the repeated signal is not logged as merged; log:\n%s", logs.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case code := <-exited:
				if time.Since(start) < o.MergeWindow {
					t.Fatalf("a signal within the merge window exited %d; it is the same stop", code)
				}
			case <-time.After(o.MergeWindow - time.Since(start)):
			}
			if len(seconds) > 0 {
				t.Fatal("a signal within the merge window was taken as a second")
			}
			time.Sleep(time.Until(start.Add(o.MergeWindow)))
			sigs <- syscall.SIGINT
			select {
			case code := <-exited:
				if code != cmdutil.ExitInterrupted {
					t.Fatalf("a signal after the merge window exited %d, want %d", code, cmdutil.ExitInterrupted)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a signal after the merge window did not exit")
			}
		})
	}
}
