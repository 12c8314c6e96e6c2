package inspect

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestJournal_HeldEntriesKeepADrainedJournal: a copy recorded sent
// less than its run's hold ago keeps the journal even after a drained run
// (a killed run may still hold its message invisible); once the hold has
// passed, or for a line written before holds were recorded, it does not; a
// "sent" line with a malformed time is refused, naming the line.
func TestJournal_HeldEntriesKeepADrainedJournal(t *testing.T) {
	dir := t.TempDir()
	open := func(name string, hold time.Duration, now time.Time) *FileJournal {
		t.Helper()
		j, err := OpenJournal(filepath.Join(dir, name), hold)
		if err != nil {
			t.Fatal(err)
		}
		j.now = func() time.Time { return now }
		return j
	}
	t0 := time.Now()
	j := open("held", time.Minute, t0)
	if err := j.Published([]string{"r1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Close(true, false); err != nil {
		t.Fatal(err)
	}
	j = open("held", time.Minute, t0.Add(59*time.Second))
	if j.Held() != 1 || j.Pending() != 1 {
		t.Fatalf("59s after a 1m hold: held %d, pending %d; want 1, 1", j.Held(), j.Pending())
	}
	if removed, err := j.Close(false, true); err != nil || removed {
		t.Fatalf("a drained clean run within the hold: removed %v, %v; want the journal kept", removed, err)
	}
	j = open("held", time.Minute, t0.Add(61*time.Second))
	if j.Held() != 0 {
		t.Fatalf("61s after a 1m hold: held %d, want 0", j.Held())
	}
	if removed, err := j.Close(false, true); err != nil || !removed {
		t.Fatalf("a drained clean run after the hold: removed %v, %v; want the journal deleted", removed, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "old"), []byte("sending r2\nsent r2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	j = open("old", time.Minute, t0)
	if j.Held() != 0 || j.Pending() != 1 || !j.Sent("r2") {
		t.Fatalf("an older \"sent RID\" line: held %d, pending %d, sent %v; want 0, 1, true", j.Held(), j.Pending(), j.Sent("r2"))
	}
	if removed, err := j.Close(false, true); err != nil || !removed {
		t.Fatalf("a drained clean run with an older line: removed %v, %v; want deleted", removed, err)
	}

	for _, bad := range []string{"sent r3 12x 5000\n", "sent r3 1000\n", "sent r3 -1 5\n"} {
		if err := os.WriteFile(filepath.Join(dir, "bad"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenJournal(filepath.Join(dir, "bad"), time.Minute); err == nil || !strings.Contains(err.Error(), "bad:1: not a journal line") {
			t.Errorf("journal %q: %v, want line 1 refused", bad, err)
		}
	}
}

// TestJournal_LockRefusesASecondRunAndFreesOnDeath: while one run holds a
// journal open, a second open of it is refused at once with an error that
// names the journal and the holder's pid; once the first closes (deleting
// the journal) the second opens it. A holder that dies without closing (a
// child process that inherited the lock, killed) does not block the next
// run: its lock file is left, stale, and is locked afresh.
func TestJournal_LockRefusesASecondRunAndFreesOnDeath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.journal")
	first, err := OpenJournal(path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = OpenJournal(path, time.Minute)
	var locked *JournalLockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrJournalLocked) {
		t.Fatalf("second open while the first holds it: %v, want a JournalLockedError", err)
	}
	if time.Since(start) > time.Second || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("refusal after %v: %q; want at once, naming %s and pid %d", time.Since(start), err, path, os.Getpid())
	}
	if removed, err := first.Close(false, false); err != nil || !removed {
		t.Fatalf("first close: removed %v, %v", removed, err)
	}
	second, err := OpenJournal(path, time.Minute)
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	if _, err := second.Close(false, false); err != nil {
		t.Fatal(err)
	}

	// A holder that dies: a child shares the lock's open file, the parent
	// lets go of its own descriptor, the child is killed.
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := lf.WriteString("pid 1 on elsewhere since then\n"); err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{lf}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	if _, err := OpenJournal(path, time.Minute); !errors.Is(err, ErrJournalLocked) || !strings.Contains(err.Error(), "pid 1 on elsewhere") {
		t.Fatalf("open while a live child holds the lock: %v, want refused naming the holder", err)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	third, err := OpenJournal(path, time.Minute)
	if err != nil {
		t.Fatalf("open after the holder died: %v (a dead holder's lock must not block)", err)
	}
	if _, err := third.Close(false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file outlived a clean close (stat: %v)", err)
	}
}

// TestJournal_LineCutByACrashIsDroppedAndTheRunResumes: a journal whose
// last line a crash cut mid-write (no newline) opens with every earlier
// record, reports the cut line, and cuts it off so that the records this
// run appends are read whole by the next one, whatever the cut held (a
// kind cut short, a replay id cut short, a time cut short).
func TestJournal_LineCutByACrashIsDroppedAndTheRunResumes(t *testing.T) {
	for _, cut := range []string{"se", "sent r2", "sent r2 1733", "sending r", "removed r1"} {
		t.Run(cut, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cut.journal")
			whole := "sending r1\nsent r1 1000 5000\nsending r2\n"
			if err := os.WriteFile(path, []byte(whole+cut), 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := OpenJournal(path, time.Minute)
			if err != nil {
				t.Fatalf("a journal with its last line cut by a crash is unreadable: %v", err)
			}
			if !j.Sent("r1") || j.Sent("r2") || j.Pending() != 1 || len(j.InFlight()) != 1 {
				t.Errorf("records before the cut line: sent r1 %v, sent r2 %v, pending %d, in flight %v; want true, false, 1, [r2]", j.Sent("r1"), j.Sent("r2"), j.Pending(), j.InFlight())
			}
			if j.Cut() != cut {
				t.Errorf("Cut() = %q, want %q reported", j.Cut(), cut)
			}
			if err := j.Published([]string{"r3"}); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Close(true, false); err != nil {
				t.Fatal(err)
			}
			j, err = OpenJournal(path, time.Minute)
			if err != nil {
				t.Fatalf("the journal after a run resumed from a cut line is unreadable: %v", err)
			}
			defer j.Close(true, false)
			if !j.Sent("r1") || !j.Sent("r3") || j.Cut() != "" {
				t.Errorf("after the resumed run: sent r1 %v, sent r3 %v, cut %q; want true, true, none", j.Sent("r1"), j.Sent("r3"), j.Cut())
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), whole+"sent r3 ") || strings.Contains(string(b), "\n\n") {
				t.Errorf("journal file after the resumed run:\n%s\nwant the cut line gone and r3 on a line of its own", b)
			}
		})
	}
}
