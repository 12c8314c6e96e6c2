package gcptest

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEmulator writes a shell script that stands in for cloud-pubsub-emulator
// and prints what the real one prints when its port is taken (the lines are
// copied from a real run): the BindException, after which the JVM keeps
// running. It also starts a child that the whole process group must take
// down, and writes that child's pid to the returned file.
func fakeEmulator(t *testing.T) (bin, childPID string) {
	t.Helper()
	dir := t.TempDir()
	bin, childPID = filepath.Join(dir, "cloud-pubsub-emulator"), filepath.Join(dir, "child.pid")
	script := `#!/bin/sh
sleep 300 &
echo $! > ` + childPID + `
echo "This is the Google Pub/Sub fake."
echo "Implementation may be incomplete or differ from the real system."
echo 'Exception in thread "main" java.net.BindException: Address already in use'
echo '	at java.base/sun.nio.ch.Net.bind0(Native Method)'
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
	bin, childPID := fakeEmulator(t)
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
	b, err := os.ReadFile(childPID)
	if err != nil {
		t.Fatalf("the fake emulator wrote no child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child was SIGKILLed with its group: gone, or a zombie until its
	// new parent reaps it.
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the emulator's child %d outlived the failed start", pid)
		}
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) S ...: the state follows the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestStartEmulator_RetriesUpToTheBound: every port taken means one
// start per attempt and then an error that wraps ErrPortInUse, never a hang.
func TestStartEmulator_RetriesUpToTheBound(t *testing.T) {
	bin, _ := fakeEmulator(t)
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
// helper started is the JVM), and a JVMOptsEnv already in the environment is
// left as it is.
func TestSharedEmulatorRunsWithJVMOpts(t *testing.T) {
	e, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(e.cmd.Process.Pid) + "/cmdline")
	if err != nil {
		t.Fatalf("read the emulator's command line: %v", err)
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) == 0 || filepath.Base(args[0]) != "java" || !slices.Contains(args, JVMOpts) {
		t.Fatalf("the emulator's command line is %q, want java with %s", args, JVMOpts)
	}
	own := []string{"PATH=/usr/bin", JVMOptsEnv + "=-Xint"}
	if got := jvmEnv(own); !slices.Equal(got, own) {
		t.Fatalf("jvmEnv(%q) = %q, want it unchanged", own, got)
	}
	if got := jvmEnv([]string{"PATH=/usr/bin"}); !slices.Equal(got, []string{"PATH=/usr/bin", JVMOptsEnv + "=" + JVMOpts}) {
		t.Fatalf("jvmEnv without %s = %q, want %s=%s added", JVMOptsEnv, got, JVMOptsEnv, JVMOpts)
	}
}
