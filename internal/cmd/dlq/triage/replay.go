package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// The console's replays (r, R, and the edited copies of e and E): where
// they go, the replay journal they keep and the line each ends with.

// ReplayDestinations implements triage.Actions.
func (a *triageActions) ReplayDestinations(ms []*message.Message) []string {
	var out []string
	for _, m := range ms {
		d := a.to
		if d == "" && a.refused != nil {
			d = redact.URL(inspect.Describe(m).OriginalTopic) + " (refused: it fans out to other subscriptions; give --to or --fan-out)"
		} else if d == "" {
			d = inspect.Describe(m).OriginalTopic
			refused := a.allow != nil && !a.allow(d)
			d = redact.URL(d) // shown, never published from here
			if refused {
				d += " (refused: not on the allow-list)"
			}
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// progressFunc is an inspect.Progress over a function.
type progressFunc func(inspect.Outcome)

func (p progressFunc) Done(o inspect.Outcome) { p(o) }

// replay runs inspect.Replay over the messages with ids (one stored copy
// each: an id stored twice is given twice), as dlq replay does, with
// transform (dlq edit's) when set: an edit is of every stored copy of its
// id.
func (a *triageActions) replay(ctx context.Context, ids []string, dryRun bool, transform func(m, c *message.Message) error, progress func(triage.Outcome)) (triage.Result, error) {
	if a.refused != nil {
		return triage.Result{Failed: len(ids), Summary: "refused: nothing was replayed"}, a.refused
	}
	// The replay journal of dlq replay, the same file: opened (and
	// locked) before anything is read, each copy recorded "sending" before
	// its publish, "sent" after it and "removed" once its message is, so
	// that a console killed mid-replay is resumed by the next replay
	// (here or dlq replay) without publishing a copy twice.
	var journal *inspect.FileJournal
	if !dryRun {
		j, err := a.o.OpenJournal(a.t)
		if err != nil {
			return triage.Result{}, err
		}
		journal = j
	}
	closeJournal := func(interrupted, scanFailed bool, sum inspect.Summary) (string, error) {
		if journal == nil {
			return "", nil
		}
		j := journal
		journal = nil
		return shared.CloseJournal(j, interrupted, scanFailed, sum.Failed, sum.FailedUnpublished, false)
	}
	src, _, closeSrc, err := a.Open(ctx, !dryRun)
	if err != nil {
		_, _ = closeJournal(false, false, inspect.Summary{})
		return triage.Result{}, err
	}
	var prod broker.Producer
	if !dryRun {
		if prod, err = a.dt.DLQProducer(ctx, a.t, a.logger); err != nil {
			_ = closeSrc()
			_, _ = closeJournal(false, false, inspect.Summary{})
			return triage.Result{}, fmt.Errorf("producer: %w", err)
		}
		if prod, err = a.guard.Routed(ctx, prod); err != nil {
			_ = closeSrc()
			_, _ = closeJournal(false, false, inspect.Summary{})
			return triage.Result{}, fmt.Errorf("producer: %w", err)
		}
	}
	if journal != nil {
		if journal.Cut() != "" {
			a.logger.WarnContext(ctx, inspect.LogJournalCut, "journal", journal.Path(), "line", redact.Quote(journal.Cut()))
		}
		if journal.NoID() > 0 {
			a.logger.WarnContext(ctx, inspect.LogJournalNoID, "journal", journal.Path(), "lines", journal.NoID())
		}
	}
	// resumed counts the copies the journal recorded sent by an earlier
	// run: removed now, not published again.
	var resumed atomic.Int64
	opts := inspect.ReplayOptions{To: a.to, Allow: a.allow, Route: a.guard.RouteFunc(), DryRun: dryRun, Now: a.o.Now, Transform: transform, History: a.history, Journal: journalOf(journal),
		Progress: progressFunc(func(out inspect.Outcome) {
			err := out.Err
			if out.Resumed && err == nil {
				resumed.Add(1)
			}
			if out.Left {
				err = errLeft
			}
			progress(triage.Outcome{ID: out.ID, Err: err})
		})}
	f := inspect.Filter{IDs: ids, Limit: len(ids)}
	if transform != nil {
		// An edit goes to every stored copy of its id, as dlq edit's does
		// (a copy the edit does not fit fails, counted, and stays).
		f.Limit = 0
	}
	sum, rerr := inspect.Replay(ctx, src, shared.ReplaySelf(a.t), prod, f, opts)
	cerr := closeSrc()
	path := ""
	if journal != nil {
		path = journal.Path()
	}
	kept, jerr := closeJournal(ctx.Err() != nil, rerr != nil, sum)
	cerr = errors.Join(cerr, jerr)
	if prod != nil {
		cerr = errors.Join(prod.Close(context.WithoutCancel(ctx)), cerr)
	}
	line := replaySummary(sum)
	if n := int(resumed.Load()); n > 0 {
		line = fmt.Sprintf("%s; %s an earlier run had sent (the replay journal says) removed, not sent again", line, shared.Plural(n, "copy"))
	}
	if kept != "" {
		line += "; replay journal " + path + " kept: " + kept
		a.logger.WarnContext(ctx, LogJournalKept, "source", a.t.URL, "journal", path, "why", kept)
	}
	res := triage.Result{Done: sum.Replayed, Failed: sum.Failed + sum.Refused + sum.Left, Summary: line}
	return res, errors.Join(rerr, cerr)
}

// LogJournalKept is logged (Warning) when a console replay ends keeping
// its replay journal: journal (the file) and why (as dlq replay says it).
const LogJournalKept = "replay journal kept"

// journalOf is j as an inspect.ReplayJournal: nil (no journal) when j is.
func journalOf(j *inspect.FileJournal) inspect.ReplayJournal {
	if j == nil {
		return nil
	}
	return j
}

// errLeft is the console's error for a message a replay left because it
// was dead-lettered again while the replay ran (inspect.Outcome.Left).
var errLeft = errors.New("dead-lettered again while the replay ran; it stays in the dead-letter destination")

// replaySummary is the console's line for a replay: what was replayed,
// failed and refused. The messages the scan read but were not asked for
// (Summary.Skipped) are not the operator's business and not shown.
func replaySummary(sum inspect.Summary) string {
	verb := "replayed"
	if sum.DryRun {
		verb = "would replay"
	}
	line := fmt.Sprintf("%s %d, failed %d", verb, sum.Replayed, sum.Failed)
	if sum.Refused > 0 {
		line += fmt.Sprintf(", refused %d (not on the allow-list)", sum.Refused)
	}
	if sum.Left > 0 {
		line += fmt.Sprintf(", left %d (dead-lettered again while it ran)", sum.Left)
	}
	if sum.Failed+sum.Refused+sum.Left > 0 {
		line += "; failed, refused and left messages stay in the dead-letter destination"
	}
	return line
}

// Replay implements triage.Actions.
func (a *triageActions) Replay(ctx context.Context, ids []string, dryRun bool, progress func(triage.Outcome)) (triage.Result, error) {
	defer a.acting()()
	res, err := a.replay(ctx, ids, dryRun, nil, progress)
	a.record(ctx, "replay", ids, a.replayDestination(ids), dryRun, res, err)
	return res, err
}

// replayDestination is where a replay of ids goes, for the audit record:
// --to, else "originalTopic" (each message's, as the allow-list and the
// fan-out guard allow).
func (a *triageActions) replayDestination([]string) string {
	if a.to != "" {
		return a.to
	}
	return "originalTopic"
}
