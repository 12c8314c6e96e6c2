package inspect

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// KeyReplayID is the bag key of a replayed copy's replay id (ReplayID): the
// same for every copy of one failure, whichever run sent it, so a consumer
// (or an inbox) can tell a copy a resumed replay sent again.
const KeyReplayID = "replayId"

// ReplayID is the replay id of m read from the source named from (a URL):
// the first 32 hex digits of SHA-256 over from, m's id and its rejection
// timestamp as the bag carries it. A message dead-lettered again later (same
// id, new rejection timestamp) is a new failure with a new replay id.
func ReplayID(m *message.Message, from string) string {
	ts, _ := m.Header.Bag.String(message.KeyRejectionTimestamp)
	sum := sha256.Sum256([]byte(from + "\x00" + m.Header.MessageID + "\x00" + ts))
	return hex.EncodeToString(sum[:16])
}

// ReplayJournal is what makes a replay resumable (ReplayOptions.Journal):
// a record, durable across a crash, of the copies whose publish the broker
// accepted. A later run that finds a message's replay id in it only removes
// the message, without publishing it again.
type ReplayJournal interface {
	// Sent reports whether the copy with replay id rid was accepted by the
	// broker in an earlier run.
	Sent(rid string) bool
	// Sending records that the copies rids are about to be published; it
	// returns once the record is durable. A replay id recorded sending but
	// never sent was in flight when a run stopped: it is published again.
	Sending(rids []string) error
	// Published records that the copies rids were accepted; it returns once
	// the record is durable (fsynced).
	Published(rids []string) error
	// Removed records that the messages of the copies rids were removed
	// from the dead-letter destination: nothing is left to resume for them.
	// It need not be durable (a lost record only keeps an entry).
	Removed(rids []string) error
}

// FileJournal is a ReplayJournal in a file: one line per event, "sending
// RID", "sent RID AT HOLD" (both fsynced; AT the Unix time of the record in
// milliseconds, HOLD the writing run's --visibility in milliseconds: until
// AT+HOLD that run, if killed, may still hold the message invisible) or
// "removed RID", appended. A "sent RID" line without AT and HOLD (written
// before they were recorded) is read as held by nobody. Safe for concurrent
// use within one process. Two replays never share a file at once:
// OpenJournal locks it (an exclusive flock on PATH.lock, released by Close
// or by the holder's death) and refuses a journal another run holds.
type FileJournal struct {
	mu       sync.Mutex
	f        *os.File
	w        SyncFile // f, or what OpenJournalOn's wrap put before it
	lock     *journalLock
	path     string
	hold     time.Duration
	now      func() time.Time
	sent     map[string]time.Time // replay id -> until when a killed run may hold its message
	inFlight map[string]bool
	cut      string // the unfinished last line found at open (Cut)
	noID     int    // lines with an empty replay id passed over at open (NoID)
}

// OpenJournal opens (creating it, mode 0600, and its directory, 0700) the
// journal at path and reads what earlier runs recorded. hold is how long
// this run holds each message it reads invisible (its --visibility): it is
// recorded with every copy sent, so that a later run does not forget a copy
// whose message a killed run may still hold (Close). Errors name the path;
// a whole line (ending in a newline) that is neither form is an error (the
// file is not a journal). A last line without its newline was cut by a
// crash during its write: it is not read, it is cut off the file (so the
// next record starts a line of its own) and Cut returns it. A
// journal another run holds open is refused at once with a
// *JournalLockedError (wrapping ErrJournalLocked) naming the journal and
// its holder; the lock of a run that died is free.
func OpenJournal(path string, hold time.Duration) (j *FileJournal, err error) {
	return OpenJournalOn(path, hold, nil)
}

// SyncFile is the part of an *os.File the replay journal writes its
// records through: Write, and Sync (an fsync).
type SyncFile interface {
	Write(p []byte) (int, error)
	Sync() error
}

