package shared

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/transport"
)

// closeJournal closes the replay journal of a run from t, deleting it when
// the run was clean (not interrupted, the scan did not fail, no message
// failed) and nothing is left to resume (drained: the run read every
// message, inspect.FileJournal.Close); a journal kept is named on stderr
// with why. unpublished is how many of the failed messages failed before
// any publish was tried: of those, nothing can have reached a destination.
func (o *ReplayOptions) closeJournal(j *inspect.FileJournal, t *transport.Target, interrupted, scanFailed bool, failed, unpublished int, drained bool) error {
	kept, err := CloseJournal(j, interrupted, scanFailed, failed, unpublished, drained)
	if err != nil || kept == "" {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "%s: replay journal %s kept: %s; it is deleted by a later run that ends cleanly with nothing left to resume\n", t.URL, j.Path(), kept)
	return nil
}

// OpenJournal opens (and locks) the replay journal dlq replay keeps for a
// replay from t, the same file (and so the same records) whichever command
// replays: --journal, else the default file of t's URL in the state
// directory. It returns nil with --journal ”. A journal another run holds
// is refused (a usage error wrapping inspect.ErrJournalLocked), as is a
// file that is not a journal.
func (o *ReplayOptions) OpenJournal(t *transport.Target) (*inspect.FileJournal, error) {
	return o.openJournal(t)
}

// CloseJournal closes the replay journal j of a run, as dlq replay does
// (closeJournal, without writing anything): it is deleted when the run was
// clean (not interrupted, the scan did not fail, no message failed) and
// nothing is left to resume. kept is "" when it was deleted, else why it
// was kept (one clause per reason, joined with "; "); unpublished is how
// many of the failed messages failed before any publish was tried.
func CloseJournal(j *inspect.FileJournal, interrupted, scanFailed bool, failed, unpublished int, drained bool) (kept string, err error) {
	pending, held := j.Pending(), j.Held()
	removed, err := j.Close(interrupted || scanFailed || failed > 0, drained)
	if err != nil || removed {
		return "", err
	}
	var why []string
	switch {
	case interrupted:
		why = append(why, "the run was interrupted")
	case scanFailed:
		why = append(why, "the run failed (a read of the dead-letter destination, or a write of the journal)")
	}
	if n := failed - unpublished; n > 0 {
		why = append(why, Plural(n, "message")+" failed (a failed publish may still have reached its destination)")
	}
	if unpublished > 0 {
		why = append(why, Plural(unpublished, "message")+" failed before any publish (nothing of them was sent; they are still in the dead-letter destination)")
	}
	switch {
	case drained && held > 0:
		why = append(why, Plural(held, "copy")+" recorded sent less than --visibility ago whose message was not removed (a run killed after sending may still hold it invisible; a rerun after that only removes it)")
	case pending > 0:
		why = append(why, Plural(pending, "copy")+" recorded sent whose message was not removed (a filtered run does not know whether they are still there)")
	}
	return strings.Join(why, "; "), nil
}

// openJournal opens the replay journal of a replay from t (nil with
// --journal ”): --journal, else $XDG_STATE_HOME/brighter/replay/ (default
// ~/.local/state) and a file named after the source URL and its hash.
func (o *ReplayOptions) openJournal(t *transport.Target) (*inspect.FileJournal, error) {
	path := o.Journal
	if o.JournalSet && path == "" {
		return nil, nil
	}
	if path == "" {
		dir, err := o.StateDir()
		if err != nil {
			return nil, cmdutil.UsageErr(errors.New("the replay journal needs $XDG_STATE_HOME or $HOME: give --journal FILE (or --journal '' for none)"))
		}
		key := t.URL
		if t.S != nil && t.S.Transport == config.TransportMemory && t.S.Memory != nil {
			// memory://QUEUE names a queue inside a file: two files are
			// two dead-letter destinations, with a journal (and lock) each.
			if abs, err := filepath.Abs(t.S.Memory.Output); err == nil {
				key += "?file=" + abs
			}
		}
		path = filepath.Join(dir, journalName(key))
	}
	j, err := inspect.OpenJournalOn(path, o.Visibility, func(f *os.File) inspect.SyncFile { return o.IO.SyncFileOf(f) })
	if errors.Is(err, inspect.ErrJournalLocked) {
		// Another replay runs on this journal: refused at once (exit 2),
		// naming the journal and its holder.
		return nil, cmdutil.UsageErr(err)
	}
	if err != nil {
		// A journal that is not one, or a path that cannot be one (a
		// directory), is refused as a damaged restore file is: exit 2,
		// before anything is moved.
		return nil, cmdutil.UsageErr(fmt.Errorf("%w (give another --journal FILE, or --journal '' for none)", err))
	}
	return j, nil
}

// journalName is the default journal file of a replay from the source url:
// its letters and digits, cut to 64, a hash for uniqueness, ".journal".
func journalName(url string) string {
	var b strings.Builder
	for _, r := range url {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 64 {
		name = name[:64]
	}
	sum := sha256.Sum256([]byte(url))
	return name + "-" + hex.EncodeToString(sum[:6]) + ".journal"
}
