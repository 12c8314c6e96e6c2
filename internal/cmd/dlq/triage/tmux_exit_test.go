package triage

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestDLQTriage_TmuxExitCodes opens the console on a memory dead-letter
// destination in a real terminal and ends it three ways: q is a quit
// (exit 0); ctrl+c and SIGTERM are interruptions, as for every dlq
// command (exit 130, with a final line saying what was held was made
// visible again).
func TestDLQTriage_TmuxExitCodes(t *testing.T) {
	cmdtest.NeedTmux(t, "the console")
	for i, c := range []struct {
		name string
		end  func(s cmdtest.TmuxBrighter)
		code string
	}{
		{"q", func(s cmdtest.TmuxBrighter) { s.Keys(true, "q") }, "0"},
		{"ctrl-c", func(s cmdtest.TmuxBrighter) { s.Keys(false, "C-c") }, "130"},
		{"SIGTERM", func(s cmdtest.TmuxBrighter) { s.Signal(syscall.SIGTERM) }, "130"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := cmdtest.WriteMemoryDLQ(t, 2)
			run := fmt.Sprintf("te%d-%d", i, time.Now().UnixNano()%1e9)
			s := cmdtest.StartBrighterInTmux(t, run, fmt.Sprintf(`dlq triage "memory://orders-dlq?file=%s"`, path),
				[]string{"NO_COLOR=1", "XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state")})
			s.AwaitText("budget exhausted")
			c.end(s)
			got, stderr := s.AwaitExitCode(), s.Stderr()
			if got != c.code {
				t.Fatalf("triage ended by %s exited %s, want %s; stderr:\n%s", c.name, got, c.code, stderr)
			}
			if c.code == "130" && !strings.Contains(stderr, "brighter: triage memory://orders-dlq") || c.code == "130" && !strings.Contains(stderr, "interrupted; every message read was made visible again") {
				t.Errorf("no final line saying triage was interrupted; stderr:\n%s", stderr)
			}
			if c.code == "0" && strings.Contains(stderr, "brighter:") {
				t.Errorf("a quit with q ends with an error line; stderr:\n%s", stderr)
			}
		})
	}
}
