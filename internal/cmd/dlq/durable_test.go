package dlq_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest/cmdmain"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
)

// failingFile is a file whose writes or fsyncs fail: a full disk, an I/O
// error, a file system that refuses fsync.
type failingFile struct {
	*os.File
	write, sync bool
}

var errInjected = errors.New("injected: input/output error")

func (f failingFile) Write(p []byte) (int, error) {
	if f.write {
		return 0, errInjected
	}
	return f.File.Write(p)
}

func (f failingFile) Sync() error {
	if f.sync {
		return errInjected
	}
	return f.File.Sync()
}

// failing makes the writes (write) or fsyncs (sync) of the durable file at
// path fail; other files are written as they are.
func failing(path string, write, sync bool) func(*os.File) iostreams.SyncFile {
	return func(f *os.File) iostreams.SyncFile {
		if f.Name() != path {
			return f
		}
		return failingFile{File: f, write: write, sync: sync}
	}
}

// memoryIDs is what a memory:// queue of the file at path holds (dlq peek).
func memoryIDs(t *testing.T, queue, path string) []string {
	t.Helper()
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := cmdmain.Run(context.Background(), io, []string{"dlq", "peek", "memory://" + queue + "?file=" + path, "-o", "json"}); code != cmdutil.ExitOK {
		t.Fatalf("peek %s: exit %d\n%s", queue, code, errOut)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if _, rest, ok := strings.Cut(line, `"id":"`); ok {
			id, _, _ := strings.Cut(rest, `"`)
			ids = append(ids, id)
		}
	}
	return ids
}

// TestDLQArchive_FailedWriteOrFsyncFailsNamingTheFileAndRemovesNothing:
// when a write or the fsync of the archive --file fails, dlq archive
// exits 1 with an error naming the file, and every message is still in the
// dead-letter destination: nothing is removed that was not durably
// written.
func TestDLQArchive_FailedWriteOrFsyncFailsNamingTheFileAndRemovesNothing(t *testing.T) {
	for _, c := range []struct {
		name        string
		write, sync bool
		says        string
	}{{"write", true, false, ": injected"}, {"fsync", false, true, ": fsync: injected"}} {
		t.Run(c.name, func(t *testing.T) {
			path := cmdtest.WriteMemoryDLQ(t, 3)
			archive := filepath.Join(t.TempDir(), "archive.jsonl")
			io, out, errOut := cmdtest.FakeIO("", false)
			io.WrapFile = failing(archive, c.write, c.sync)
			code := cmdmain.Run(context.Background(), io, []string{"dlq", "archive", "memory://orders-dlq?file=" + path, "--all", "--file", archive})
			if code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "archive file "+archive+c.says) {
				t.Errorf("archive whose %s fails: exit %d, want %d naming %s\nstdout:\n%s\nstderr:\n%s", c.name, code, cmdutil.ExitFailure, archive, out, errOut)
			}
			if ids := memoryIDs(t, "orders-dlq", path); len(ids) != 3 {
				t.Errorf("the dead-letter destination holds %v after a failed %s, want all 3: nothing removed that was not durably written", ids, c.name)
			}
		})
	}
}

// TestDLQReplay_FailedJournalFsyncFailsNamingTheJournalAndMovesNothing:
// when the replay journal's fsync fails (or a write of it), dlq replay
// publishes nothing whose "sending" record is not durable, exits 1 with an
// error naming the journal, and every message is still in the
// dead-letter destination.
func TestDLQReplay_FailedJournalFsyncFailsNamingTheJournalAndMovesNothing(t *testing.T) {
	for _, c := range []struct {
		name        string
		write, sync bool
	}{{"write", true, false}, {"fsync", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			path := cmdtest.WriteMemoryDLQ(t, 3)
			journal := filepath.Join(t.TempDir(), "replay.journal")
			io, out, errOut := cmdtest.FakeIO("", false)
			io.WrapFile = failing(journal, c.write, c.sync)
			code := cmdmain.Run(context.Background(), io, []string{"dlq", "replay", "memory://orders-dlq?file=" + path, "--allow-any-destination", "--yes", "--journal", journal})
			if code != cmdutil.ExitFailure || !strings.Contains(errOut.String(), "brighter: replay memory://orders-dlq: the replay journal could not be written: replay journal "+journal) {
				t.Errorf("replay whose journal %s fails: exit %d, want %d naming %s\nstdout:\n%s\nstderr:\n%s", c.name, code, cmdutil.ExitFailure, journal, out, errOut)
			}
			if ids := memoryIDs(t, "orders-dlq", path); len(ids) != 3 {
				t.Errorf("the dead-letter destination holds %v after a failed journal %s, want all 3", ids, c.name)
			}
			if ids := memoryIDs(t, "orders", path); len(ids) != 0 {
				t.Errorf("the destination holds %v, want nothing published without a durable journal record", ids)
			}
		})
	}
}
