package triage

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// Outcome is one message's result of an action, for the progress line.
type Outcome struct {
	// ID is the message id.
	ID string
	// Err is why it failed; nil when done.
	Err error
}

// Result is the end of an action.
type Result struct {
	// Done and Failed count the messages the action did and could not do.
	Done, Failed int
	// Summary is the line to show ("replayed 3, skipped 0, failed 0").
	Summary string
}

// Editing is one message's edit in progress: the editor command the
// console runs (suspending itself, tea.ExecProcess), then Finish replays
// the edited copy (`dlq edit`'s code path).
type Editing interface {
	// Command is the editor process to run on the terminal.
	Command() *exec.Cmd
	// Destination is where the edited copy would go.
	Destination() string
	// Copies is how many stored copies of the id the edit goes to (each
	// edited and replayed as dlq edit does), for the confirmation.
	Copies() int
	// Edited is the edit as it stands, for the confirmation: the edited
	// body (e), or the edited headers and bag as JSON (E); "" when it
	// cannot be read (Check says why).
	Edited() string
	// Check validates the edit as it stands (the body for its content
	// type, as dlq edit's inspect.ValidateBody); it sends nothing. The
	// console calls it as soon as the editor returns, so an invalid edit
	// is offered back to the editor, never for replay.
	Check() error
	// Finish validates the edit and replays the edited copy (nothing is
	// sent with dryRun); an invalid body is an error and nothing is sent.
	Finish(ctx context.Context, dryRun bool) (Result, error)
	// Close removes the edit's files.
	Close()
}

// Actions are what the console does to the dead-letter destination. Each
// reads the destination afresh and releases what it read before it
// returns: nothing is held between actions.
type Actions interface {
	// Source names the destination (a URL) for the header.
	Source() string
	// Load reads every message of the destination (as dlq peek: held while
	// read, released at once).
	Load(ctx context.Context) ([]*message.Message, error)
	// ReplayDestinations are where replaying ms would publish, distinct,
	// for the confirmation (a refused originalTopic is marked so).
	ReplayDestinations(ms []*message.Message) []string
	// Replay replays the messages with these ids as dlq replay does,
	// telling progress about each.
	Replay(ctx context.Context, ids []string, dryRun bool, progress func(Outcome)) (Result, error)
	// ArchiveDestination is the archive file.
	ArchiveDestination() string
	// Archive archives the messages with these ids as dlq archive does.
	Archive(ctx context.Context, ids []string, dryRun bool, progress func(Outcome)) (Result, error)
	// Edit starts an edit of m's body: it reads the stored copies of m's
	// id first and refuses (an error saying why; no editor runs, nothing
	// is sent) copies one edit cannot be applied to (bodies that differ),
	// as dlq edit does.
	Edit(ctx context.Context, m *message.Message) (Editing, error)
}

// Purger is implemented by Actions that delete messages for good, keeping
// no copy, as dlq purge does: the console's x.
type Purger interface {
	// Purge removes the messages with these ids (every stored copy); a
	// dry run counts what would be purged and removes nothing.
	Purge(ctx context.Context, ids []string, dryRun bool, progress func(Outcome)) (Result, error)
}

// LoadNoter is implemented by Actions whose Load can tell what it could
// not read: LoadNote, asked right after each Load, is a line for the status
// bar (for example how many messages another reader held invisible), ""
// when there is nothing to say.
type LoadNoter interface {
	LoadNote() string
}

// HistoryReader is implemented by Actions that keep a retry history
// (inspect.RetryHistory): Retries, asked after each Load, is every retry
// recorded of the destination's messages, oldest first.
type HistoryReader interface {
	Retries() ([]inspect.Retry, error)
}

// ArchiveReader is implemented by Actions that can read back what their
// Archive wrote: Archived is every record of the archive file (none when
// it does not exist), for the console's read-only archived view.
type ArchiveReader interface {
	Archived() ([]*message.Message, error)
}

// Restorer is implemented by Actions that put archived records back into
// the dead-letter destination, as dlq restore does: the archived view's r
// (the selection, or what is under the cursor) and R (the group).
type Restorer interface {
	// RestoreDestination names the dead-letter destination Restore
	// publishes to, for the confirmation.
	RestoreDestination() string
	// AlreadyThere reads the destination (releasing everything it reads,
	// inspect.AlreadyThere) and returns, for each of ids it already
	// holds, how many copies it holds; the console names them in the
	// confirmation.
	AlreadyThere(ctx context.Context, ids []string) (map[string]int, error)
	// Restore publishes the archive file's records with these ids to
	// RestoreDestination, as they were archived (the file is not
	// changed). It checks the destination again first and, unless dup
	// (the operator confirmed ids already there), refuses with an error,
	// publishing nothing, when the destination holds one of the ids. A
	// dry run publishes nothing and counts what would be restored.
	Restore(ctx context.Context, ids []string, dup, dryRun bool, progress func(Outcome)) (Result, error)
}

