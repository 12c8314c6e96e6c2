package sqstest

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMakeSQSEmulatorInstallsOnlyWhenNeeded: `make sqs-emulator`
// runs npm ci only when node_modules is missing or older than
// package-lock.json (make -n shows what it would run; -W pretends the lock
// file changed), so starting an emulator never deletes node_modules under a
// running test.
func TestMakeSQSEmulatorInstallsOnlyWhenNeeded(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	plan := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-n", "--no-print-directory"}, args...)...)
		cmd.Dir = root
		cmd.Env = outsideMake(os.Environ())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := plan("sqs-emulator"); strings.Contains(out, "npm ci") || !strings.Contains(out, "serve-local.mjs") {
		t.Errorf("make sqs-emulator with node_modules up to date would run:\n%s\nwant the emulator and no npm ci", out)
	}
	if out := plan("-W", "package-lock.json", "sqs-emulator"); !strings.Contains(out, "npm ci") {
		t.Errorf("make sqs-emulator after package-lock.json changed would run:\n%s\nwant npm ci", out)
	}
}

// TestMakeSQSEmulatorStopsWithMake: fauxqs started by `make
// sqs-emulator` stops with make, so no orphan keeps the port: kill PID
// (SIGTERM to make alone, which make passes on to its child), kill -9 PID
// (make dies at once; fauxqs sees its parent gone), Ctrl-C (SIGINT to the
// terminal's process group) and a closed terminal (SIGHUP to the group).
func TestMakeSQSEmulatorStopsWithMake(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Never let this test run npm ci under the package's other tests.
	plan := exec.Command("make", "-n", "sqs-emulator")
	plan.Dir = root
	if out, err := plan.CombinedOutput(); err != nil || strings.Contains(string(out), "npm ci") {
		t.Fatalf("make sqs-emulator would install first (%v): node_modules is older than package-lock.json; run make deps\n%s", err, out)
	}
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		group bool
	}{
		{"kill PID", syscall.SIGTERM, false},
		{"kill -9 PID", syscall.SIGKILL, false},
		{"Ctrl-C", syscall.SIGINT, true},
		{"terminal closed", syscall.SIGHUP, true},
	} {
		sig := c.sig
		t.Run(c.name, func(t *testing.T) {
			// --no-print-directory and no inherited MAKEFLAGS/MAKELEVEL: under
			// `make test` a nested make prints "Entering directory" first.
			cmd := exec.Command("make", "--no-print-directory", "sqs-emulator", "FAUXQS_PORT=0")
			cmd.Dir = root
			cmd.Env = outsideMake(os.Environ())
			// A process group of its own, as a shell job has: Ctrl-C signals
			// the group; kill PID make alone.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			exited := make(chan struct{})
			sc := bufio.NewScanner(out)
			if !sc.Scan() {
				t.Fatalf("make sqs-emulator printed nothing: %v", sc.Err())
			}
			first := sc.Text() // read before the drain below scans on
			go func() {
				for sc.Scan() {
				}
				_ = cmd.Wait()
				close(exited)
			}()
			endpoint, ok := strings.CutPrefix(first, "fauxqs listening on ")
			if !ok {
				t.Fatalf("first line %q, want fauxqs listening on ...", first)
			}
			if !healthy(context.Background(), endpoint) {
				t.Fatalf("not healthy at %s", endpoint)
			}
			target := cmd.Process.Pid
			if c.group {
				target = -target
			}
			if err := syscall.Kill(target, sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("make did not exit on %v", sig)
			}
			// stdout closes when every writer is gone: make and fauxqs.
			addr := strings.TrimPrefix(endpoint, "http://")
			deadline := time.Now().Add(10 * time.Second)
			for {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err != nil {
					break // refused: the port is free
				}
				_ = c.Close()
				if time.Now().After(deadline) {
					t.Fatalf("%s still accepts connections 10s after make got %v: an orphaned fauxqs holds the port", addr, sig)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// outsideMake returns env without the variables a parent make exports
// (MAKEFLAGS, MFLAGS, MAKELEVEL), so a make the test starts behaves as one
// started from a shell.
func outsideMake(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			out = append(out, kv)
		}
	}
	return out
}