// OpenJournalOn is OpenJournal writing the journal's records through
// wrap(file) instead of the file itself (nil wrap: the file): the seam
// through which a test makes a write or an fsync of the journal fail.
func OpenJournalOn(path string, hold time.Duration, wrap func(*os.File) SyncFile) (j *FileJournal, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("replay journal %s: %w", path, err)
	}
	lock, err := lockJournal(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = lock.unlock()
		}
	}()
	j = &FileJournal{path: path, lock: lock, hold: hold, now: time.Now, sent: map[string]time.Time{}, inFlight: map[string]bool{}}
	if fh, err := os.Open(path); err == nil {
		rd := bufio.NewReader(fh)
		n := 0
		for {
			line, rerr := rd.ReadString('\n')
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				fh.Close()
				return nil, fmt.Errorf("replay journal %s: %w", path, rerr)
			}
			if rerr != nil {
				// The last line has no newline: a crash cut it mid-write
				// (every record is written whole, newline last). Whatever
				// it holds is not trusted; the write below removes it.
				j.cut = line
				break
			}
			n++
			if err := j.read(strings.TrimSuffix(line, "\n")); err != nil {
				fh.Close()
				return nil, fmt.Errorf("replay journal %s:%d: %w (%s): nothing was read or sent. The file is damaged or is not a replay journal: correct or delete that line, or move the file aside; a run without these records publishes again a message an earlier run published and did not remove (its copy carries the same replayId, by which an inbox drops it)", path, n, err, redact.Quote(strings.TrimSuffix(line, "\n")))
			}
		}
		fh.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("replay journal %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("replay journal %s: %w", path, err)
	}
	if j.cut != "" {
		// A line a crash cut short is cut off, so that the next record
		// starts a line of its own and the journal stays readable.
		st, err := f.Stat()
		if err == nil {
			err = f.Truncate(st.Size() - int64(len(j.cut)))
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("replay journal %s: cut off the line a crash left unfinished: %w", path, err)
		}
	}
	j.f, j.w = f, SyncFile(f)
	if wrap != nil {
		j.w = wrap(f)
	}
	return j, nil
}

// errNotJournalLine is the error of a line that is none of a journal's forms.
var errNotJournalLine = errors.New("not a journal line")

// read applies one whole line (without its newline) of the journal.
func (j *FileJournal) read(line string) error {
	kind, rid, ok := strings.Cut(line, " ")
	if ok && noIDLine(kind, rid) {
		// A record of a copy without a replay id (an older dlq edit with
		// --set or --headers wrote them): no copy carries an empty replay
		// id, so it says nothing of any message; it is counted and passed.
		j.noID++
		return nil
	}
	switch {
	case kind == "sent":
		until, rid, ok := parseSent(rid)
		if !ok {
			return errNotJournalLine
		}
		j.sent[rid] = until
		delete(j.inFlight, rid)
	case ok && kind == "removed":
		delete(j.sent, rid)
		delete(j.inFlight, rid)
	case ok && kind == "sending":
		if _, sent := j.sent[rid]; !sent {
			j.inFlight[rid] = true
		}
	case line == "":
		// the newline an older version appended after a line a crash cut
	default:
		return errNotJournalLine
	}
	return nil
}

// noIDLine reports whether a line of kind with the rest rest is a record
// of one of the journal's forms with an empty replay id: "sending ",
// "removed ", "sent " or "sent  AT HOLD".
func noIDLine(kind, rest string) bool {
	switch kind {
	case "sending", "removed":
		return rest == ""
	case "sent":
		if rest == "" {
			return true
		}
		f := strings.Fields(rest)
		_, _, ok := parseSent("x " + rest)
		return strings.HasPrefix(rest, " ") && len(f) == 2 && ok
	}
	return false
}

// NoID is how many lines OpenJournal passed over because they record a
// copy with an empty replay id (written by an older dlq edit that sent its
// copies without one): no copy is known by an empty id, so they change
// nothing a run publishes or removes; the command reports them.
func (j *FileJournal) NoID() int { return j.noID }

// Cut is the unfinished last line OpenJournal found and cut off (a crash
// during its write; "" when there was none): the run goes on from the
// records before it, and the command reports it.
func (j *FileJournal) Cut() string { return j.cut }

// parseSent reads the rest of a "sent" line, "RID AT HOLD" or (older)
// "RID": the replay id and until when the run that wrote it may hold the
// message (the zero time for the older form).
func parseSent(rest string) (until time.Time, rid string, ok bool) {
	f := strings.Fields(rest)
	switch len(f) {
	case 1:
		return time.Time{}, f[0], true
	case 3:
		at, err1 := strconv.ParseInt(f[1], 10, 64)
		hold, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || at < 0 || hold < 0 {
			return time.Time{}, "", false
		}
		return time.UnixMilli(at).Add(time.Duration(hold) * time.Millisecond), f[0], true
	}
	return time.Time{}, "", false
}

// Path is the journal's file.
func (j *FileJournal) Path() string { return j.path }

// Pending is how many copies are recorded accepted whose message is not
// recorded removed: what a rerun only removes (at open: what earlier runs
// left).
func (j *FileJournal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.sent)
}

