package dlq

import (
	"errors"
	"os"
	osuser "os/user"
	"path/filepath"

	"github.com/brightergo/brighter/internal/inspect"
)

// The state kept beside the replay journals, in
// $XDG_STATE_HOME/brighter/replay (default ~/.local/state): the retry
// history (every copy a replay or an edit published, kept) and the notes
// on failure groups.

// Files of the state directory.
const (
	retryHistoryFile = "retries.jsonl"
	groupNotesFile   = "notes.json"
)

// stateDir is the directory of the replay journals, the retry history and
// the group notes: $XDG_STATE_HOME/brighter/replay, else
// $HOME/.local/state/brighter/replay; an error when neither is known.
func (o *dlqOptions) stateDir() (string, error) {
	dir := o.env("XDG_STATE_HOME")
	if dir == "" {
		home := o.env("HOME")
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

// whoAmI is the user and host an audit or history record names.
func (o *dlqOptions) whoAmI() (user, host string) {
	user = o.env("USER")
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		user = u.Username
	}
	host, _ = os.Hostname()
	return user, host
}

// retryHistory is the retry history of this state directory (nil, and no
// history kept, when there is none).
func (o *dlqOptions) retryHistory() *inspect.RetryHistory {
	dir, err := o.stateDir()
	if err != nil {
		return nil
	}
	user, host := o.whoAmI()
	return inspect.NewRetryHistory(filepath.Join(dir, retryHistoryFile), user, host)
}
