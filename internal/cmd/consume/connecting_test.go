package consume

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartupWatch_ConsumesLinesAndExit: what consume gives the signal
// watch it keeps while connecting (cmdutil.WatchSignals, whose behaviour
// TestWatchSignals tests): its own log lines for the stop, for a signal
// merged into it within the merge window, and for a second signal after
// the window, which exits through consume's exit with ExitInterrupted.
func TestStartupWatch_ConsumesLinesAndExit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		window   time.Duration
		want     string
		wantExit bool
	}{
		{"within the merge window", time.Minute, logConsumeSignalMerged, false},
		{"after the merge window", 0, logConsumeConnectForced, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			sigs := make(chan os.Signal) // a send returns once the watch took it
			exited := make(chan int, 1)
			ctx, done := startupWatch(context.Background(), slog.New(slog.NewTextHandler(&log, nil)), sigs, nil, tc.window, func(code int) { exited <- code })
			sigs <- syscall.SIGTERM
			sigs <- syscall.SIGINT
			if !done() || ctx.Err() == nil {
				t.Fatalf("done = false or the opens' context lives on (%v) after a signal", ctx.Err())
			}
			// done waited for the watch: its log and exit are written.
			for _, w := range []string{logConsumeConnectStopping, tc.want} {
				if !strings.Contains(log.String(), w) {
					t.Errorf("the log lacks %q:\n%s", w, log.String())
				}
			}
			select {
			case code := <-exited:
				if !tc.wantExit || code != ExitInterrupted {
					t.Errorf("exit(%d); want an exit %v with %d", code, tc.wantExit, ExitInterrupted)
				}
			default:
				if tc.wantExit {
					t.Errorf("no exit, want exit(%d)", ExitInterrupted)
				}
			}
		})
	}
}
