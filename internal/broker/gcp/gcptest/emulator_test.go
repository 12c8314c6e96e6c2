package gcptest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/brightergo/brighter/internal/polltest"
)

// bindFailure is what the real emulator prints when its port is taken (the
// lines are copied from a real run): the BindException, after which the JVM
// keeps running.
var bindFailure = []string{
	"This is the Google Pub/Sub fake.",
	"Implementation may be incomplete or differ from the real system.",
	`Exception in thread "main" java.net.BindException: Address already in use`,
	"\tat java.base/sun.nio.ch.Net.bind0(Native Method)",
}

// fakeEmulator writes a shell script that stands in for cloud-pubsub-emulator:
// it prints lines (bindFailure, or a ready line) and keeps running, as the
// JVM does. It also starts a child that the whole process group must take
// down, and writes that child's pid to the returned file.
func fakeEmulator(t *testing.T, lines ...string) (bin, childPID string) {
	t.Helper()
	dir := t.TempDir()
	bin, childPID = filepath.Join(dir, "cloud-pubsub-emulator"), filepath.Join(dir, "child.pid")
	out := filepath.Join(dir, "output")
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
sleep 300 &
echo $! > ` + childPID + `
cat ` + out + `
wait
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, childPID
}

// TestStartEmulator_FailedBindReportedAtOnce: an emulator that logs
// a BindException and keeps running is reported as ErrPortInUse in under a
// second, not after the start timeout, and its whole process group is gone.
func TestStartEmulator_FailedBindReportedAtOnce(t *testing.T) {
	bin, childPID := fakeEmulator(t, bindFailure...)
	began := time.Now()
	e, err := startEmulator(bin, freePort, 1, 2*time.Minute)
	took := time.Since(began)
	if err == nil {
		e.Stop()
		t.Fatal("the start succeeded, want ErrPortInUse")
	}
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("error %v, want ErrPortInUse with the emulator's log", err)
	}
	if took >= time.Second {
		t.Fatalf("the failed bind was reported after %v, want under 1s", took)
	}
	pid := readChildPID(t, childPID)
	// The child was SIGKILLed with its group: gone, or a zombie until its
	// new parent reaps it.
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the emulator's child %d outlived the failed start", pid)
		}
	}
}

// readChildPID returns the pid the fake emulator wrote to file.
func readChildPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the fake emulator wrote no child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// procStat returns the state (R, S, Z, ...) and the process group of pid,
// read from /proc/PID/stat; ok is false when there is no such process.
func procStat(pid int) (state string, pgid int, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "", 0, false
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return "", 0, false
	}
	s, err := p.Stat()
	if err != nil {
		return "", 0, false
	}
	return s.State, s.PGRP, true
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	if !ok {
		return syscall.Kill(pid, 0) == nil
	}
	return state != "Z"
}

