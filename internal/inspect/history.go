package inspect

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Retry is one retry of a dead letter as the retry history records it: a
// replay (dlq replay, the console's r and R), an edited copy replayed (the
// console's e, dlq edit) or a restore from an archive file.
type Retry struct {
	// At is when the copy was accepted by its destination.
	At time.Time `json:"at"`
	// Action is "replay", "edit" or "restore".
	Action string `json:"action"`
	// ID is the message's id.
	ID string `json:"id"`
	// From is the URL the message was read from (the dead-letter
	// destination, or the archive file of a restore).
	From string `json:"from"`
	// To is where the copy was published (redacted as logs are).
	To string `json:"to"`
	// Endpoint is the broker endpoint of From and To, redacted as logs
	// are (an emulator's host:port, a region's AWS endpoint; see
	// transport.Target.Endpoint): a queue of the same name on an emulator
	// and in production are two histories. "" in records written before
	// it was recorded.
	Endpoint string `json:"endpoint,omitempty"`
	// User and Host are who ran it and where.
	User string `json:"user,omitempty"`
	Host string `json:"host,omitempty"`
}

// RetryHistory appends Retry records, one JSON object a line, to a file
// beside the replay journals (kept, unlike a journal, which a clean run
// deletes). Safe for concurrent use; the file is created (mode 0600, its
// directory 0700) on the first record. A nil *RetryHistory records
// nothing.
type RetryHistory struct {
	mu         sync.Mutex
	path       string
	user, host string
	endpoint   string
}

// NewRetryHistory records into the file at path as user on host, each
// record stamped with endpoint (Retry.Endpoint: the broker endpoint of
// the command's destinations, redacted).
func NewRetryHistory(path, user, host, endpoint string) *RetryHistory {
	return &RetryHistory{path: path, user: user, host: host, endpoint: endpoint}
}

// Endpoint is the endpoint the history stamps on its records (what
// DLQHistory is given to read them back).
func (h *RetryHistory) Endpoint() string { return h.endpoint }

// Path is the history's file.
func (h *RetryHistory) Path() string { return h.path }

// Record appends rs, stamped with the history's user, host and endpoint.
// Errors name the path.
func (h *RetryHistory) Record(rs ...Retry) error {
	if h == nil || len(rs) == 0 {
		return nil
	}
	var buf []byte
	for _, r := range rs {
		r.User, r.Host, r.Endpoint = h.user, h.host, h.endpoint
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("retry history %s: %w", h.path, err)
		}
		buf = append(append(buf, line...), '\n')
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("retry history %s: %w", h.path, err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("retry history %s: %w", h.path, err)
	}
	_, err = f.Write(buf)
	return errors.Join(wrapPath(err, h.path), wrapPath(f.Close(), h.path))
}

func wrapPath(err error, path string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("retry history %s: %w", path, err)
}

// ActionRestore is the Action of a Retry that records a restore from an
// archive file: its From is the archive file, its To the destination the
// record was published to (the dead-letter destination, unless --to).
const ActionRestore = "restore"

// IsRestore reports whether r records a restore (ActionRestore), not a
// retry of the message towards a handler (a replay or an edit).
func (r Retry) IsRestore() bool { return r.Action == ActionRestore }

// RecordRestores wraps done, inspect.Restore's callback, so that each
// record published (err nil) is also recorded in h as a restore
// (ActionRestore) from the archive file to dest at now(). A failed record
// is not recorded; a history that cannot be written is logged at Warn
// (LogHistoryFailed) and does not fail the restore. With a nil h, done is
// returned as is.
func RecordRestores(ctx context.Context, h *RetryHistory, archive, dest string, now func() time.Time, log *slog.Logger, done func(id string, err error)) func(id string, err error) {
	if h == nil {
		return done
	}
	to := redact.URL(dest)
	return func(id string, err error) {
		if err == nil {
			if herr := h.Record(Retry{At: now().UTC(), Action: ActionRestore, ID: id, From: archive, To: to}); herr != nil {
				log.WarnContext(ctx, LogHistoryFailed, "message_id", id, "source", archive, "error", herr.Error())
			}
		}
		if done != nil {
			done(id, err)
		}
	}
}

// DLQHistory is the records of a dead-letter destination named from at
// endpoint (Retry.Endpoint) in a retry history: the replays and edits read
// from it, and the restores published into it (To is restoreDest,
// redacted as records are). A record of another endpoint (the same queue
// name on an emulator) is not its, nor is one written before records named
// their endpoint.
func DLQHistory(from, restoreDest, endpoint string) func(Retry) bool {
	to := redact.URL(restoreDest)
	return func(r Retry) bool {
		if r.Endpoint != endpoint {
			return false
		}
		if r.IsRestore() {
			return restoreDest != "" && r.To == to
		}
		return r.From == from
	}
}

// ReadRetryHistory reads the records of the history file at path that keep
// accepts (nil: every one), oldest first. A missing file is no records; a
// line that is not a record (a write cut short by a crash) is skipped.
func ReadRetryHistory(path string, keep func(Retry) bool) ([]Retry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retry history %s: %w", path, err)
	}
	defer f.Close()
	var out []Retry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var r Retry
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID == "" {
			continue
		}
		if keep == nil || keep(r) {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("retry history %s: %w", path, err)
	}
	return out, nil
}

// RetryState is where a retried message stands (RetryStatus).
type RetryState int

const (
	// RetryPending: replayed less than the settle period ago and not back in
	// the dead-letter destination since.
	RetryPending RetryState = iota + 1
	// RetryFailedAgain: a copy with the same id was dead-lettered (rejected)
	// after the last retry.
	RetryFailedAgain
	// RetrySettled: not back in the settle period after the last retry:
	// presumed handled.
	RetrySettled
)

// String is the state as the console shows it.
func (s RetryState) String() string {
	switch s {
	case RetryPending:
		return "pending"
	case RetryFailedAgain:
		return "failed again"
	case RetrySettled:
		return "settled"
	}
	return ""
}

// RetryStatus is where the last of retries (one id's, oldest first;
// restores, which send nothing to a handler, are left out) stands
// at now, given ms, the dead-letter destination's messages just read:
// RetryFailedAgain when a copy of the id in ms was rejected after the last
// retry; else RetryPending while now is less than settle after it; else
// RetrySettled. 0 when retries holds no replay or edit.
func RetryStatus(retries []Retry, ms []*message.Message, now time.Time, settle time.Duration) RetryState {
	if len(retries) == 0 {
		return 0
	}
	retries = slices.DeleteFunc(slices.Clone(retries), Retry.IsRestore)
	if len(retries) == 0 {
		return 0
	}
	last := retries[len(retries)-1]
	for _, m := range ms {
		if m.Header.MessageID == last.ID && !Describe(m).RejectedAt.Before(last.At) {
			return RetryFailedAgain
		}
	}
	if now.Sub(last.At) < settle {
		return RetryPending
	}
	return RetrySettled
}
