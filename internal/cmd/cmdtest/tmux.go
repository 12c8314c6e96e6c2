package cmdtest

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

	"github.com/brightergo/brighter/internal/polltest"
)

// NeedTmux fails the test unless tmux is installed; what names what the
// test drives in a real terminal ("the console").
func NeedTmux(t *testing.T, what string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not installed (%v): this test drives %s in a real terminal; install it (make deps installs tmux)", err, what)
	}
}

// TmuxSession is a tmux server of its own (-L) running one command in a
// window named triage, driven with send-keys and read with capture-pane.
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

// exitWithin bounds the wait for a session's command to exit once told
// to (a quit key, a signal): a console stops at once.
const exitWithin = 30 * time.Second

// AwaitExitCode waits (at most 30 s) for the exit status the session's
// command line writes to exitFile and returns it ("0", "130"); the failure
// shows the screen.
func (s TmuxSession) AwaitExitCode(exitFile string) string {
	s.T.Helper()
	var code string
	polltest.UntilMsg(s.T, exitWithin, func() string { return "the command to exit; the screen:\n" + s.Screen() }, func() bool {
		b, err := os.ReadFile(exitFile)
		code = strings.TrimSpace(string(b))
		return err == nil && code != ""
	})
	return code
}

// AwaitExit waits (at most 30 s) for the exit status the session's
// command line writes to exitFile and fails unless it is 0.
func (s TmuxSession) AwaitExit(exitFile string) {
	s.T.Helper()
	if code := s.AwaitExitCode(exitFile); code != "0" {
		s.T.Fatalf("triage exited %s", code)
	}
}

// StartTmux starts command (a shell command line) in a tmux server of its
// own, named after run, in an 80x24 window with env; the server is killed
// when t ends.
func StartTmux(t *testing.T, run, command string, env []string) TmuxSession {
	t.Helper()
	return StartTmuxAt(t, run, command, env, 80, 24)
}

// StartTmuxAt is StartTmux in a w x h window (columns x rows).
func StartTmuxAt(t *testing.T, run, command string, env []string, w, h int) TmuxSession {
	t.Helper()
	s := TmuxSession{T: t, Socket: "brighter-triage-" + run}
	args := []string{"new-session", "-d", "-s", "triage", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h)}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.Tmux(append(args, command)...)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.Socket, "kill-server").Run() })
	return s
}

// TmuxBrighter is `brighter` running in a TmuxSession (StartBrighterInTmux),
// with its process id, stderr and exit status kept in files of its own.
type TmuxBrighter struct {
	TmuxSession
	pidFile, errFile, exitFile string
}

// StartBrighterInTmux runs `brighter ARGS` (args: shell words, without a
// single quote) in an 80x24 tmux session with env (StartTmux, named after
// run). The shell line writes brighter's process id before it execs it,
// sends its stderr to a file and then writes its exit status; the pane
// stays open a minute after the exit, so its last screen can be read.
func StartBrighterInTmux(t *testing.T, run, args string, env []string) TmuxBrighter {
	t.Helper()
	dir := t.TempDir()
	b := TmuxBrighter{pidFile: filepath.Join(dir, "pid"), errFile: filepath.Join(dir, "stderr"), exitFile: filepath.Join(dir, "exit")}
	command := fmt.Sprintf("sh -c 'echo $$ > %s; exec %s %s 2> %s'; echo $? > %s; sleep 60", b.pidFile, Bin(t), args, b.errFile, b.exitFile)
	b.TmuxSession = StartTmux(t, run, command, env)
	return b
}

// Signal sends sig to brighter (a test awaits its first screen first: the
// process id is written just before it starts).
func (b TmuxBrighter) Signal(sig syscall.Signal) {
	b.T.Helper()
	data, err := os.ReadFile(b.pidFile)
	if err != nil {
		b.T.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		b.T.Fatalf("brighter's process id %q: %v", data, err)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		b.T.Fatalf("signal brighter (%d): %v", pid, err)
	}
}

// AwaitExitCode waits (at most 30 s) for brighter to exit and returns its
// exit status ("0", "130"); the failure shows the screen.
func (b TmuxBrighter) AwaitExitCode() string {
	b.T.Helper()
	return b.TmuxSession.AwaitExitCode(b.exitFile)
}

// Stderr is what brighter wrote to its stderr so far.
func (b TmuxBrighter) Stderr() string {
	b.T.Helper()
	data, err := os.ReadFile(b.errFile)
	if err != nil {
		b.T.Fatal(err)
	}
	return string(data)
}
