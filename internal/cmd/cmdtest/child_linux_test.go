package cmdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/brightergo/brighter/internal/polltest"
)

// killedParentEnv, set, makes TestStartBrighter_EndsWithItsKilledTestBinary
// the child test binary: the value is the file it writes its brighter's
// process id to.
const killedParentEnv = "CMDTEST_KILLED_PARENT_PIDFILE"

// running reports whether process pid exists and is not a zombie (an
// orphan whose new parent has not reaped it yet has ended).
func running(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && st.State != "Z" && st.State != "X"
}

// TestStartBrighter_EndsWithItsKilledTestBinary: a `brighter` that
// StartBrighter started (a consume, which runs until it is stopped) does
// not outlive a test binary killed by SIGKILL (go test -timeout, a CI
// job's timeout), whose cleanups never run. The test runs itself as a
// child test binary that starts a `brighter` (a script that sleeps) and
// writes its process id; it kills that binary with SIGKILL and requires
// the `brighter` gone within 5 s (it is orphaned otherwise).
func TestStartBrighter_EndsWithItsKilledTestBinary(t *testing.T) {
	if pidFile := os.Getenv(killedParentEnv); pidFile != "" {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "brighter"), []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
		p := StartBrighter(t, dir, nil, "consume")
		tmp := pidFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(p.cmd.Process.Pid)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, pidFile); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute) // the parent kills this binary long before
		return
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), killedParentEnv+"="+pidFile)
	var out LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	var pid int
	polltest.Until(t, time.Minute, "the child test binary to start brighter", func() bool {
		select {
		case <-exited:
			t.Fatalf("the child test binary exited without starting brighter:\n%s", out.String())
		default:
		}
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
		return err == nil && pid > 0
	})
	t.Cleanup(func() {
		if running(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// Before the kill brighter runs: the check below would otherwise prove
	// nothing.
	if !running(pid) {
		t.Fatalf("brighter (pid %d) is not running before its test binary is killed", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	polltest.Until(t, 5*time.Second, "brighter (pid "+strconv.Itoa(pid)+") to end after its test binary was SIGKILLed", func() bool { return !running(pid) })
}

// TestStartChild_OutlivesTheThreadThatAskedForIt: Linux sends the
// parent-death signal when the OS thread that started the child ends, not
// the process. A child asked for by a goroutine locked to its thread,
// which then exits and so ends the thread, keeps running: StartChild
// starts it from a thread of its own. (The main thread is never ended, so
// the goroutine asks from another one.)
func TestStartChild_OutlivesTheThreadThatAskedForIt(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	type started struct {
		tid  int
		done <-chan error
		err  error
	}
	ch := make(chan started, 1)
	var s started
	for s.tid == 0 {
		go func() {
			runtime.LockOSThread() // never unlocked off the main thread: the thread ends with this goroutine
			if syscall.Gettid() == os.Getpid() {
				runtime.UnlockOSThread()
				ch <- started{}
				return
			}
			done, err := StartChild(cmd)
			ch <- started{syscall.Gettid(), done, err}
		}()
		if s = <-ch; s.err != nil {
			t.Fatal(s.err)
		}
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	task := fmt.Sprintf("/proc/self/task/%d", s.tid)
	polltest.Until(t, 5*time.Second, "the thread that asked for the child to end", func() bool {
		_, err := os.Stat(task)
		return os.IsNotExist(err)
	})
	polltest.Stays(t, time.Second, "the child was killed when the thread that asked for it ended", func() bool { return len(s.done) == 0 })
}
