package shared

import (
	"errors"
	"os"
	osuser "os/user"
	"path/filepath"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/transport"
)

// The state kept beside the replay journals, in
// $XDG_STATE_HOME/brighter/replay (default ~/.local/state): the retry
// history (every copy a replay or an edit published, and every record a
// restore published, kept) and the notes
// on failure groups.

// Files of the state directory.
const (
	// RetryHistoryFile is the retry history's file name.
	RetryHistoryFile = "retries.jsonl"
	// GroupNotesFile is the group notes' file name.
	GroupNotesFile = "notes.json"
)

// StateDir is the directory of the replay journals, the retry history and
// the group notes: $XDG_STATE_HOME/brighter/replay, else
// $HOME/.local/state/brighter/replay; an error when neither is known.
func (o *Options) StateDir() (string, error) {
	dir := o.Env("XDG_STATE_HOME")
	if dir == "" {
		home := o.Env("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil || home == "" {
				return "", errors.New("no state directory: set $XDG_STATE_HOME or $HOME")
			}
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "brighter", "replay"), nil
}

// WhoAmI is the user and host an audit or history record names.
func (o *Options) WhoAmI() (user, host string) {
	user = o.Env("USER")
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		user = u.Username
	}
	host, _ = os.Hostname()
	return user, host
}

// GroupNotes is the group notes of this state directory (nil when there
// is none): what the console's n writes and dlq stats shows.
func (o *Options) GroupNotes() *inspect.GroupNotes {
	dir, err := o.StateDir()
	if err != nil {
		return nil
	}
	return inspect.NewGroupNotes(filepath.Join(dir, GroupNotesFile))
}

// RetryHistory is the retry history of this state directory (nil, and no
// history kept, when there is none), its records stamped with the
// endpoint of t (transport.Target.Endpoint): the history of a queue on an
// emulator is not that of the production queue of the same name.
func (o *Options) RetryHistory(t *transport.Target) *inspect.RetryHistory {
	dir, err := o.StateDir()
	if err != nil {
		return nil
	}
	user, host := o.WhoAmI()
	return inspect.NewRetryHistory(filepath.Join(dir, RetryHistoryFile), user, host, t.Endpoint(o.Env))
}

// ArchiveName is how the retry history names the archive file a restore
// read: its absolute path (as given when it has none), "stdin" for "-".
func ArchiveName(file string) string {
	if file == "-" {
		return "stdin"
	}
	if abs, err := filepath.Abs(file); err == nil {
		return abs
	}
	return file
}
