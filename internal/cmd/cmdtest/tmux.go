package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TmuxSession is a tmux server of its own (-L) running one command in an
// 80x24 window named triage, driven with send-keys and read with
// capture-pane.
type TmuxSession struct {
	T      *testing.T
	Socket string
}

// Tmux runs tmux with args on the session's server and returns what it
// printed; a failure fails the test.
func (s TmuxSession) Tmux(args ...string) string {
	s.T.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.Socket}, args...)...).CombinedOutput()
	if err != nil {
		s.T.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Keys sends tmux key names (Enter, Escape, Down) or, with literal, text.
func (s TmuxSession) Keys(literal bool, keys ...string) {
	s.T.Helper()
	args := []string{"send-keys", "-t", "triage"}
	if literal {
		args = append(args, "-l")
	}
	s.Tmux(append(args, keys...)...)
}

// Screen is what the window shows now.
func (s TmuxSession) Screen() string { return s.Tmux("capture-pane", "-p", "-t", "triage") }

// Await waits (at most a minute) until the screen satisfies ok, and
// returns it; what names the wait in the failure.
func (s TmuxSession) Await(what string, ok func(string) bool) string {
	s.T.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		sc := s.Screen()
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			s.T.Fatalf("waiting for %s; the screen:\n%s", what, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// AwaitText waits (at most a minute) until the screen shows text.
func (s TmuxSession) AwaitText(text string) string {
	s.T.Helper()
	return s.Await(fmt.Sprintf("%q", text), func(sc string) bool { return strings.Contains(sc, text) })
}

// AwaitExit waits (at most 30 s) for the exit status the session's
// command line writes to exitFile and fails unless it is 0.
func (s TmuxSession) AwaitExit(exitFile string) {
	s.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(exitFile); err == nil && len(b) > 0 {
			if strings.TrimSpace(string(b)) != "0" {
				s.T.Fatalf("triage exited %s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			s.T.Fatalf("triage did not exit after q; the screen:\n%s", s.Screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StartTmux starts command (a shell command line) in a tmux server of its
// own, named after run, in an 80x24 window with env; the server is killed
// when t ends.
func StartTmux(t *testing.T, run, command string, env []string) TmuxSession {
	t.Helper()
	s := TmuxSession{T: t, Socket: "brighter-triage-" + run}
	args := []string{"new-session", "-d", "-s", "triage", "-x", "80", "-y", "24"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.Tmux(append(args, command)...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.Socket, "kill-server").Run() })
	return s
}
