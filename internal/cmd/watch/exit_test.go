package watch_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestWatch_QuitExits0_InterruptExits130 runs `brighter watch` in a
// terminal (tmux) and ends it five ways: q quits (exit 0); ctrl+c, SIGINT,
// SIGTERM and SIGHUP interrupt it (exit 130, as every interrupted command
// and dlq triage's ctrl+c), saying so.
func TestWatch_QuitExits0_InterruptExits130(t *testing.T) {
	cmdtest.NeedTmux(t, "the dashboard")
	b := cmdtest.NewSilentBroker(t)
	for _, tc := range []struct {
		name string
		end  func(w cmdtest.TmuxBrighter)
		want string
	}{
		{"q", func(w cmdtest.TmuxBrighter) { w.Keys(true, "q") }, "0"},
		{"ctrl+c", func(w cmdtest.TmuxBrighter) { w.Keys(false, "C-c") }, "130"},
		{"SIGINT", func(w cmdtest.TmuxBrighter) { w.Signal(syscall.SIGINT) }, "130"},
		{"SIGTERM", func(w cmdtest.TmuxBrighter) { w.Signal(syscall.SIGTERM) }, "130"},
		// The terminal closed, an ssh session dropped: a stop, not a
		// death by the signal's default action (exit 129, unsaid).
		{"SIGHUP", func(w cmdtest.TmuxBrighter) { w.Signal(syscall.SIGHUP) }, "130"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := cmdtest.StartBrighterInTmux(t, fmt.Sprintf("watch-exit-%d", time.Now().UnixNano()), "watch -t "+b.URL, []string{"NO_COLOR=1"})
			w.AwaitText("targets connected")
			tc.end(w)
			got, stderr := w.AwaitExitCode(), w.Stderr()
			if got != tc.want {
				t.Fatalf("watch ended by %s exited %s, want %s; stderr: %q", tc.name, got, tc.want, stderr)
			}
			if tc.want == "130" && !strings.Contains(stderr, "brighter: watch: interrupted") {
				t.Errorf("watch ended by %s: stderr %q does not say it was interrupted", tc.name, stderr)
			}
		})
	}
}
