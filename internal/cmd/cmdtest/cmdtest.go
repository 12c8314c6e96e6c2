// Package cmdtest is the test support the command packages share: the
// TestMain that puts a `brighter` command on the PATH for the tests that
// start it as a process (Main: a plain build of ./cmd/brighter, or the test
// binary itself run through the entry point the test package gives), the fauxqs
// emulator the tests of one binary share, helpers to run `brighter` as a
// process and read what it says, and a tmux session to drive the terminal
// screens. It is for tests only.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package cmdtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// WaitBoundParallel is how many of a test package's parallel tests and
// scripts run at once. Most of their time is spent waiting, not computing:
// on leases, visibility timeouts and Pub/Sub's 10 s ack deadlines, on
// back-offs, and on `brighter` processes that sleep in a handler or wait
// for a signal. At the default (GOMAXPROCS, 2 on a 2-core CI machine) the
// command tests, then one package, took 13m20s on a quiet machine.
const WaitBoundParallel = 6

// SubprocessEnv is the environment variable that chooses the `brighter`
// the tests start as a process (testscript's `exec brighter`, Bin,
// BrighterExit, exec.Command("brighter", ...)): unset, empty or
// SubprocessBuild, a plain build of ./cmd/brighter (BuildBrighter); SubprocessSelf,
// the test binary itself, with the race detector when the tests were built
// with -race (make test-stress runs so). Any other value fails the test
// binary before its first test.
const SubprocessEnv = "BRIGHTER_TEST_SUBPROCESS"

// The values of SubprocessEnv.
const (
	// SubprocessBuild: `brighter` is ./cmd/brighter built without -race
	// (CGO_ENABLED=0, -trimpath, as make build builds it), once per test
	// binary. A -race binary costs the CPU of several plain ones, and the
	// command tests start `brighter` hundreds of times: with the test binary
	// as `brighter`, the suite was bound by the CPU on 2 cores.
	SubprocessBuild = "build"
	// SubprocessSelf: `brighter` is the test binary (testscript.Main's copy
	// of it), so a data race in a code path only a process reaches (signal
	// handling, a SIGKILL's journal, the tmux consoles) is reported there.
	SubprocessSelf = "self"
)

// Main is a command test package's TestMain. When testscript runs the
// test binary as the `brighter` command (SubprocessSelf), it runs brighter
// (the exit code of the command line os.Args[1:]). Otherwise it runs the
// tests with WaitBoundParallel, fauxqs's static credentials in the
// environment, the `brighter` that SubprocessEnv chooses first on the PATH,
// and the shared Pub/Sub emulator stopped at the end.
func Main(m *testing.M, brighter func() int) {
	testscript.Main(stopPubSubAfter{m}, map[string]func(){
		"brighter": func() { os.Exit(brighter()) },
	})
}

// stopPubSubAfter runs the tests, then stops the Google Pub/Sub emulator
// that the Pub/Sub tests of the binary share (gcptest).
type stopPubSubAfter struct{ m *testing.M }

func (s stopPubSubAfter) Run() int {
	// Here, not in Main: when testscript runs this binary as
	// `brighter`, its arguments are the command's, not test flags.
	if err := pumptest.WaitBoundParallel(WaitBoundParallel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// fauxqs's static credentials for the in-process SQS clients, set once
	// here so that a parallel test needs no t.Setenv (which a parallel
	// test may not call); a test that needs others sets them, serially.
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true"} {
		if _, ok := os.LookupEnv(k); !ok {
			_ = os.Setenv(k, v)
		}
	}
	switch mode := os.Getenv(SubprocessEnv); mode {
	case SubprocessSelf:
		// testscript.Main put this binary on the PATH as `brighter`.
	case "", SubprocessBuild:
		dir, err := os.MkdirTemp("", "brighter-subprocess-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "cmdtest: %v\n", err)
			return 1
		}
		defer func() { _ = os.RemoveAll(dir) }()
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		err = BuildBrighter(ctx, filepath.Join(dir, "brighter"))
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "cmdtest: %v (%s=%s runs the test binary as brighter instead)\n", err, SubprocessEnv, SubprocessSelf)
			return 1
		}
		_ = os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	default:
		fmt.Fprintf(os.Stderr, "cmdtest: %s=%q: want %q (the default) or %q\n", SubprocessEnv, mode, SubprocessBuild, SubprocessSelf)
		return 1
	}
	state, err := isolateState()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cmdtest: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(state.root) }()
	code := s.m.Run()
	gcptest.StopShared()
	if err := state.check(); err != nil {
		fmt.Fprintf(os.Stderr, "cmdtest: %v\n", err)
		return 1
	}
	return code
}

