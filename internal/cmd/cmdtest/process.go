package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartChild starts cmd, a process a test runs (a `brighter consume`
// above all, which runs until it is stopped), so that it cannot outlive
// the test binary: on Linux the kernel SIGKILLs it when the test binary
// exits however it exits, go test -timeout and SIGKILL included
// (TestStartBrighter_EndsWithItsKilledTestBinary); elsewhere it is only
// started. The channel receives cmd.Wait's result once the process has
// exited (it holds that one value): the caller must not call cmd.Wait
// itself. The error is cmd.Start's.
func StartChild(cmd *exec.Cmd) (<-chan error, error) { return startChild(cmd) }

// Process is a `brighter` process a test started (StartBrighter), to
// signal and wait for.
type Process struct {
	cmd *exec.Cmd
	// Stdout and Stderr are what the process wrote so far.
	Stdout, Stderr *LockedBuffer
	exited         chan int
}

// StartBrighter starts `brighter args...` in dir with Env plus env
// (KEY=VALUE entries, later ones win), with Start.
func StartBrighter(t *testing.T, dir string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command("brighter", args...)
	cmd.Dir = dir
	cmd.Env = append(Env(), env...)
	return Start(t, cmd)
}

// Start starts cmd, a process the caller has made (its path, arguments,
// directory and environment: `brighter` through a launcher such as nohup,
// say), with StartChild, its stdout and stderr kept in the Process; the
// process is killed when t ends if it still runs.
func Start(t *testing.T, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{cmd: cmd, Stdout: &LockedBuffer{}, Stderr: &LockedBuffer{}, exited: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	done, err := StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- exitCode(<-done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// AwaitStdout waits until the process's stdout holds text, failing t when
// it exits first or 30s pass.
func (p *Process) AwaitStdout(t *testing.T, text string) {
	t.Helper()
	p.Await(t, fmt.Sprintf("writing %q", text), func() bool { return strings.Contains(p.Stdout.String(), text) })
}

// Await waits until cond holds (it is called at once, then every 10ms),
// failing t when the process exits first or 30s pass; what names the
// awaited state for the failure ("holding a message").
func (p *Process) Await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case code := <-p.exited:
			p.exited <- code
			t.Fatalf("brighter exited %d before %s; stdout:\n%s\nstderr:\n%s", code, what, p.Stdout.String(), p.Stderr.String())
		case <-deadline:
			t.Fatalf("brighter was not %s within 30s; stdout:\n%s\nstderr:\n%s", what, p.Stdout.String(), p.Stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) { _ = p.cmd.Process.Signal(sig) }

// Wait waits for the process to exit and returns its exit code (-1 when a
// signal killed it) and how long it took; t fails after a minute.
func (p *Process) Wait(t *testing.T) (code int, took time.Duration) {
	t.Helper()
	start := time.Now()
	code, exited := p.ExitedWithin(time.Minute)
	if !exited {
		_ = p.cmd.Process.Kill()
		t.Fatalf("brighter still running after a minute; stderr:\n%s", p.Stderr.String())
	}
	return code, time.Since(start)
}

// ExitedWithin waits at most d for the process to exit: its exit code (-1
// when a signal killed it) and true once it has, false when it still runs
// after d (it is left running).
func (p *Process) ExitedWithin(d time.Duration) (code int, exited bool) {
	select {
	case code := <-p.exited:
		p.exited <- code
		return code, true
	case <-time.After(d):
		return 0, false
	}
}
