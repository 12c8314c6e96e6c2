package triage

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// The actions that take dead letters out without replaying them: a
// (archive, into --archive-file) and x (purge).

// ArchiveDestination implements triage.Actions.
func (a *triageActions) ArchiveDestination() string { return a.o.archiveFile }

// Archive implements triage.Actions: inspect.Archive into --archive-file
// (write, fsync, then remove); a dry run counts what would be archived.
func (a *triageActions) Archive(ctx context.Context, ids []string, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	defer a.acting()()
	res, err := a.archive(ctx, ids, dryRun, progress)
	a.record(ctx, "archive", ids, a.o.archiveFile, dryRun, res, err)
	return res, err
}

func (a *triageActions) archive(ctx context.Context, ids []string, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	f := inspect.Filter{IDs: ids, Limit: len(ids)}
	src, _, closeSrc, err := a.Open(ctx, !dryRun)
	if err != nil {
		return triage.Result{}, err
	}
	if dryRun {
		n, cerr := inspect.Count(ctx, src, f)
		return triage.Result{Done: n, Summary: fmt.Sprintf("would archive %d to %s", n, a.o.archiveFile)}, errors.Join(cerr, closeSrc())
	}
	// As dlq archive: a file that is not an archive is refused untouched,
	// a killed archive's unfinished last line is cut (checkArchiveFile).
	af, err := shared.CheckArchiveFile(a.o.archiveFile)
	if err != nil {
		_ = closeSrc()
		return triage.Result{}, err
	}
	fh, err := af.Open(a.o.archiveFile, a.logger)
	if err != nil {
		_ = closeSrc()
		return triage.Result{}, err
	}
	sf := inspect.ArchiveFile(a.o.archiveFile, a.o.IO.SyncFileOf(fh))
	sum, aerr := inspect.Archive(ctx, src, f, sf, shared.Fsyncer(sf))
	err = errors.Join(aerr, closeSrc(), fh.Close())
	return triage.Result{Done: sum.Archived, Failed: sum.Failed,
		Summary: fmt.Sprintf("archived %d to %s, failed %d", sum.Archived, a.o.archiveFile, sum.Failed)}, err
}

// Purge implements triage.Purger: inspect.Archive to nowhere, as dlq purge
// does (each message removed once read; nothing kept); a dry run counts
// what would be purged.
func (a *triageActions) Purge(ctx context.Context, ids []string, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	defer a.acting()()
	res, err := a.purge(ctx, ids, dryRun)
	a.record(ctx, "purge", ids, "", dryRun, res, err)
	return res, err
}

func (a *triageActions) purge(ctx context.Context, ids []string, dryRun bool) (triage.Result, error) {
	f := inspect.Filter{IDs: ids, Limit: len(ids)}
	src, _, closeSrc, err := a.Open(ctx, !dryRun)
	if err != nil {
		return triage.Result{}, err
	}
	if dryRun {
		n, cerr := inspect.Count(ctx, src, f)
		return triage.Result{Done: n, Summary: fmt.Sprintf("would purge %d", n)}, errors.Join(cerr, closeSrc())
	}
	sum, perr := inspect.Archive(ctx, src, f, io.Discard, nil)
	err = errors.Join(perr, closeSrc())
	return triage.Result{Done: sum.Archived, Failed: sum.Failed,
		Summary: fmt.Sprintf("purged %d, failed %d", sum.Archived, sum.Failed)}, err
}