// groupMembers returns the processes of group pgid that are alive: not
// zombies (an orphan stays one until its new parent reaps it).
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatalf("list the processes: %v", err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		t.Fatalf("list the processes: %v", err)
	}
	var pids []int
	for _, p := range procs {
		// A process that exited since the listing has no stat: skip it.
		if s, err := p.Stat(); err == nil && s.PGRP == pgid && s.State != "Z" {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// TestStartEmulator_ExitReportedAtOnce: an emulator that exits before it
// is ready (a missing Java, say) is reported at once with its log, not
// after the start timeout: the watchdog exits with it.
func TestStartEmulator_ExitReportedAtOnce(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cloud-pubsub-emulator")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'ERROR: JAVA_HOME is not set'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	e, err := startEmulator(bin, freePort, 1, 30*time.Second)
	took := time.Since(began)
	if err == nil {
		e.Stop()
		t.Fatal("the start succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "JAVA_HOME") {
		t.Fatalf("error %v, want the exit reported with the emulator's log", err)
	}
	if took >= 5*time.Second {
		t.Fatalf("the exit was reported after %v, want at once", took)
	}
}

// TestStartEmulator_RetriesUpToTheBound: every port taken means one
// start per attempt and then an error that wraps ErrPortInUse, never a hang.
func TestStartEmulator_RetriesUpToTheBound(t *testing.T) {
	bin, _ := fakeEmulator(t, bindFailure...)
	picks := 0
	pick := func() (int, error) { picks++; return freePort() }
	_, err := startEmulator(bin, pick, 3, 2*time.Minute)
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("error %v, want ErrPortInUse after 3 attempts", err)
	}
	if picks != 3 {
		t.Fatalf("%d ports tried, want 3", picks)
	}
}

// TestStartEmulator_SurvivesATakenPort starts Google's real
// emulator on a port this test holds (as if another process took it between
// the pick and Java's bind): the BindException is seen, the start moves to
// another port and the emulator there accepts connections.
func TestStartEmulator_SurvivesATakenPort(t *testing.T) {
	bin, err := FindEmulator()
	if err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	var picked []int
	pick := func() (int, error) {
		if len(picked) == 0 {
			picked = append(picked, heldPort)
			return heldPort, nil
		}
		p, err := freePort()
		picked = append(picked, p)
		return p, err
	}
	e, err := startEmulator(bin, pick, 3, startTimeout)
	if err != nil {
		t.Fatalf("start with the first port taken: %v", err)
	}
	defer e.Stop()
	if len(picked) != 2 || e.Addr != net.JoinHostPort("127.0.0.1", strconv.Itoa(picked[1])) {
		t.Fatalf("ports tried %v, emulator at %s: want the held port %d and then one more", picked, e.Addr, heldPort)
	}
	c, err := net.DialTimeout("tcp", e.Addr, 10*time.Second)
	if err != nil {
		t.Fatalf("the emulator at %s does not accept connections: %v", e.Addr, err)
	}
	_ = c.Close()
}

// TestSharedEmulatorRunsWithJVMOpts: the test binary's emulator is a JVM
// started with JVMOpts (the start script execs java, so the process the
// watchdog started is the JVM), and a JVMOptsEnv already in the environment
// is left as it is.
func TestSharedEmulatorRunsWithJVMOpts(t *testing.T) {
	e, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	var cmdlines [][]string
	for _, pid := range groupMembers(t, e.cmd.Process.Pid) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			continue // gone since
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) == "java" {
			if !slices.Contains(args, JVMOpts) {
				t.Fatalf("the emulator's command line is %q, want java with %s", args, JVMOpts)
			}
			cmdlines = append(cmdlines, args)
		}
	}
	if len(cmdlines) != 1 {
		t.Fatalf("%d JVMs in the emulator's process group %v, want one", len(cmdlines), cmdlines)
	}
	own := []string{"PATH=/usr/bin", JVMOptsEnv + "=-Xint"}
	if got := jvmEnv(own); !slices.Equal(got, own) {
		t.Fatalf("jvmEnv(%q) = %q, want it unchanged", own, got)
	}
	if got := jvmEnv([]string{"PATH=/usr/bin"}); !slices.Equal(got, []string{"PATH=/usr/bin", JVMOptsEnv + "=" + JVMOpts}) {
		t.Fatalf("jvmEnv without %s = %q, want %s=%s added", JVMOptsEnv, got, JVMOptsEnv, JVMOpts)
	}
}

// killedParentEnv, set, makes TestStartEmulator_EndsWithItsKilledTestBinary
// the child test binary: the value is the emulator it starts.
const killedParentEnv = "GCPTEST_KILLED_PARENT_EMULATOR"

// groupLine is how the child test binary reports its emulator's process
// group on stdout.
const groupLine = "emulator process group "

// TestStartEmulator_EndsWithItsKilledTestBinary: a test binary killed by
// SIGKILL (go test -timeout, a CI job's timeout) leaves no emulator behind.
// The test runs itself as a child test binary that starts a (fake)
// emulator, which has a child of its own, and reports its process group;
// it kills that binary with SIGKILL and requires every process of the
// group gone within 5 s (the emulator is orphaned for ever otherwise,
// holding its port).
func TestStartEmulator_EndsWithItsKilledTestBinary(t *testing.T) {
	if bin := os.Getenv(killedParentEnv); bin != "" {
		e, err := startEmulator(bin, freePort, 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Stop()
		fmt.Printf("%s%d\n", groupLine, e.cmd.Process.Pid)
		time.Sleep(time.Minute) // the parent kills this binary long before
		return
	}
	bin, childPID := fakeEmulator(t, readyLine+" 127.0.0.1")
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), killedParentEnv+"="+bin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	reported := make(chan int, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, ok := strings.CutPrefix(sc.Text(), groupLine); ok {
				if pgid, err := strconv.Atoi(n); err == nil {
					reported <- pgid
				}
			}
		}
		_ = cmd.Wait()
	}()
	var pgid int
	select {
	case pgid = <-reported:
	case <-exited:
		t.Fatalf("the child test binary exited without starting the emulator; stderr:\n%s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("the child test binary started no emulator within a minute; stderr:\n%s", stderr.String())
	}
	t.Cleanup(func() {
		if len(groupMembers(t, pgid)) > 0 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	child := readChildPID(t, childPID)
	// Before the kill the group runs, the emulator's own child in it: the
	// check below would otherwise prove nothing.
	if _, g, ok := procStat(child); !ok || g != pgid {
		t.Fatalf("the emulator's child %d is not running in the emulator's process group %d", child, pgid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	var left []int
	t.Cleanup(func() {
		if t.Failed() && len(left) > 0 {
			t.Logf("processes of the group still running: %v", left)
		}
	})
	polltest.Until(t, 5*time.Second, fmt.Sprintf("the emulator's process group %d to end after its test binary was SIGKILLed", pgid), func() bool {
		left = groupMembers(t, pgid)
		return len(left) == 0
	})
}