// InFlight are the replay ids earlier runs recorded sending but never sent:
// copies that may have reached their destination once already.
func (j *FileJournal) InFlight() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]string, 0, len(j.inFlight))
	for rid := range j.inFlight {
		out = append(out, rid)
	}
	return out
}

// Held is how many copies are recorded accepted, whose message is not
// recorded removed, by a run that may still hold that message invisible
// (recorded less than that run's --visibility ago): a run killed after the
// publish and before the remove. A clean run that read nothing of them
// still keeps the journal for them (Close).
func (j *FileJournal) Held() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.heldLocked()
}

func (j *FileJournal) heldLocked() int {
	now, n := j.now(), 0
	for _, until := range j.sent {
		if now.Before(until) {
			n++
		}
	}
	return n
}

// Sent implements ReplayJournal.
func (j *FileJournal) Sent(rid string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.sent[rid]
	return ok
}

// Removed implements ReplayJournal: written, not fsynced.
func (j *FileJournal) Removed(rids []string) error {
	if len(rids) == 0 {
		return nil
	}
	if slices.Contains(rids, "") {
		return fmt.Errorf("replay journal %s: %w", j.path, errNoReplayID)
	}
	var b strings.Builder
	for _, rid := range rids {
		b.WriteString("removed " + rid + "\n")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, rid := range rids {
		delete(j.sent, rid)
		delete(j.inFlight, rid)
	}
	if _, err := j.w.Write([]byte(b.String())); err != nil {
		return fmt.Errorf("replay journal %s: %w", j.path, err)
	}
	return nil
}

// Sending implements ReplayJournal.
func (j *FileJournal) Sending(rids []string) error { return j.write("sending", "", rids) }

// Published implements ReplayJournal: each line records the time and this
// run's hold (OpenJournal).
func (j *FileJournal) Published(rids []string) error {
	at := j.now()
	suffix := " " + strconv.FormatInt(at.UnixMilli(), 10) + " " + strconv.FormatInt(j.hold.Milliseconds(), 10)
	if err := j.write("sent", suffix, rids); err != nil {
		return err
	}
	until := time.UnixMilli(at.UnixMilli()).Add(time.Duration(j.hold.Milliseconds()) * time.Millisecond)
	j.mu.Lock()
	for _, rid := range rids {
		j.sent[rid] = until
	}
	j.mu.Unlock()
	return nil
}

// errNoReplayID is the error of a record asked for a copy without a
// replay id: a line with an empty id would match no message.
var errNoReplayID = errors.New("a copy without a replay id cannot be recorded; nothing was sent")

func (j *FileJournal) write(kind, suffix string, rids []string) error {
	if len(rids) == 0 {
		return nil
	}
	if slices.Contains(rids, "") {
		return fmt.Errorf("replay journal %s: %w", j.path, errNoReplayID)
	}
	var b strings.Builder
	for _, rid := range rids {
		b.WriteString(kind + " " + rid + suffix + "\n")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.w.Write([]byte(b.String())); err != nil {
		return fmt.Errorf("replay journal %s: %w", j.path, err)
	}
	if err := j.w.Sync(); err != nil {
		return fmt.Errorf("replay journal %s: sync: %w", j.path, err)
	}
	return nil
}

// Close closes the file and deletes it when keep is false (the run was not
// interrupted and nothing failed) and nothing is left to resume: no copy
// recorded sent whose message is not recorded removed (Pending). Entries
// recorded sending and never sent (a publish in flight at a crash, or one
// that failed) do not keep it: a later run publishes such a message again
// whether or not the journal names it, as long as it is still in the
// dead-letter destination, so the entry changes nothing (kept,
// a failed publish would keep the default journal forever). With drained (the run
// read the whole dead-letter destination, no filter, until it was empty)
// entries recorded sent are not left to resume either: their messages were
// not there to read, so they were removed by a run killed before it
// recorded so, unless they were recorded less than their run's hold ago
// (Held): that run, killed after the publish, may still hold the message
// invisible, and forgetting the copy would make the run that reads it
// after the hold publish it again. It reports whether the file
// was deleted; errors name the path.
func (j *FileJournal) Close(keep, drained bool) (removed bool, err error) {
	j.mu.Lock()
	remove := !keep && (len(j.sent) == 0 || drained && j.heldLocked() == 0)
	j.mu.Unlock()
	err = j.f.Close()
	if remove {
		err = errors.Join(err, os.Remove(j.path))
	}
	// The lock goes last: a run waiting for it finds the journal deleted
	// or complete, never half-closed.
	err = errors.Join(err, j.lock.unlock())
	if err != nil {
		return false, fmt.Errorf("replay journal %s: %w", j.path, err)
	}
	return remove, nil
}
