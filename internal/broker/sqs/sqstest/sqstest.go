// Package sqstest starts the fauxqs SQS/SNS emulator (npm fauxqs@1.9.2,
// pinned by the repository's package.json and package-lock.json) for tests:
// one Node process per test binary, bound to 127.0.0.1 on a free port.
//
// Install it once with `npm ci --no-audit --no-fund` at the repository root
// (Node >= 20; fauxqs 2.x needs Node 22 and is not used). When Node or the
// package is missing, Start fails with a message saying so: tests never skip.
//
// Typical use, in the package's TestMain:
//
//	func TestMain(m *testing.M) {
//		emu, err := sqstest.Start(context.Background())
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		code := m.Run()
//		emu.Stop()
//		os.Exit(code)
//	}
//
// This package is for tests only, and depends only on the standard library
// and the AWS SDK.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
//
// Imported by: internal/cmd/cmdtest, internal/cmd/dlq/dlqtest
package sqstest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region the emulator's ARNs and the test clients use.
const Region = "us-east-1"

// StartTimeout bounds how long Start waits for the emulator to answer.
const StartTimeout = 30 * time.Second

// wrapperPath is the wrapper script, relative to the repository root.
const wrapperPath = "internal/broker/sqs/sqstest/serve-local.mjs"

// InstallHint is the instruction every "not installed" error carries.
const InstallHint = "run `npm ci --no-audit --no-fund` at the repository root (needs Node >= 20 and npm on PATH; it installs fauxqs@1.9.2 from package-lock.json)"

// Emulator is a running fauxqs process.
type Emulator struct {
	// Endpoint is the base URL of the emulator, e.g. http://127.0.0.1:41233.
	Endpoint string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	done   chan struct{}
	once   sync.Once
}

// RepoRoot returns the directory holding go.mod, searched upwards from the
// working directory (a test's working directory is its package directory).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start launches fauxqs on 127.0.0.1 with a free port and waits, at most
// StartTimeout, until its /health endpoint answers. It returns an error
// carrying InstallHint when node or node_modules/fauxqs is missing, and the
// emulator's stderr when it exits or does not become ready.
func Start(ctx context.Context) (*Emulator, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("fauxqs emulator: node is not on PATH: %s: %w", InstallHint, err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "fauxqs", "package.json")); err != nil {
		return nil, fmt.Errorf("fauxqs emulator: %s is missing: %s", filepath.Join(root, "node_modules", "fauxqs"), InstallHint)
	}
	cmd := exec.Command(node, filepath.Join(root, wrapperPath))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "FAUXQS_PORT=0", "FAUXQS_LOGGER=false", "FAUXQS_EXIT_ON_STDIN_END=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("fauxqs emulator: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("fauxqs emulator: %w", err)
	}
	e := &Emulator{cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("fauxqs emulator: start %s: %w", node, err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(e.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	const prefix = "fauxqs listening on "
	for e.Endpoint == "" {
		select {
		case l := <-lines:
			if strings.HasPrefix(l, prefix) {
				e.Endpoint = strings.TrimSpace(strings.TrimPrefix(l, prefix))
			}
		case <-e.done:
			return nil, fmt.Errorf("fauxqs emulator exited before listening (%s); stderr: %s", InstallHint, e.stderr.String())
		case <-ctx.Done():
			e.Stop()
			return nil, fmt.Errorf("fauxqs emulator did not report its address within %s; stderr: %s", StartTimeout, e.stderr.String())
		}
	}
	for {
		if healthy(ctx, e.Endpoint) {
			return e, nil
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-t.C:
		case <-e.done:
			t.Stop()
			return nil, fmt.Errorf("fauxqs emulator exited; stderr: %s", e.stderr.String())
		case <-ctx.Done():
			t.Stop()
			e.Stop()
			return nil, fmt.Errorf("fauxqs emulator at %s not healthy within %s; stderr: %s", e.Endpoint, StartTimeout, e.stderr.String())
		}
	}
}

func healthy(ctx context.Context, endpoint string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop ends the emulator: it closes its stdin (the wrapper exits on EOF,
// which also happens if the test binary dies), then kills it if it has not
// exited within 5 s. Calling Stop twice is harmless.
func (e *Emulator) Stop() {
	e.once.Do(func() {
		_ = e.stdin.Close()
		select {
		case <-e.done:
		case <-time.After(5 * time.Second):
			_ = e.cmd.Process.Kill()
			<-e.done
		}
	})
}

// Config returns an aws.Config for the emulator: region us-east-1, static
// credentials test/test. Pass it with e.Endpoint to sqs.NewClientsFromConfig.
func Config() aws.Config {
	return aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec and a
// reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RunTests is a test binary's TestMain body for tests that share one
// emulator: it starts fauxqs, stores its endpoint in *endpoint, runs m and
// stops the emulator. It returns m.Run's exit code, or 1 (after printing
// why, naming suite) when the emulator cannot start. Use it as
// os.Exit(sqstest.RunTests(m, "inspect", &endpoint)).
func RunTests(m *testing.M, suite string, endpoint *string) int {
	emu, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s tests need the fauxqs emulator: %v\n", suite, err)
		return 1
	}
	defer emu.Stop()
	*endpoint = emu.Endpoint
	return m.Run()
}
