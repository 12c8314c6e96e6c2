package triage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives the console in a real terminal; install it (make deps installs tmux)", err)
	}
	for i, c := range []struct {
		name string
		end  func(s tmuxSession, pidFile string)
		code int
	}{
		{"q", func(s tmuxSession, _ string) { s.Keys(true, "q") }, 0},
		{"ctrl-c", func(s tmuxSession, _ string) { s.Keys(false, "C-c") }, 130},
		{"SIGTERM", func(s tmuxSession, pidFile string) {
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}, 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := cmdtest.WriteMemoryDLQ(t, 2)
			dir := t.TempDir()
			exitFile, errFile, pidFile := filepath.Join(dir, "exit"), filepath.Join(dir, "stderr"), filepath.Join(dir, "pid")
			run := fmt.Sprintf("te%d-%d", i, time.Now().UnixNano()%1e9)
			// exec keeps the shell's pid for brighter, so the test can
			// signal it.
			command := fmt.Sprintf("sh -c 'echo $$ > %s; exec %s dlq triage \"memory://orders-dlq?file=%s\" 2> %s'; echo $? > %s; sleep 60",
				pidFile, cmdtest.Bin(t), path, errFile, exitFile)
			s := startTriage(t, run, command, []string{"NO_COLOR=1", "XDG_STATE_HOME=" + filepath.Join(dir, "state")})
			s.AwaitText("budget exhausted")
			c.end(s, pidFile)
			deadline := time.Now().Add(30 * time.Second)
			for {
				if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
					if got := strings.TrimSpace(string(b)); got != strconv.Itoa(c.code) {
						stderr, _ := os.ReadFile(errFile)
						t.Fatalf("triage ended by %s exited %s, want %d; stderr:\n%s", c.name, got, c.code, stderr)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("triage did not exit after %s; the screen:\n%s", c.name, s.Screen())
				}
				time.Sleep(100 * time.Millisecond)
			}
			stderr, err := os.ReadFile(errFile)
			if err != nil {
				t.Fatal(err)
			}
			if c.code == 130 && !strings.Contains(string(stderr), "brighter: triage memory://orders-dlq") || c.code == 130 && !strings.Contains(string(stderr), "interrupted; every message read was made visible again") {
				t.Errorf("no final line saying triage was interrupted; stderr:\n%s", stderr)
			}
			if c.code == 0 && strings.Contains(string(stderr), "brighter:") {
				t.Errorf("a quit with q ends with an error line; stderr:\n%s", stderr)
			}
		})
	}
}
