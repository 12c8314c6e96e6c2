package shared

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)
// dlq replay: its flags, its run and its confirmation (--to is resolved in
// dlq_to.go).

// dlqReplayOptions are replay's own flags.
type dlqReplayOptions struct {
	*dlqOptions
	to          string
	toSet       bool
	newID       bool
	keepCount   bool
	dryRun      bool
	rate        float64
	confirmOver int
	yes         bool
	// format is --output: text (a line per message) or json (a JSON
	// record per message, then the summary).
	format string
	// json is the JSON-lines progress when format is json.
	json *inspect.ReplayJSON
	// allowAny is --allow-any-destination: without --to, replay to any
	// originalTopic, not only those the subscriptions file knows.
	allowAny bool
	// copy is --copy: keep the dead-letter copy.
	copy bool
	// prepare, when set (dlq edit), runs once the destination is open and
	// before the replay scan, and returns the transform each replay copy
	// goes through (inspect.ReplayOptions.Transform).
	prepare func(ctx context.Context, t *dlqTarget, src *inspect.Source) (func(m, c *message.Message) error, error)
	// editID, set by dlq edit, is the one message the run is about: its
	// summary speaks of it, not of the scan.
	editID string
	// journal is --journal: the replay journal's file ("" with journalSet:
	// none; unset: under $XDG_STATE_HOME).
	journal    string
	journalSet bool
	// fanOut is --fan-out: without --to, publish to a topic even when other
	// subscriptions of it receive the copy too.
	fanOut bool
}
// addDestinationFlags declares the flags replay and edit share: where the
// copy goes and what it keeps (--to, --new-id, --keep-count, --dry-run,
// --output, --sns, --allow-any-destination).
func (o *dlqReplayOptions) addDestinationFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.to, "to", "", "publish every message to this topic or queue, or a URL of the source's transport (default: its originalTopic)")
	fl.BoolVar(&o.newID, "new-id", false, "give each replayed message a new id")
	fl.BoolVar(&o.keepCount, "keep-count", false, "keep the handled count instead of starting from 0")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print what would be replayed; change nothing")
	cmdutil.AddOutputFlag(cmd, &o.format, cmdutil.RunFormats, "")
	fl.BoolVar(&o.sns, "sns", false, "for an sqs:// URL only: publish replays to SNS topics instead of SQS queues")
	fl.StringVar(&o.journal, "journal", "", "the replay journal that makes an interrupted replay resumable (default: $XDG_STATE_HOME/brighter/replay/SOURCE.journal; '' for none)")
	fl.BoolVar(&o.fanOut, "fan-out", false, "without --to, publish to a topic that other subscriptions or consumer groups also receive (SNS, Pub/Sub, RocketMQ); by default such a replay is refused, or on SNS sent to the failed subscription's queue only")
	fl.BoolVar(&o.allowAny, "allow-any-destination", false, "without --to, replay to any originalTopic a message names, not only the routingKey or channelName of a subscription the file says dead-letters here")
}

