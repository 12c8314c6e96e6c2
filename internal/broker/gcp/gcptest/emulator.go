package gcptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EmulatorPath is where the Debian package google-cloud-cli-pubsub-emulator
// installs Google's Pub/Sub emulator; when it is not there, the package's
// file list (dpkg -L) is searched, then $PATH.
const EmulatorPath = "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator"

// InstallHint is the one line that says how to install the emulator when it
// cannot be found (make deps does it when Java is present).
const InstallHint = "google-cloud-cli-pubsub-emulator (Google's Pub/Sub emulator) is not installed: run `make deps` or `apt-get update && apt-get install -y google-cloud-cli-pubsub-emulator` (needs Java 11+)"

// errNotInstalled is FindEmulator's error.
var errNotInstalled = errors.New(InstallHint)

// readyLine is what the emulator logs once it accepts gRPC calls.
const readyLine = "Server started, listening on"

// startTimeout bounds the emulator's start-up (about 10 s on 2 idle cores;
// a loaded CI machine is slower).
const startTimeout = 120 * time.Second

// Emulator is one running Google Pub/Sub emulator process (a Java server)
// listening on Addr (host:port on the loopback interface).
type Emulator struct {
	// Addr is the emulator's gRPC address, for PUBSUB_EMULATOR_HOST or a
	// config's connections.gcp.emulatorHost.
	Addr string
	// cmd is the watchdog, the leader of the emulator's process group.
	cmd *exec.Cmd
	// lifeline is the write end of the watchdog's standard input, which
	// only this process holds and never writes: its end, when this process
	// exits however it exits, ends the emulator's process group.
	lifeline io.WriteCloser
	done     chan struct{}
	mu       sync.Mutex
	log      strings.Builder
}

// shared is the test binary's one emulator: started by the first Shared
// call, stopped by StopShared (Main calls it). It is process state by
// nature: one Java server per test binary, not one per test.
var shared struct {
	mu  sync.Mutex
	emu *Emulator
	err error
}

// Main runs the tests of m and then stops the shared emulator if a test
// started it; a package whose tests call Start uses it as its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(gcptest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// Shared returns the test binary's emulator, starting it on the first call
// (about 10 s). A failed start is remembered and returned by every later
// call. The error names what to install when the emulator is missing.
// StartEmulator already retries a port that was taken before Java bound it.
func Shared() (*Emulator, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.emu == nil && shared.err == nil {
		shared.emu, shared.err = StartEmulator(startTimeout)
	}
	return shared.emu, shared.err
}

// StopShared stops the shared emulator if it was started; later Shared
// calls fail. It is safe to call more than once.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.emu != nil {
		shared.emu.Stop()
		shared.emu = nil
	}
	if shared.err == nil {
		shared.err = errors.New("the shared Pub/Sub emulator was stopped")
	}
}

// FindEmulator returns the path of cloud-pubsub-emulator, or an error
// carrying InstallHint.
func FindEmulator() (string, error) {
	if _, err := os.Stat(EmulatorPath); err == nil {
		return EmulatorPath, nil
	}
	if out, err := exec.Command("dpkg", "-L", "google-cloud-cli-pubsub-emulator").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(line, "/bin/cloud-pubsub-emulator") {
				return line, nil
			}
		}
	}
	if p, err := exec.LookPath("cloud-pubsub-emulator"); err == nil {
		return p, nil
	}
	return "", errNotInstalled
}

// bindAttempts bounds how many ports StartEmulator tries: a port picked free
// can be taken by another process before Java binds it.
const bindAttempts = 5

// ErrPortInUse is the error (wrapped, with the emulator's log) of a start
// whose port another process took first: the emulator logged a
// java.net.BindException. StartEmulator retries it on another port.
var ErrPortInUse = errors.New("the Pub/Sub emulator's port is in use")

// failLines are output lines that mean the emulator has failed for good:
// the JVM prints them and then keeps running (Netty's threads are not
// daemons), so the process never exits on its own.
var failLines = []string{"java.net.BindException", `Exception in thread "main"`}

// StartEmulator starts a new emulator on a free loopback port in its own
// process group and waits up to timeout for it to log that it is listening.
// A port taken between the pick and Java's bind (the emulator logs a
// BindException and keeps running) is seen in its output at once: its
// process group is killed and the start retried on another port, up to
// bindAttempts ports. The caller must Stop the result. Errors: the emulator
// is missing (InstallHint), no free port, the process did not start, exited,
// failed (ErrPortInUse after the last attempt) or was not ready in time
// (with its log).
func StartEmulator(timeout time.Duration) (*Emulator, error) {
	bin, err := FindEmulator()
	if err != nil {
		return nil, err
	}
	return startEmulator(bin, freePort, bindAttempts, timeout)
}

// startEmulator is StartEmulator with the emulator's executable, the port
// picker and the number of ports to try given (the tests pass a fake
// emulator and a port they hold).
func startEmulator(bin string, pick func() (int, error), attempts int, timeout time.Duration) (*Emulator, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for range max(attempts, 1) {
		port, err := pick()
		if err != nil {
			return nil, fmt.Errorf("pick a port for the Pub/Sub emulator: %w", err)
		}
		e, err := startOnce(bin, port, time.Until(deadline))
		if err == nil || !errors.Is(err, ErrPortInUse) {
			return e, err
		}
		last = err
	}
	return nil, fmt.Errorf("the Pub/Sub emulator could not bind a port in %d attempts: %w", max(attempts, 1), last)
}

