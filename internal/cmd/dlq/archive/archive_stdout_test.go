package archive

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQArchive_RefusesFileThatIsStdout: against fauxqs, dlq archive
// --file F -o json where stdout is redirected to F (named by its path,
// /dev/stdout or /dev/fd/1) exits 2 before reading anything: F is left
// empty and every message stays in the DLQ. The same run with --file
// naming another file archives.
func TestDLQArchive_RefusesFileThatIsStdout(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 2)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	for _, file := range []string{out, "/dev/stdout", "/dev/fd/1"} {
		fh, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		var errOut bytes.Buffer
		cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--limit", "1", "--file", file, "-o", "json"}, conn...)...)
		cmd.Stdout, cmd.Stderr = fh, &errOut
		err = cmd.Run()
		_ = fh.Close()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cmdutil.ExitUsage || !strings.Contains(errOut.String(), "is stdout") {
			t.Errorf("archive --file %s with stdout on it: %v, want exit %d\n%s", file, err, cmdutil.ExitUsage, errOut.String())
		}
		if got, _ := os.ReadFile(out); len(got) != 0 {
			t.Errorf("archive --file %s wrote %q", file, got)
		}
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 2 {
		t.Errorf("the DLQ holds %v after the refusals, want c0, c1", left)
	}
	arch := filepath.Join(dir, "arch.jsonl")
	fh, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--limit", "1", "--file", arch, "-o", "json"}, conn...)...)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = fh, &errOut
	err = cmd.Run()
	_ = fh.Close()
	if err != nil {
		t.Fatalf("archive --file %s: %v\n%s", arch, err, errOut.String())
	}
	if got, _ := os.ReadFile(out); !strings.Contains(string(got), `"archived":1`) {
		t.Errorf("stdout of archive --file %s: %q, want the summary record", arch, got)
	}
	if ids := dlqtest.CrashIDs(t, mustRead(t, arch)); len(ids) != 1 {
		t.Errorf("archive %s holds %v, want one message", arch, ids)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