func (o *dlqReplayOptions) run(ctx context.Context, arg string) error {
	su, err := o.setup(arg, func() error {
		if err := cmdutil.ParseOutput(cmdutil.RunFormats, &o.format); err != nil {
			return err
		}
		if o.rate < 0 {
			return cmdutil.UsageErr(fmt.Errorf("--rate %g: must be 0 or more", o.rate))
		}
		if o.confirmOver < 0 {
			return cmdutil.UsageErr(fmt.Errorf("--confirm-over %d: must be 0 or more", o.confirmOver))
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger, f, t, dt := su.logger, su.f, su.t, su.dt
	to, allow, guard, err := o.replayTarget(ctx, t, dt, logger)
	if err != nil {
		return err
	}
	// The journal is opened (and locked) before anything is read, so a
	// second replay on the same journal is refused at once, without
	// holding a message invisible for its count.
	var journal *inspect.FileJournal
	if !o.dryRun && !o.copy {
		if journal, err = o.openJournal(t); err != nil {
			return err
		}
		defer func() {
			if journal != nil { // a return before the replay ran: nothing new to keep
				_, _ = journal.Close(false, false)
			}
		}()
	}
	ch, err := o.openReader(ctx, t, dt, !o.dryRun, logger)
	if err != nil {
		return err
	}
	closeReader := func() error { return ch.Close(context.WithoutCancel(ctx)) }
	src := o.source(t, ch, logger)
	var transform func(m, c *message.Message) error
	if o.prepare != nil {
		if transform, err = o.prepare(ctx, t, src); err != nil {
			_ = closeReader()
			return err
		}
	}
	ctx, stop := o.interruptible(ctx, logger)
	defer stop()

	limit := f.Limit
	if f.Limit > 0 && o.editID == "" {
		// --limit picks the messages rejected first, whatever order the
		// broker hands them out in, so a dry run and the run after it
		// pick the same ones; every copy of a picked id goes with it.
		ids, err := inspect.Pick(ctx, src, f, f.Limit)
		if ctx.Err() != nil {
			_ = closeReader()
			fmt.Fprintf(o.io.ErrOut, "%s: interrupted while choosing the --limit messages; nothing was replayed\n", t.URL)
			return interrupted("replay " + t.URL)
		}
		if err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(naming(t, "replay", err))
		}
		if len(ids) == 0 {
			ids = []string{""} // nothing matched: select nothing
		}
		f.IDs, f.Limit = ids, 0
	}
	total := -1
	if !o.dryRun && !o.yes && (limit == 0 || limit > o.confirmOver) {
		// The count also gathers where the copies would go, for the
		// confirmation to name.
		var dests []string
		counts, err := inspect.Scan(ctx, src, f, func(_ context.Context, m *message.Message) (bool, error) {
			d := to
			if d == "" {
				d = inspect.Describe(m).OriginalTopic
				if route := guard.routeFunc(); route != nil {
					d = route(d)
				}
			}
			if d = redact.URL(d); !slices.Contains(dests, d) {
				dests = append(dests, d)
			}
			return false, nil
		})
		n := counts.Selected
		if ctx.Err() != nil {
			_ = closeReader()
			fmt.Fprintf(o.io.ErrOut, "%s: interrupted while counting; nothing was replayed\n", t.URL)
			return interrupted("replay " + t.URL)
		}
		if err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(naming(t, "replay", err))
		}
		total = n
		if n > o.confirmOver {
			if ok, err := o.confirm(ctx, n, t.URL, dests); !ok {
				_ = closeReader()
				if ctx.Err() != nil {
					fmt.Fprintf(o.io.ErrOut, "%s: interrupted at the confirmation; nothing was replayed\n", t.URL)
					return interrupted("replay " + t.URL)
				}
				return err
			}
		}
		// The replay never goes beyond what was confirmed (n) or, without a
		// confirmation, beyond --confirm-over, even when more messages arrive
		// (or come back) while it runs.
		capped := max(n, o.confirmOver)
		if capped == 0 {
			_ = closeReader()
			noteHeld(o.io.ErrOut, t, ch)
			return o.finish(nil, inspect.Summary{}, nil, nil, t)
		}
		if f.Limit == 0 || f.Limit > capped {
			f.Limit = capped
		}
	}
	opts := inspect.ReplayOptions{To: to, Allow: allow, Route: guard.routeFunc(), NewID: o.newID, KeepCount: o.keepCount, DryRun: o.dryRun, Rate: o.rate, Now: o.now, Copy: o.copy, Transform: transform}
	if c, ok := dt.(dryRunChecker); ok && o.dryRun {
		opts.Check = c.DryRunCheck(t)
	}
	var bar *inspect.Bar
	if o.format == export.JSON {
		o.json = inspect.NewReplayJSON(o.io.Out)
		opts.Progress = o.json
	} else if o.io.OutTTY {
		bar = inspect.NewBar(o.io.ErrOut, total, "replaying "+t.URL)
		opts.Progress = bar
	} else {
		opts.Progress = inspect.NewLines(o.io.Out)
	}
	if journal != nil {
		opts.Journal = journal
		logger.Debug("replay journal", "source", t.URL, "path", journal.Path())
		if n := journal.Pending(); n > 0 {
			fmt.Fprintf(o.io.ErrOut, "%s: resuming: the journal %s records %s sent by an earlier run and not yet removed; those are removed, not sent again\n", t.URL, journal.Path(), plural(n, "copy"))
		}
	}
	var prod broker.Producer
	if !o.dryRun {
		if prod, err = dt.DLQProducer(ctx, t, logger); err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(fmt.Errorf("replay %s: producer: %w", t.URL, err))
		}
		if prod, err = guard.routed(ctx, prod); err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(fmt.Errorf("replay %s: producer: %w", t.URL, err))
		}
	}
	sum, rerr := inspect.Replay(ctx, src, replaySelf(t), prod, f, opts)
	cerr := closeReader()
	if journal != nil {
		cerr = errors.Join(cerr, o.closeJournal(journal, t, ctx.Err() != nil, rerr != nil, sum.Failed, !o.selects() && f.Limit == 0 && sum.Refused == 0))
		journal = nil
	}
	if prod != nil {
		cerr = errors.Join(prod.Close(context.WithoutCancel(ctx)), cerr)
	}
	if ctx.Err() != nil {
		if bar != nil {
			bar.Finish()
		}
		if err := o.writeSummary(sum, true); err != nil {
			return cmdutil.FailureErr(err)
		}
		fmt.Fprintf(o.io.ErrOut, "%s: interrupted; messages not replayed are still in the dead-letter destination, visible\n", t.URL)
		return interrupted("replay " + t.URL)
	}
	if o.copy && !o.dryRun && sum.Replayed > 0 {
		fmt.Fprintf(o.io.ErrOut, "%s: --copy: the dead-letter copies were kept\n", t.URL)
	}
	noteHeld(o.io.ErrOut, t, ch)
	return o.finish(bar, sum, rerr, cerr, t)
}