// watchdog is the shell script the emulator runs under, as the leader of
// its process group (sh -c watchdog gcptest-watchdog EMULATOR ARGS...), so
// that a test binary that dies without stopping it (SIGKILL, a crash)
// leaves no emulator behind: the JVM does not exit when its parent does,
// and an orphaned one holds its port and some 300 MB for ever. Its standard
// input is a pipe whose write end only the test binary holds
// (Emulator.lifeline). It starts the emulator with its input from
// /dev/null, and a watcher that reads the pipe until it ends, which the
// kernel does when the test binary exits however it exits, and then
// SIGKILLs the whole group. It waits for the emulator and exits with it,
// so that an emulator that exits is seen at once. It ignores SIGTERM
// (Stop's SIGTERM reaches the emulator, and the shell follows the
// emulator out), and the watcher writes nothing, so that the emulator's
// output ends when the emulator does.
const watchdog = `exec 3<&0 </dev/null
"$@" 3<&- &
emulator=$!
trap '' TERM
{ cat <&3; kill -s KILL 0; } >/dev/null 2>&1 &
exec 3<&-
wait "$emulator"
`

// startOnce starts the emulator at bin on port under the watchdog, in a
// process group of its own, and waits up to timeout for its ready line; on
// any failure the process group is stopped before it returns.
func startOnce(bin string, port int, timeout time.Duration) (*Emulator, error) {
	e := &Emulator{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), done: make(chan struct{})}
	e.cmd = exec.Command("/bin/sh", "-c", watchdog, "gcptest-watchdog", bin, "--host=127.0.0.1", "--port="+strconv.Itoa(port))
	e.cmd.Env = jvmEnv(os.Environ())
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	lifeline, err := e.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start the Pub/Sub emulator %s: %w", bin, err)
	}
	e.lifeline = lifeline
	pr, pw := io.Pipe()
	e.cmd.Stdout, e.cmd.Stderr = pw, pw
	if err := e.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Pub/Sub emulator %s: %w", bin, err)
	}
	ready := make(chan struct{})
	failed := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			e.mu.Lock()
			if e.log.Len() < 256*1024 {
				e.log.WriteString(line + "\n")
			}
			e.mu.Unlock()
			if signalled {
				continue
			}
			if strings.Contains(line, readyLine) {
				signalled = true
				close(ready)
				continue
			}
			for _, f := range failLines {
				if strings.Contains(line, f) {
					signalled = true
					failed <- line
					break
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		_ = e.cmd.Wait()
		_ = pw.Close()
		close(e.done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ready:
		return e, nil
	case line := <-failed:
		e.kill()
		if strings.Contains(line, "BindException") {
			return nil, fmt.Errorf("%w: port %d: %s", ErrPortInUse, port, e.Log())
		}
		return nil, fmt.Errorf("the Pub/Sub emulator failed on port %d: %s", port, e.Log())
	case <-e.done:
		e.kill()
		return nil, fmt.Errorf("the Pub/Sub emulator exited before it was ready: %s", e.Log())
	case <-timer.C:
		e.kill()
		return nil, fmt.Errorf("the Pub/Sub emulator was not ready within %v (a loaded machine slows its start; the log so far): %s", timeout, e.Log())
	}
}

// JVMOptsEnv is the variable of the emulator's start script for JVM
// options of its own (the script also reads JAVA_OPTS).
const JVMOptsEnv = "CLOUD_PUBSUB_EMULATOR_OPTS"

// JVMOpts are the JVM options a test emulator runs with when the
// environment sets no JVMOptsEnv: the client compiler only (C1), never the
// optimizing one (C2). A test binary's emulator lives for minutes at most,
// and C2 spent more CPU compiling the emulator's code than that code then
// saved: the Pub/Sub transport's tests (internal/broker/gcp, emulator
// included) took 17.3-19.2 s of CPU with both compilers and 11.5-11.9 s
// with C1 alone, in 114-124 s of wall time against 110-113 s
// (docs/testing.md, run 11).
const JVMOpts = "-XX:TieredStopAtLevel=1"

// jvmEnv returns env with JVMOptsEnv set to JVMOpts, unless env sets it
// already (a developer's own JVM options win).
func jvmEnv(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, JVMOptsEnv+"=") {
			return env
		}
	}
	return append(env[:len(env):len(env)], JVMOptsEnv+"="+JVMOpts)
}

// Log returns what the emulator has printed so far (up to 256 KiB).
func (e *Emulator) Log() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// Stop ends the emulator's whole process group (the Java server spawns
// children): SIGTERM, then SIGKILL after 5 s. It returns once the process
// has exited.
func (e *Emulator) Stop() {
	pgid := e.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-e.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-e.done
	}
	// Children that outlived the leader.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// kill ends a failed start's whole process group at once (SIGKILL: there is
// nothing to shut down cleanly) and returns once the leader has exited.
func (e *Emulator) kill() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.done
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