// testState is where Main keeps the state of the tests' `brighter`
// (dlq's replay journals, retry history and group notes): a temporary
// directory per test binary, never the developer's home.
type testState struct {
	// root holds home and state; removed when the tests end.
	root string
}

// isolatedRoot is Main's temporary directory ("" before Main made it):
// Env, StateDir and HomeDir name directories under it.
var isolatedRoot string

// isolateState makes the temporary HOME and XDG_STATE_HOME of the test
// binary and puts them in its environment, so that a `brighter` run in
// process or as a process (with Env, os.Environ or os.LookupEnv) keeps
// its state there. The Go toolchain's directories that default under HOME
// (GOCACHE, GOPATH, GOENV) are pinned to the real ones first: a test that
// builds keeps its cache.
func isolateState() (*testState, error) {
	root, err := os.MkdirTemp("", "brighter-test-home-")
	if err != nil {
		return nil, fmt.Errorf("make the tests' state directory: %w", err)
	}
	pin := map[string]func() (string, error){
		"GOCACHE": func() (string, error) { d, err := os.UserCacheDir(); return filepath.Join(d, "go-build"), err },
		"GOENV":   func() (string, error) { d, err := os.UserConfigDir(); return filepath.Join(d, "go", "env"), err },
		"GOPATH":  func() (string, error) { d, err := os.UserHomeDir(); return filepath.Join(d, "go"), err },
	}
	for k, dir := range pin {
		if os.Getenv(k) != "" {
			continue
		}
		if d, err := dir(); err == nil {
			_ = os.Setenv(k, d)
		}
	}
	isolatedRoot = root
	for _, d := range []string{HomeDir(), StateDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("make the tests' state directory: %w", err)
		}
	}
	_ = os.Setenv("HOME", HomeDir())
	_ = os.Setenv("XDG_STATE_HOME", StateDir())
	return &testState{root: root}, nil
}

// check returns an error when a test's `brighter` kept dlq state under
// HOME rather than XDG_STATE_HOME: without the temporary HOME that test
// would have written under the developer's real home
// (~/.local/state/brighter).
func (s *testState) check() error {
	leaked := filepath.Join(HomeDir(), ".local", "state", "brighter")
	if _, err := os.Stat(leaked); err == nil {
		return fmt.Errorf("a test ran brighter without the tests' XDG_STATE_HOME: it wrote %s, which outside the tests is the real ~/.local/state/brighter (start brighter with cmdtest.Env)", leaked)
	}
	return nil
}

// HomeDir is the HOME of the tests' `brighter` (Env) and of the test
// binary itself under Main: a temporary directory, so that nothing a test
// runs writes under the developer's real home.
func HomeDir() string {
	return filepath.Join(testRoot(), "home")
}

// StateDir is the XDG_STATE_HOME of the tests' `brighter` (Env) and of the
// test binary itself under Main: dlq's replay journals, retry history and
// group notes are under StateDir()/brighter/replay.
func StateDir() string {
	return filepath.Join(testRoot(), "state")
}

// testRoot is Main's temporary directory, or (a test binary without Main)
// one under the system's temporary directory shared by such binaries.
func testRoot() string {
	if isolatedRoot != "" {
		return isolatedRoot
	}
	return filepath.Join(os.TempDir(), "brighter-test-home")
}

// buildTimeout bounds BuildBrighter in Main: a build of the whole
// dependency tree on a loaded 2-core machine when the build cache is cold
// (make test runs make build first, which fills it).
const buildTimeout = 10 * time.Minute

// BuildBrighter writes to out the `brighter` of the module this test binary
// runs in: ./cmd/brighter built as make build builds it (CGO_ENABLED=0,
// -trimpath; no -race, whatever GOFLAGS says; no -ldflags version and no VCS
// stamping, so `brighter version` says what the test binary says). Test
// binaries of the same module share one build under the system's temporary
// directory, made under a file lock: the Go toolchain links it again only
// when the sources changed, and each caller gets a copy of its own, which a
// later build for other sources cannot change under it. It returns an error
// naming the build's output when the build fails or ctx ends first.
func BuildBrighter(ctx context.Context, out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(root))
	shared := filepath.Join(os.TempDir(), fmt.Sprintf("brighter-test-build-%x", sum[:6]))
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return fmt.Errorf("build brighter: %w", err)
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(shared, "lock")).Lock()
	if err != nil {
		return fmt.Errorf("build brighter: lock %s: %w", shared, err)
	}
	defer unlock()
	bin := filepath.Join(shared, "brighter")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", bin, "./cmd/brighter")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build brighter: go build ./cmd/brighter in %s: %w\n%s", root, err, b)
	}
	if err := copyExecutable(bin, out); err != nil {
		return fmt.Errorf("build brighter: %w", err)
	}
	return nil
}