// replayTarget resolves where a replay from t may publish, before
// anything is read: to is --to resolved ("" for each message's
// originalTopic), allow the allow-list's decision (nil with --to or
// --allow-any-destination) narrowed by the fan-out guard, guard the
// fan-out guard (nil with --to; its methods accept nil). Its errors are
// replay's refusals (exit 2). dlq replay, edit and triage share it.
func (o *dlqReplayOptions) replayTarget(ctx context.Context, t *dlqTarget, dt dlqTransport, logger *slog.Logger) (to string, allow func(string) bool, guard *fanOutGuard, err error) {
	to, allow, guard, refused, err := o.replayTargetOrRefusal(ctx, t, dt, logger)
	if err == nil {
		err = refused
	}
	if err != nil {
		return "", nil, nil, err
	}
	return to, allow, guard, nil
}

// replayTargetOrRefusal is replayTarget with the fan-out guard's refusal
// apart (refused, a usage error; to, allow and guard are then still set):
// dlq triage opens a destination the guard refuses, to look, and refuses
// only its replays.
func (o *dlqReplayOptions) replayTargetOrRefusal(ctx context.Context, t *dlqTarget, dt dlqTransport, logger *slog.Logger) (to string, allow func(string) bool, guard *fanOutGuard, refused, err error) {
	if to, err = o.replayTo(ctx, t, dt, logger); err != nil || to != "" {
		return to, nil, nil, nil, err
	}
	names, fn, failed, err := o.replayAllowList(t, dt)
	if err != nil {
		return "", nil, nil, nil, err
	}
	if !o.allowAny {
		allow = fn
		logger.Debug("replay allow-list", "source", t.URL, "destinations", names)
	}
	guard = newFanOutGuard(ctx, t, dt, failed, o.fanOut, logger)
	refused = guard.check("replay")
	return "", guard.allow(allow), guard, refused, nil
}

// naming adds "what URL: " to err unless err already names the destination
// (a receive error of inspect does), so the URL is said once.
func naming(t *dlqTarget, what string, err error) error {
	if strings.Contains(err.Error(), t.URL) {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, t.URL, err)
}

// replaySelf is the name a replay must not publish back into: the
// destination being read.
func replaySelf(t *dlqTarget) string { return t.Dest }
