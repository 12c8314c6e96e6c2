package triage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// What the console keeps beside the dead letters: the retry history, the
// archive file (its view and the restores from it) and the group notes.

// Retries implements triage.HistoryReader: the retry history's records of
// this destination, the replays and edits read from it and the restores
// published into it (none without a state directory).
func (a *triageActions) Retries() ([]inspect.Retry, error) {
	if a.history == nil {
		return nil, nil
	}
	return inspect.ReadRetryHistory(a.history.Path(), inspect.DLQHistory(a.t.URL, a.RestoreDestination(), a.history.Endpoint()))
}

// Archived implements triage.ArchiveReader: the records of --archive-file
// (none when it does not exist yet), for the console's archived view.
func (a *triageActions) Archived() ([]*message.Message, error) {
	f, err := os.Open(a.o.archiveFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archive file: %w", err)
	}
	defer f.Close()
	return inspect.ReadArchive(f, a.o.archiveFile)
}

// notes is the group notes of the state directory (nil when there is
// none).
func (a *triageActions) notes() *inspect.GroupNotes { return a.o.GroupNotes() }

// Notes implements triage.NoteKeeper: this destination's group notes.
func (a *triageActions) Notes() (map[string]inspect.GroupNote, error) {
	n := a.notes()
	if n == nil {
		return nil, nil
	}
	return n.Read(a.t.URL)
}

// SetNote implements triage.NoteKeeper: the note, signed user@host.
func (a *triageActions) SetNote(group, text string) error {
	n := a.notes()
	if n == nil {
		return errors.New("no state directory for notes: set $XDG_STATE_HOME or $HOME")
	}
	user, host := a.o.WhoAmI()
	return n.Set(a.t.URL, group, inspect.GroupNote{Text: text, By: user + "@" + host, At: a.o.Now().UTC()})
}

// restoreDest is the dead-letter destination a restore publishes to, as
// dlq restore without --to names it, and the target it publishes with.
func (a *triageActions) restoreDest() (*transport.Target, string, error) {
	rt := shared.RestoreTarget(a.t)
	dest, err := shared.ToName(rt, a.dt, a.dt.ReplayFrom(rt).Name)
	return rt, dest, err
}

// RestoreDestination implements triage.Restorer.
func (a *triageActions) RestoreDestination() string {
	if _, dest, err := a.restoreDest(); err == nil {
		return dest
	}
	return a.t.URL
}

// archivedRecords is the records of --archive-file whose id is one of ids.
func (a *triageActions) archivedRecords(ids []string) ([]*message.Message, error) {
	all, err := a.Archived()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(m *message.Message) bool { return !slices.Contains(ids, m.Header.MessageID) }), nil
}

// AlreadyThere implements triage.Restorer: dlq restore's check
// (inspect.AlreadyThere) of the destination for the records' ids.
func (a *triageActions) AlreadyThere(ctx context.Context, ids []string) (map[string]int, error) {
	ms, err := a.archivedRecords(ids)
	if err != nil {
		return nil, err
	}
	src, _, closeSrc, err := a.Open(ctx, false)
	if err != nil {
		return nil, err
	}
	there, err := inspect.AlreadyThere(ctx, src, ms)
	return there, errors.Join(err, closeSrc())
}

// Restore implements triage.Restorer: dlq restore of the archive file's
// records with ids into the dead-letter destination (the file is not
// changed), refused, publishing nothing, when the destination already
// holds one of them and dup is false.
func (a *triageActions) Restore(ctx context.Context, ids []string, dup, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	defer a.acting()()
	res, err := a.restore(ctx, ids, dup, dryRun, progress)
	a.record(ctx, "restore", ids, a.RestoreDestination(), dryRun, res, err)
	return res, err
}

func (a *triageActions) restore(ctx context.Context, ids []string, dup, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	rt, dest, err := a.restoreDest()
	if err != nil {
		return triage.Result{}, err
	}
	if err := shared.RestoreGuard(ctx, rt, a.dt, dest, a.o.FanOut); err != nil {
		return triage.Result{}, err
	}
	ms, err := a.archivedRecords(ids)
	if err != nil {
		return triage.Result{}, err
	}
	if len(ms) == 0 {
		return triage.Result{}, fmt.Errorf("restore: %s holds none of the records asked for; nothing was restored", a.o.archiveFile)
	}
	// The memory transport publishes into the file its reader loads and
	// writes back on close: the reader stays open, rewriting, until the
	// publishes are done. Any other reader is closed (everything it read
	// released) before anything is published.
	memory := a.t.S.Transport == config.TransportMemory && !dryRun
	src, _, closeSrc, err := a.Open(ctx, memory)
	if err != nil {
		return triage.Result{}, err
	}
	there, err := inspect.AlreadyThere(ctx, src, ms)
	if err == nil && len(there) > 0 && !dup {
		err = fmt.Errorf("restore: %s already holds %s of the records: %s; nothing was restored (restore them again to be asked about another copy)",
			dest, shared.Plural(len(there), "id"), strings.Join(slices.Sorted(maps.Keys(there)), ", "))
	}
	if !memory || err != nil || dryRun {
		if cerr := closeSrc(); err == nil && cerr != nil {
			err = fmt.Errorf("restore: check %s: %w", dest, cerr)
		}
		closeSrc = func() error { return nil }
	}
	if err != nil {
		return triage.Result{Failed: len(ms), Summary: "restore refused: nothing was restored"}, err
	}
	if dryRun {
		return triage.Result{Done: len(ms), Summary: fmt.Sprintf("would restore %d to %s, already there %d", len(ms), dest, len(there))}, nil
	}
	p, err := a.dt.DLQProducer(ctx, rt, a.logger)
	if err != nil {
		return triage.Result{}, errors.Join(fmt.Errorf("restore to %s: producer: %w", dest, err), closeSrc())
	}
	done := inspect.RecordRestores(ctx, a.history, shared.ArchiveName(a.o.archiveFile), dest, a.o.Now, a.logger, func(id string, err error) { progress(triage.Outcome{ID: id, Err: err}) })
	sum, rerr := inspect.Restore(ctx, p, ms, dest, a.logger, done)
	cerr := errors.Join(p.Close(context.WithoutCancel(ctx)), closeSrc())
	res := triage.Result{Done: sum.Restored, Failed: sum.Failed, Summary: fmt.Sprintf("restored %d to %s, failed %d; the archive file keeps every record", sum.Restored, dest, sum.Failed)}
	return res, errors.Join(rerr, cerr)
}
