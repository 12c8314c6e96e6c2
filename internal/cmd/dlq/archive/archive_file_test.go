package archive

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQArchive_RefusesNonArchiveFile: against fauxqs, dlq archive
// --all --file F where F is a copy of a README (or of a binary) exits 2
// naming F's first bad line, leaves F unchanged and every message in the
// DLQ; an archive from a queue that does not exist fails without leaving
// an (empty) archive file behind.
func TestDLQArchive_RefusesNonArchiveFile(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 3)
	dir := t.TempDir()
	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"README.md": readme, "bin": append([]byte("\x7fELF\x02\x01\n"), make([]byte, 70000)...)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--all", "--file", path}, conn...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cmdutil.ExitUsage || !strings.Contains(string(out), path+":1: ") {
			t.Errorf("archive into %s: %v, want exit %d naming %s:1\n%s", name, err, cmdutil.ExitUsage, path, out)
		}
		if got, _ := os.ReadFile(path); string(got) != string(content) {
			t.Errorf("%s was changed: %d bytes, was %d", name, len(got), len(content))
		}
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 3 {
		t.Errorf("the DLQ holds %v after the refusals, want c0..c2", left)
	}
	missing := filepath.Join(dir, "new.jsonl")
	out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq + "-no-such-q", "--all", "--file", missing}, conn...)...).CombinedOutput()
	if err == nil {
		t.Errorf("archive of a missing queue succeeded:\n%s", out)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed archive left %s behind (%v)\n%s", missing, err, out)
	}
}

// TestDLQArchive_MissingDirectoryIsAUsageError: dlq archive --file
// DIR/x.jsonl where DIR does not exist is refused before anything is read
// (exit 2, naming DIR), on fauxqs: the messages stay, visible, no file or
// directory is made; the refusal comes before the source is opened (a
// missing queue is not even looked up).
func TestDLQArchive_MissingDirectoryIsAUsageError(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 2)
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	file := filepath.Join(dir, "x.jsonl")
	for _, q := range []string{dlq, dlq + "-no-such-q"} {
		out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + q, "--all", "--file", file}, conn...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cmdutil.ExitUsage || !strings.Contains(string(out), "the directory "+dir+" does not exist") {
			t.Errorf("archive of %s into a missing directory: %v, want exit %d naming %s\n%s", q, err, cmdutil.ExitUsage, dir, out)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused archive made %s (%v)", dir, err)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 2 {
		t.Errorf("the DLQ holds %v after the refusal, want c0 and c1, visible", left)
	}
}
