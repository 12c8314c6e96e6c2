package root_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// TestCommands_StdoutWithoutReaderExits141: every command that writes to
// stdout, run with stdout a pipe whose reader has already gone (the first
// write fails with EPIPE), ends with exit 141 and its `brighter: ...`
// line naming the broken pipe, never killed by SIGPIPE (exit -1, nothing
// on stderr) nor with a stack trace: dlq peek, stats and replay --dry-run
// (memory transport), send (fauxqs), lint -o json, schema and version.
func TestCommands_StdoutWithoutReaderExits141(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := cmdtest.WriteMemoryDLQ(t, 3)
	file := filepath.Join(dir, "brighter.yaml")
	yaml := "subscriptions:\n  - name: orders\n    transport: memory\n    deadLetterRoutingKey: orders-dlq\n    handler: {type: builtin, name: ack}\n    memory:\n      output: " + out + "\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	// send publishes to a queue on fauxqs (the memory transport has no
	// producer outside consume).
	sqsFile := filepath.Join(dir, "sqs.yaml")
	sqsYAML := "connections:\n  aws:\n    region: us-east-1\n    endpoint: " + cmdtest.SharedSQS(t).Endpoint +
		"\nsubscriptions:\n  - name: pipe\n    transport: sqs\n    channelName: pipe-" + filepath.Base(dir) + "\n    makeChannels: create\n    handler: {type: builtin, name: ack}\n"
	if err := os.WriteFile(sqsFile, []byte(sqsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dlq", "peek", "orders", "-c", file},
		{"dlq", "peek", "orders", "-c", file, "-o", "json"},
		{"dlq", "stats", "orders", "-c", file},
		{"dlq", "replay", "orders", "-c", file, "--dry-run"},
		{"send", "-c", sqsFile, "-s", "pipe", "--body", "{}", "--count", "3"},
		{"lint", "-o", "json", file},
		{"schema"},
		{"version"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Close() // the reader is gone before the first write
		cmd := exec.Command(cmdtest.Bin(t), args...)
		cmd.Dir, cmd.Env = dir, cmdtest.Env()
		var errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = w, &errOut
		err = cmd.Run()
		_ = w.Close()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		if code != cmdutil.ExitBrokenPipe || !strings.Contains(errOut.String(), "brighter: ") || !strings.Contains(errOut.String(), "broken pipe") ||
			strings.Contains(errOut.String(), "goroutine ") {
			t.Errorf("brighter %s with no reader on stdout: %v (exit %d), want exit %d and the broken pipe named\n%s", strings.Join(args, " "), err, code, cmdutil.ExitBrokenPipe, errOut.String())
		}
	}
}
