package inspect

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrJournalLocked is wrapped by OpenJournal's error when another run holds
// the journal (JournalLockedError says who).
var ErrJournalLocked = errors.New("replay journal in use by another replay")

// JournalLockedError is OpenJournal's error when another process holds the
// journal's lock: Path is the journal, Lock the lock file, Holder what the
// holder wrote in it ("pid N on HOST since RFC3339 time"; "unknown" when it
// could not be read). It wraps ErrJournalLocked.
type JournalLockedError struct {
	Path, Lock, Holder string
}

func (e *JournalLockedError) Error() string {
	return fmt.Sprintf("replay journal %s is in use by another replay (%s; lock %s): wait for it to end, or give another --journal", e.Path, e.Holder, e.Lock)
}

// Unwrap returns ErrJournalLocked.
func (e *JournalLockedError) Unwrap() error { return ErrJournalLocked }

// journalLock is the held lock of a journal: an exclusive flock(2) on
// PATH.lock, which holds the holder's pid, host and start time. The kernel
// drops a flock when its holder dies, so a crashed run's lock never blocks
// the next (the stale file it leaves is locked afresh and rewritten).
type journalLock struct {
	f    *os.File
	path string
}

// lockJournal takes the lock of the journal at path without waiting: a
// lock another process holds is a *JournalLockedError at once.
func lockJournal(path string) (*journalLock, error) {
	lp := path + ".lock"
	for range 8 {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("replay journal %s: lock: %w", path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder := "unknown"
			if b, rerr := os.ReadFile(lp); rerr == nil && strings.TrimSpace(string(b)) != "" {
				holder = strings.TrimSpace(string(b))
			}
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &JournalLockedError{Path: path, Lock: lp, Holder: holder}
			}
			return nil, fmt.Errorf("replay journal %s: lock %s: %w", path, lp, err)
		}
		// The holder before us removes the lock file before it lets go: a
		// lock on a file no longer at lp locks nothing; take it again.
		var a, b unix.Stat_t
		if unix.Fstat(int(f.Fd()), &a) != nil || unix.Stat(lp, &b) != nil || a.Ino != b.Ino || a.Dev != b.Dev {
			f.Close()
			continue
		}
		host, _ := os.Hostname()
		info := "pid " + strconv.Itoa(os.Getpid()) + " on " + host + " since " + time.Now().UTC().Format(time.RFC3339)
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(info+"\n"), 0)
		}
		return &journalLock{f: f, path: lp}, nil
	}
	return nil, fmt.Errorf("replay journal %s: lock %s: the lock file kept changing", path, lp)
}

// unlock removes the lock file (while still holding it, so no other run
// locks the removed file) and lets go.
func (l *journalLock) unlock() error {
	if l == nil {
		return nil
	}
	rerr := os.Remove(l.path)
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	return errors.Join(rerr, l.f.Close())
}
