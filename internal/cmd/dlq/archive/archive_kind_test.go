package archive

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/dlqtest"
)

// TestDLQArchive_RefusesFileThatKeepsNothing: against fauxqs, dlq archive
// --id c0 --file F where F is not a regular file (or a new one in an
// existing directory) exits 2 before the source is opened, saying what F
// is and what to give instead, and c0 stays in the DLQ: a symbolic link to
// /dev/null, /dev/./null, /dev/zero, /dev/full, a named pipe, a socket,
// /dev/stdout on a pipe, a directory (or a link to one), a path through a
// regular file, an empty path and a link to nothing. The same refusal
// comes for a queue that does not exist (the source is not opened). A
// symbolic link to a regular file is followed: archive appends to it.
func TestDLQArchive_RefusesFileThatKeepsNothing(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 2)
	dir := t.TempDir()
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A short directory: a socket's path has a length limit.
	sdir, err := os.MkdirTemp("", "arch")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sdir) })
	sock := filepath.Join(sdir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	adir := filepath.Join(dir, "adir")
	if err := os.Mkdir(adir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, says string }{
		{link("nl", os.DevNull), "(/dev/null) is a character device"},
		{"/dev/./null", "is a character device"},
		{"/dev/zero", "is a character device"},
		{"/dev/full", "is a character device"},
		{fifo, "is a pipe"},
		{sock, "is a socket"},
		{"/dev/stdout", "or - for stdout"},
		{adir, "is a directory: give the path of a file in it"},
		{link("dirlink", adir), "is a directory"},
		{filepath.Join(afile, "x.jsonl"), afile + " is not a directory"},
		{filepath.Join(afile, "sub", "x.jsonl"), "is not a directory"},
		{"", "--file is empty"},
		{link("dangling", filepath.Join(dir, "nowhere")), "which does not exist"},
	} {
		for _, q := range []string{dlq, dlq + "-no-such-q"} {
			out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + q, "--id", "c0", "--file", tc.file}, conn...)...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cmdutil.ExitUsage || !strings.Contains(string(out), tc.says) || !strings.Contains(string(out), "nothing was read") {
				t.Errorf("archive of %s --file %q: %v, want exit %d saying %q and nothing was read\n%s", q, tc.file, err, cmdutil.ExitUsage, tc.says, out)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused archive created the target of a dangling link (%v)", err)
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); len(left) != 2 {
		t.Errorf("the DLQ holds %v after the refusals, want c0 and c1", left)
	}
	arch := filepath.Join(dir, "arch.jsonl")
	if err := os.WriteFile(arch, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--id", "c0", "--file", link("archlink", arch)}, conn...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "archived 1") {
		t.Fatalf("archive --file LINK to a regular file: %v\n%s", err, out)
	}
	if ids := dlqtest.CrashIDs(t, mustRead(t, arch)); ids["c0"] != 1 || len(ids) != 1 {
		t.Errorf("the linked archive holds %v, want c0", ids)
	}
}

// TestDLQArchive_StdoutThatFailsKeepsTheMessage: dlq archive --file -
// with stdout on /dev/full exits 1 (the write fails) and removes nothing.
func TestDLQArchive_StdoutThatFailsKeepsTheMessage(t *testing.T) {
	t.Parallel()
	dlq, _, conn := dlqtest.CrashQueue(t, 1)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open /dev/full (every Linux has it): %v", err)
	}
	defer func() { _ = full.Close() }()
	var errOut strings.Builder
	cmd := dlqtest.CrashCmd(t, append([]string{"dlq", "archive", "sqs://" + dlq, "--id", "c0"}, conn...)...)
	cmd.Stdout, cmd.Stderr = full, &errOut
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cmdutil.ExitFailure {
		t.Errorf("archive to stdout on /dev/full: %v, want exit %d\n%s", err, cmdutil.ExitFailure, errOut.String())
	}
	if left := dlqtest.CrashDestIDs(t, dlq, conn); left["c0"] != 1 {
		t.Errorf("the DLQ holds %v after a failed write, want c0", left)
	}
}
