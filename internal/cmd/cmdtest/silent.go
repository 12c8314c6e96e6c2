package cmdtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/faultproxy"
)

// SilentBroker is a TCP listener on 127.0.0.1 that accepts every
// connection and never answers: a broker a command connects to and then
// waits on until its call deadline (faultproxy.Silent).
type SilentBroker = faultproxy.Silent

// NewSilentBroker starts a SilentBroker; the listener and the connections
// it holds are closed when t ends.
func NewSilentBroker(t testing.TB) *SilentBroker {
	t.Helper()
	return faultproxy.NewSilent(t)
}

// SilentSQSConfig starts a SilentBroker, sets static AWS credentials for
// t (t.Setenv, so t must not be parallel) and writes a subscriptions file
// in t's temporary directory whose aws connection is that broker (region
// us-east-1): first a subscription of the memory transport for each name
// in memory, whose channel opens at once, then one of SQS with
// makeChannels validate for each name in sqs, whose start-up call waits
// on the broker until consume stops; every one with the builtin ack
// handler. It returns the broker and the file's path.
func SilentSQSConfig(t *testing.T, memory, sqs []string) (*SilentBroker, string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	b := NewSilentBroker(t)
	var yaml strings.Builder
	yaml.WriteString("connections:\n  aws:\n    region: us-east-1\n    endpoint: " + b.URL + "\nsubscriptions:\n")
	for _, name := range memory {
		yaml.WriteString("  - name: " + name + "\n    transport: memory\n    handler: {type: builtin, name: ack}\n")
	}
	for _, name := range sqs {
		yaml.WriteString("  - name: " + name + "\n    transport: sqs\n    makeChannels: validate\n    handler: {type: builtin, name: ack}\n")
	}
	cfg := filepath.Join(t.TempDir(), "brighter.yaml")
	if err := os.WriteFile(cfg, []byte(yaml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return b, cfg
}

// Signalled is the end of a `brighter` process a test signalled: its exit
// code (-1 when a signal killed it), its stderr, and how long it took to
// exit after the last signal.
type Signalled struct {
	Code   int
	Stderr string
	Took   time.Duration
}

// SignalWhileConnecting starts `brighter args...` in dir with Env, waits
// until it has connected to b (it then waits on the broker), sends it sigs
// one after the other with gap between them, and waits for it to exit; t
// fails when the process cannot start, does not connect within 30s or
// runs for more than a minute after its signals.
func SignalWhileConnecting(t *testing.T, dir string, b *SilentBroker, gap time.Duration, sigs []os.Signal, args ...string) Signalled {
	t.Helper()
	cmd := exec.Command("brighter", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	var stdout, stderr LockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done, err := StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() { exited <- exitCode(<-done) }()
	select {
	case <-b.Accepted:
	case code := <-exited:
		t.Fatalf("brighter %v: exited %d before connecting to the broker; stderr:\n%s", args, code, stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("brighter %v: not connected to the broker after 30s; stderr:\n%s", args, stderr.String())
	}
	for i, s := range sigs {
		if i > 0 {
			time.Sleep(gap)
		}
		_ = cmd.Process.Signal(s)
	}
	sent := time.Now()
	select {
	case code := <-exited:
		return Signalled{Code: code, Stderr: stderr.String(), Took: time.Since(sent)}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("brighter %v: still running a minute after its signals; stderr:\n%s", args, stderr.String())
		return Signalled{}
	}
}

// exitCode is the exit code of a process whose Wait returned err: 0 for
// none, -1 when a signal killed it (as exec reports it), -2 when it did not
// say.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -2
}
