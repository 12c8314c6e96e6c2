package watch_test

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

	"github.com/prometheus/procfs"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// TestWatch_QuitExits0_InterruptExits130 runs `brighter watch` in a
// terminal (tmux) and ends it four ways: q quits (exit 0); ctrl+c, SIGINT
// and SIGTERM interrupt it (exit 130, as every interrupted command and
// dlq triage's ctrl+c), saying so.
func TestWatch_QuitExits0_InterruptExits130(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives the dashboard in a real terminal; install it (make deps installs tmux)", err)
	}
	b := cmdtest.NewSilentBroker(t)
	for _, tc := range []struct {
		name string
		end  func(s cmdtest.TmuxSession, pid int)
		want string
	}{
		{"q", func(s cmdtest.TmuxSession, _ int) { s.Keys(true, "q") }, "0"},
		{"ctrl+c", func(s cmdtest.TmuxSession, _ int) { s.Keys(false, "C-c") }, "130"},
		{"SIGINT", func(s cmdtest.TmuxSession, pid int) { signal(t, pid, syscall.SIGINT) }, "130"},
		{"SIGTERM", func(s cmdtest.TmuxSession, pid int) { signal(t, pid, syscall.SIGTERM) }, "130"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exitFile, errFile := filepath.Join(dir, "exit"), filepath.Join(dir, "stderr")
			run := fmt.Sprintf("watch-exit-%d", time.Now().UnixNano())
			s := cmdtest.StartTmux(t, run, cmdtest.Bin(t)+" watch -t "+b.URL+" 2>"+errFile+"; echo $? >"+exitFile, []string{"NO_COLOR=1"})
			s.AwaitText("targets connected")
			tc.end(s, watchPid(t, s))
			got := awaitExitCode(t, s, exitFile)
			stderr, _ := os.ReadFile(errFile)
			if got != tc.want {
				t.Fatalf("watch ended by %s exited %s, want %s; stderr: %q", tc.name, got, tc.want, stderr)
			}
			if tc.want == "130" && !strings.Contains(string(stderr), "brighter: watch: interrupted") {
				t.Errorf("watch ended by %s: stderr %q does not say it was interrupted", tc.name, stderr)
			}
		})
	}
}

// signal sends sig to pid.
func signal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %d: %v", pid, err)
	}
}

// watchPid is the process id of the brighter the session's shell runs:
// the child of the pane's shell.
func watchPid(t *testing.T, s cmdtest.TmuxSession) int {
	t.Helper()
	shell := strings.TrimSpace(s.Tmux("display-message", "-p", "-t", "triage", "#{pane_pid}"))
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		if strconv.Itoa(st.PPID) == shell {
			return p.PID
		}
	}
	t.Fatalf("no child of the pane's shell %s", shell)
	return 0
}

// awaitExitCode waits (at most 30 s) for the exit status the session's
// command line writes to exitFile.
func awaitExitCode(t *testing.T, s cmdtest.TmuxSession, exitFile string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not exit; the screen:\n%s", s.Screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