// moduleRoot is the directory of the go.mod above the working directory
// (go test runs a test binary in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("module root: %w", err)
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("module root: no go.mod above %s", dir)
		}
		d = parent
	}
}

// copyExecutable copies the file from to a new executable file to.
func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	defer func() { _ = src.Close() }()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return fmt.Errorf("copy %s to %s: %w", from, to, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", from, to, err)
	}
	return nil
}

var (
	sqsOnce sync.Once
	sqsEmu  *sqstest.Emulator
	sqsErr  error
)

// SharedSQS starts one fauxqs emulator for the tests of this binary that
// need it. It is not stopped explicitly: the wrapper exits when the test
// binary's end closes its stdin.
func SharedSQS(t testing.TB) *sqstest.Emulator {
	t.Helper()
	sqsOnce.Do(func() { sqsEmu, sqsErr = sqstest.Start(context.Background()) })
	if sqsErr != nil {
		t.Fatalf("start the SQS emulator: %v", sqsErr)
	}
	return sqsEmu
}

// Env is the environment of a `brighter` process a test starts: this
// process's, with fauxqs's static credentials, no colour, and HOME and
// XDG_STATE_HOME the tests' temporary ones (HomeDir, StateDir), so that
// dlq's replay journals, retry history and notes never reach the
// developer's home.
func Env() []string {
	return append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true", "NO_COLOR=1",
		"HOME="+HomeDir(), "XDG_STATE_HOME="+StateDir())
}

// Bin is the `brighter` command on the PATH that Main set up: a plain build
// of ./cmd/brighter, or this test binary (SubprocessEnv).
func Bin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("brighter")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BrighterExit runs `brighter args...` as a process in dir with Env
// (StartChild) and returns its exit code, stdout and stderr; it fails t
// when the process cannot be run or takes more than a minute.
func BrighterExit(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "brighter", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	var stdout, stderr LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done, err := StartChild(cmd)
	if err == nil {
		err = <-done
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("brighter %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// LockedBuffer is a bytes.Buffer safe for the CLI's log writers and a
// test's reads.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// FakeIO returns IOStreams over buffers, with stdin reading in, stdout a
// terminal with colour when color is set, and an environment holding only
// XDG_STATE_HOME (StateDir: dlq's state never reaches the real home).
func FakeIO(in string, color bool) (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &iostreams.IOStreams{
		In: strings.NewReader(in), Out: &out, ErrOut: &errOut,
		OutTTY: color, Color: color,
		Getenv: func(name string) (string, bool) {
			if name == "XDG_STATE_HOME" {
				return StateDir(), true
			}
			return "", false
		},
	}, &out, &errOut
}

// FreeAddr returns a 127.0.0.1 address nothing listens on now: one the
// kernel just gave out and that was closed again. Left alone, every
// connection to it is refused; a server started on it races every other
// process for it, so a consume's --listen takes AnyListen instead and reads
// the port it got with ListenedAddr.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// AnyListen is a consume's --listen in the tests: a port the kernel picks
// when the listener binds, so no other process can take it first.
const AnyListen = "127.0.0.1:0"

// ListenedAddr returns the host:port from the observability listener's
// start line (observe.LogListening) in a consume's logs, text or JSON, or
// "" while there is none.
func ListenedAddr(logs string) string {
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, observe.LogListening) {
			continue
		}
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == observe.LogListening {
			return l.Addr
		}
		for _, f := range strings.Fields(line) {
			if a, ok := strings.CutPrefix(f, "addr="); ok {
				return strings.Trim(a, `"`)
			}
		}
	}
	return ""
}

// Listening reports whether consume's /readyz on addr answers 200.
func Listening(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Readyz is the status code of consume's /readyz on addr (0: no answer).
func Readyz(addr string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Brighter runs the command in dir and returns its stdout, failing the test
// on a non-zero exit.
func Brighter(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, stderr := BrighterExit(t, dir, args...)
	if code != 0 {
		t.Fatalf("brighter %s: exit %d; stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// PeekIDs runs a `dlq peek ... --output json` and returns the ids read.
func PeekIDs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(Brighter(t, dir, args...)))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("peek line %q: %v", sc.Text(), err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

// WriteMemoryDLQ writes a memory.output file with n routed copies in queue
// orders-dlq and returns its path.
func WriteMemoryDLQ(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"p%d","topic":"orders-dlq","messageType":"MT_COMMAND","handledCount":3,"bag":{"originalTopic":"orders","originalMessageType":"MT_COMMAND","rejectionReason":"DeliveryError","rejectionMessage":"budget exhausted","rejectionTimestamp":"2026-01-01T00:00:00Z"},"body":"{}"}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