// NoteKeeper is implemented by Actions that keep notes on failure groups
// (inspect.GroupNotes): Notes, asked after each Load, is the
// destination's notes by group id; SetNote writes one (an empty text
// removes it).
type NoteKeeper interface {
	Notes() (map[string]inspect.GroupNote, error)
	SetNote(group, text string) error
}

// HeaderEditor is implemented by Actions that edit a message's headers
// and bag (dlq edit --headers: a YAML document in $EDITOR, refusing what
// dlq edit --set refuses) before replaying the edited copy through the
// same allow-list as every replay.
type HeaderEditor interface {
	EditHeaders(ctx context.Context, m *message.Message) (Editing, error)
}

// confirm is a destructive action waiting for y/n.
type confirm struct {
	prompt string
	what   string
	total  int
	job    func(ctx context.Context, progress func(Outcome)) (Result, error)
	// yes, when set, is what y does instead of starting job.
	yes    func() tea.Cmd
	cancel func()
	// cancelled is the status line of n ("" for the default).
	cancelled string
}

// wait reads the next message of an action's channel.
func wait(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

// start runs an action in the background, reporting progress. The action
// runs with a context of its own, ended by ctrl+c (stop) or when the
// console's context ends: every send of its progress and of its end also
// waits for that context, so an action whose console has quit (nobody
// reads its channel any more) finishes what it began and returns instead
// of blocking on a full channel.
func (m *Model) start(what string, total int, run func(ctx context.Context, progress func(Outcome)) (Result, error)) tea.Cmd {
	m.busy, m.done, m.failed, m.total, m.status = what, 0, 0, total, ""
	ch := make(chan tea.Msg, 64)
	ctx, stop := context.WithCancel(m.ctx)
	m.stop = stop
	send := func(msg tea.Msg) {
		select {
		case ch <- msg:
		case <-ctx.Done():
		}
	}
	go func() {
		defer stop()
		defer close(ch)
		res, err := run(ctx, func(o Outcome) { send(progressMsg{ch: ch, out: o}) })
		send(doneMsg{what: what, res: res, err: err})
	}()
	return wait(ch)
}

func (m Model) dryTag() string {
	if m.dryRun {
		return "[dry run] "
	}
	return ""
}

// editCmd runs the editor of ed on the terminal (the console suspended)
// and reports its end as an editedMsg.
func editCmd(id string, ed Editing) tea.Cmd {
	return tea.ExecProcess(ed.Command(), func(err error) tea.Msg { return editedMsg{id: id, ed: ed, err: err} })
}

func (m Model) askReplay(ms []*message.Message, what string) (tea.Model, tea.Cmd) {
	if len(ms) == 0 {
		return m, nil
	}
	dests, act, list, dry := m.act.ReplayDestinations(ms), m.act, ids(ms), m.dryRun
	m.ask = &confirm{
		prompt: fmt.Sprintf("%sReplay %s (%s: %s) from %s to %s? (y/n)", m.dryTag(), count(len(ms)), what, idList(list), m.act.Source(), strings.Join(dests, ", ")),
		what:   "replay", total: len(list),
		job: func(ctx context.Context, p func(Outcome)) (Result, error) {
			return act.Replay(ctx, list, dry, p)
		},
	}
	return m, nil
}

// askPurge asks to purge the selection (or what is under the cursor):
// deleted for good, no copy kept, as dlq purge (x).
func (m Model) askPurge() (tea.Model, tea.Cmd) {
	ms := m.target()
	if len(ms) == 0 {
		return m, nil
	}
	p, ok := m.act.(Purger)
	if !ok {
		m.status = "purge is not available here: use brighter dlq purge"
		return m, nil
	}
	list, dry := ids(ms), m.dryRun
	of := ""
	if g := m.groupAtCursor(); g != nil {
		of = "of " + g.name() + ": "
	}
	m.ask = &confirm{
		prompt: fmt.Sprintf("%sPurge %s (%s%s) from %s: deleted for good, no copy kept? (y/n)", m.dryTag(), count(len(ms)), of, idList(list), m.act.Source()),
		what:   "purge", total: len(ms),
		job: func(ctx context.Context, pr func(Outcome)) (Result, error) {
			return p.Purge(ctx, list, dry, pr)
		},
	}
	return m, nil
}

// idList names ids for a prompt: each id once (an id stored several
// times is named with ×N), at most five, then how many more.
func idList(ids []string) string {
	n := map[string]int{}
	var distinct []string
	for _, id := range ids {
		if n[id] == 0 {
			distinct = append(distinct, id)
		}
		n[id]++
	}
	ids = distinct
	for i, id := range ids {
		if n[id] > 1 {
			ids[i] = fmt.Sprintf("%s ×%d", id, n[id])
		}
	}
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:4], ", "), len(ids)-4)
}

func count(n int) string {
	if n == 1 {
		return "1 message"
	}
	return fmt.Sprintf("%d messages", n)
}
