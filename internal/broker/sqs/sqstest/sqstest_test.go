package sqstest

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartFailsWithInstallHintWhenFauxqsIsMissing(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	e, err := Start(context.Background())
	if err == nil {
		e.Stop()
		t.Fatal("Start succeeded without node_modules/fauxqs")
	}
	if !strings.Contains(err.Error(), "npm ci") {
		t.Errorf("error %q does not say to run npm ci", err)
	}
}

func TestStartServesHealthOnLoopback(t *testing.T) {
	e, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	if !strings.HasPrefix(e.Endpoint, "http://127.0.0.1:") {
		t.Errorf("endpoint %q is not on 127.0.0.1", e.Endpoint)
	}
	if !healthy(context.Background(), e.Endpoint) {
		t.Error("emulator not healthy")
	}
	e.Stop()
	if healthy(context.Background(), e.Endpoint) {
		t.Error("emulator still answers after Stop")
	}
}

// TestWrapperStartedByHandOutlivesItsStdin: `make sqs-emulator` run in the
// background (stdin at end of file at once) keeps serving until SIGTERM;
// only under sqstest.Start (FAUXQS_EXIT_ON_STDIN_END=1) does the end of
// stdin stop it.
func TestWrapperStartedByHandOutlivesItsStdin(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(root, wrapperPath))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "FAUXQS_PORT=0") // stdin: /dev/null
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatal("the wrapper printed nothing")
	}
	go func() {
		for sc.Scan() {
		}
		exited <- cmd.Wait()
	}()
	endpoint := strings.TrimPrefix(sc.Text(), "fauxqs listening on ")
	if !healthy(context.Background(), endpoint) {
		t.Fatalf("not healthy at %s", endpoint)
	}
	// The observation window in which a wrapper that obeys the end of stdin
	// would have exited (it does so as soon as it is listening).
	select {
	case err := <-exited:
		t.Fatalf("the wrapper exited on its own (%v) with stdin at end of file", err)
	case <-time.After(500 * time.Millisecond):
	}
	if !healthy(context.Background(), endpoint) {
		t.Fatal("not healthy after stdin ended")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the wrapper did not exit on SIGTERM")
	}
}

// TestWrapperBusyPortIsOneLine: `make sqs-emulator` on a port that
// is taken exits 1 with one line naming the port and FAUXQS_PORT, not a
// Node stack trace.
func TestWrapperBusyPortIsOneLine(t *testing.T) {
	e, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	port := e.Endpoint[strings.LastIndexByte(e.Endpoint, ':')+1:]
	cmd := exec.Command("node", filepath.Join(root, wrapperPath))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "FAUXQS_PORT="+port)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("run on a busy port = %v, want exit 1", err)
	}
	got := stderr.String()
	want := "fauxqs: cannot listen on 127.0.0.1:" + port + ": is in use (another emulator?); set FAUXQS_PORT to another port\n"
	if got != want {
		t.Fatalf("stderr = %q, want the one line %q", got, want)
	}
}

// TestStartSurvivesATakenPort: Start makes fauxqs bind port 0 and
// reads back the port it got, so a port another process holds (here the one
// FAUXQS_PORT names in the test's environment) never fails the start.
func TestStartSurvivesATakenPort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)
	t.Setenv("FAUXQS_PORT", heldPort)
	e, err := Start(context.Background())
	if err != nil {
		t.Fatalf("start with FAUXQS_PORT=%s held: %v", heldPort, err)
	}
	defer e.Stop()
	if strings.HasSuffix(e.Endpoint, ":"+heldPort) || !healthy(context.Background(), e.Endpoint) {
		t.Fatalf("emulator at %s (held port %s): want a healthy emulator on another port", e.Endpoint, heldPort)
	}
}
