package shared

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// A replay: its flags, its run and its confirmation (--to is resolved in
// to.go, the summary and confirmation in replay_summary.go, the journal in
// journal.go).

// ReplayOptions are the flags of a replay (dlq replay, and dlq edit's
// and the triage console's replays) and its run, Run.
type ReplayOptions struct {
	*Options
	// To and ToSet are --to and whether it was given; NewID, KeepCount,
	// DryRun, Rate, ConfirmOver and Yes are --new-id, --keep-count,
	// --dry-run, --rate, --confirm-over and --yes. Rate is in messages per
	// second (0 = unlimited).
	To          string
	ToSet       bool
	NewID       bool
	KeepCount   bool
	DryRun      bool
	Rate        float64
	ConfirmOver int
	Yes         bool
	// Format is --output: text (a line per message) or json (a JSON
	// record per message, then the summary).
	Format string
	// json is the JSON-lines progress when format is json.
	json *inspect.ReplayJSON
	// AllowAny is --allow-any-destination: without --to, replay to any
	// originalTopic, not only those the subscriptions file knows.
	AllowAny bool
	// Copy is --copy: keep the dead-letter copy.
	Copy bool
	// Prepare, when set (dlq edit), runs once the destination is open and
	// before the replay scan, and returns the transform each replay copy
	// goes through (inspect.ReplayOptions.Transform).
	Prepare func(ctx context.Context, t *transport.Target, src *inspect.Source) (func(m, c *message.Message) error, error)
	// EditID, set by dlq edit, is the one message the run is about: its
	// summary speaks of it, not of the scan.
	EditID string
	// EditFound, set by dlq edit, is how many stored copies of EditID the
	// edit read (and edited) before the replay: a replay that handles fewer
	// of them fails, naming how many it did not reach.
	EditFound int
	// Journal is --journal: the replay journal's file ("" with JournalSet:
	// none; unset: under $XDG_STATE_HOME).
	Journal    string
	JournalSet bool
	// FanOut is --fan-out: without --to, publish to a topic even when other
	// subscriptions of it receive the copy too.
	FanOut bool
	// noFile is set when the allow-list was built without a subscriptions
	// file (a destination named by URL, no file at -c): every message is
	// refused, and the refusals say why (refusal).
	noFile bool
}

// AddDestinationFlags declares the flags replay and edit share: where the
// copy goes and what it keeps (--to, --new-id, --keep-count, --dry-run,
// --output, --sns, --allow-any-destination).
func (o *ReplayOptions) AddDestinationFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&o.To, "to", "", "publish every message to this topic or queue, or a URL of the source's transport (default: its originalTopic)")
	fl.BoolVar(&o.NewID, "new-id", false, "give each replayed message a new id")
	fl.BoolVar(&o.KeepCount, "keep-count", false, "keep the handled count instead of starting from 0")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print what would be replayed; change nothing")
	cmdutil.AddOutputFlag(cmd, &o.Format, cmdutil.RunFormats, "")
	fl.BoolVar(&o.SNS, "sns", false, "for an sqs:// URL only: publish replays to SNS topics instead of SQS queues")
	fl.StringVar(&o.Journal, "journal", "", "the replay journal that makes an interrupted replay resumable (default: $XDG_STATE_HOME/brighter/replay/SOURCE.journal; '' for none)")
	fl.BoolVar(&o.FanOut, "fan-out", false, "without --to, publish to a topic that other subscriptions or consumer groups also receive (SNS, Pub/Sub, RocketMQ); by default such a replay is refused, or on SNS sent to the failed subscription's queue only")
	fl.BoolVar(&o.AllowAny, "allow-any-destination", false, "without --to, replay to any originalTopic a message names, not only the routingKey or channelName of a subscription the file says dead-letters here")
}

// Run replays what the flags select from arg (a subscription or a URL):
// where each copy may go is resolved and the journal locked before
// anything is read, more than --confirm-over messages are confirmed, and
// each message is removed only after its copy was accepted. Its errors
// carry the exit code (cmdutil.UsageErr, cmdutil.FailureErr, 130 when
// interrupted).
func (o *ReplayOptions) Run(ctx context.Context, arg string) error {
	su, err := o.Setup(arg, func() error {
		if err := cmdutil.ParseOutput(cmdutil.RunFormats, &o.Format); err != nil {
			return err
		}
		if err := cmdutil.FiniteFloat("rate", o.Rate); err != nil {
			return err
		}
		if o.Rate < 0 {
			return cmdutil.UsageErr(fmt.Errorf("--rate %g: must be 0 or more", o.Rate))
		}
		if o.ConfirmOver < 0 {
			return cmdutil.UsageErr(fmt.Errorf("--confirm-over %d: must be 0 or more", o.ConfirmOver))
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger, f, t, dt := su.Logger, su.F, su.T, su.DT
	// Resolving where the copies go may ask the broker (--to's queue, the
	// fan-out guard's subscriptions): a signal meanwhile ends the run
	// (ConnectInterrupted).
	to, allow, guard, err := o.replayTarget(ctx, t, dt, logger)
	if err != nil {
		return err
	}
	if o.DryRun && to != "" {
		if err := o.checkDryRunTo(ctx, t, dt, to, logger); err != nil {
			return err
		}
	}
	// The journal is opened (and locked) before anything is read, so a
	// second replay on the same journal is refused at once, without
	// holding a message invisible for its count.
	var journal *inspect.FileJournal
	if !o.DryRun && !o.Copy {
		if journal, err = o.openJournal(t); err != nil {
			return err
		}
		if journal != nil && journal.Cut() != "" {
			logger.WarnContext(ctx, inspect.LogJournalCut, "journal", journal.Path(), "line", redact.Quote(journal.Cut()))
		}
		if journal != nil && journal.NoID() > 0 {
			logger.WarnContext(ctx, inspect.LogJournalNoID, "journal", journal.Path(), "lines", journal.NoID())
		}
		defer func() {
			if journal != nil { // a return before the replay ran: nothing new to keep
				_, _ = journal.Close(false, false)
			}
		}()
	}
	ch, err := o.OpenReader(ctx, t, dt, !o.DryRun, logger)
	if err != nil {
		return err
	}
	closeReader := func() error { return ch.Close(context.WithoutCancel(ctx)) }
	src := o.Source(t, ch, logger)
	var transform func(m, c *message.Message) error
	if o.Prepare != nil {
		if transform, err = o.Prepare(ctx, t, src); err != nil {
			_ = closeReader()
			return err
		}
	}
	ctx, stop := o.Interruptible(ctx, logger)
	defer stop()

	limit := f.Limit
	if f.Limit > 0 && o.EditID == "" {
		// --limit picks the messages rejected first, whatever order the
		// broker hands them out in, so a dry run and the run after it
		// pick the same ones; every copy of a picked id goes with it.
		ids, err := inspect.Pick(ctx, src, f, f.Limit)
		if ctx.Err() != nil {
			_ = closeReader()
			fmt.Fprintf(o.IO.ErrOut, "%s: interrupted while choosing the --limit messages; nothing was replayed\n", t.URL)
			return Interrupted("replay " + t.URL)
		}
		if err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(Naming(t, "replay", err))
		}
		if len(ids) == 0 {
			ids = []string{""} // nothing matched: select nothing
		}
		f.IDs, f.Limit = ids, 0
	}
	// Where a message without rejection metadata naming only the
	// destination being read goes without --to (a broker call on SQS when
	// the subscriptions file does not say), asked once, when such a
	// message is read.
	var redrive func() string
	if to == "" {
		redrive = sync.OnceValue(func() string { return o.RedriveSource(ctx, t, dt, logger) })
	}
	total := -1
	if !o.DryRun && !o.Yes && (limit == 0 || limit > o.ConfirmOver) {
		// The count also gathers where the copies would go, for the
		// confirmation to name.
		var dests []string
		counts, err := inspect.Scan(ctx, src, f, func(_ context.Context, m *message.Message) (bool, error) {
			d := to
			if d == "" {
				desc := inspect.Describe(m)
				if d = desc.OriginalTopic; desc.NativeRedrive && (d == "" || d == ReplaySelf(t)) {
					d = redrive()
				}
				if route := guard.RouteFunc(); route != nil {
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
			fmt.Fprintf(o.IO.ErrOut, "%s: interrupted while counting; nothing was replayed\n", t.URL)
			return Interrupted("replay " + t.URL)
		}
		if err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(Naming(t, "replay", err))
		}
		total = n
		if n > o.ConfirmOver {
			if ok, err := o.confirm(ctx, n, t.URL, dests); !ok {
				_ = closeReader()
				if ctx.Err() != nil {
					fmt.Fprintf(o.IO.ErrOut, "%s: interrupted at the confirmation; nothing was replayed\n", t.URL)
					return Interrupted("replay " + t.URL)
				}
				return err
			}
		}
		// The replay never goes beyond what was confirmed (n) or, without a
		// confirmation, beyond --confirm-over, even when more messages arrive
		// (or come back) while it runs.
		capped := max(n, o.ConfirmOver)
		if capped == 0 {
			_ = closeReader()
			NoteHeld(o.IO.ErrOut, t, ch)
			return o.finish(nil, inspect.Summary{}, nil, nil, t)
		}
		if f.Limit == 0 || f.Limit > capped {
			f.Limit = capped
		}
	}
	opts := inspect.ReplayOptions{To: to, Allow: allow, Route: guard.RouteFunc(), NewID: o.NewID, KeepCount: o.KeepCount, DryRun: o.DryRun, Rate: o.Rate, Now: o.Now, Copy: o.Copy, Transform: transform, RedriveSource: redrive}
	if c, ok := dt.(transport.DryRunChecker); ok && o.DryRun {
		opts.Check = c.DryRunCheck(t)
	}
	var bar *inspect.Bar
	if o.Format == export.JSON {
		o.json = inspect.NewReplayJSON(o.Out())
		o.json.Refusal = o.refusal()
		opts.Progress = o.json
	} else if o.IO.OutTTY {
		bar = inspect.NewBar(o.IO.ErrOut, total, "replaying "+t.URL)
		bar.Refusal = o.refusal()
		opts.Progress = bar
	} else {
		lines := inspect.NewLines(o.Out())
		lines.Refusal = o.refusal()
		opts.Progress = lines
	}
	opts.History = o.RetryHistory(t)
	if journal != nil {
		opts.Journal = journal
		logger.Debug("replay journal", "source", t.URL, "path", journal.Path())
		if n := journal.Pending(); n > 0 {
			fmt.Fprintf(o.IO.ErrOut, "%s: resuming: the journal %s records %s sent by an earlier run and not yet removed; those are removed, not sent again\n", t.URL, journal.Path(), Plural(n, "copy"))
		}
	}
	var prod broker.Producer
	if !o.DryRun {
		if prod, err = dt.DLQProducer(ctx, t, logger); err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(fmt.Errorf("replay %s: producer: %w", t.URL, err))
		}
		if prod, err = guard.Routed(ctx, prod); err != nil {
			_ = closeReader()
			return cmdutil.FailureErr(fmt.Errorf("replay %s: producer: %w", t.URL, err))
		}
	}
	sum, rerr := inspect.Replay(ctx, src, ReplaySelf(t), prod, f, opts)
	cerr := closeReader()
	if journal != nil {
		cerr = errors.Join(cerr, o.closeJournal(journal, t, ctx.Err() != nil, rerr != nil, sum.Failed, sum.FailedUnpublished, !o.Selects() && f.Limit == 0 && sum.Refused == 0))
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
		fmt.Fprintf(o.IO.ErrOut, "%s: interrupted; messages not replayed are still in the dead-letter destination, visible\n", t.URL)
		return Interrupted("replay " + t.URL)
	}
	if o.Copy && !o.DryRun && sum.Replayed > 0 {
		fmt.Fprintf(o.IO.ErrOut, "%s: --copy: the dead-letter copies were kept\n", t.URL)
	}
	NoteHeld(o.IO.ErrOut, t, ch)
	return o.finish(bar, sum, rerr, cerr, t)
}

// destinationChecker is a producer that can look up, without sending,
// the destination it would publish a topic to (the SQS producer:
// GetQueueUrl, or the SNS topic lookup; the Pub/Sub producer: GetTopic).
type destinationChecker interface {
	CheckDestination(ctx context.Context, topic string) error
}

// checkDryRunTo makes a dry run refuse a --to that the real run's producer
// would fail every message on (a queue or topic that does not exist), before
// anything is read, with the real run's exit code (1): it asks the
// producer's read-only lookup where the transport's producer has one.
func (o *ReplayOptions) checkDryRunTo(ctx context.Context, t *transport.Target, dt transport.Transport, to string, logger *slog.Logger) error {
	prod, err := dt.DLQProducer(ctx, t, logger)
	if err != nil {
		return cmdutil.FailureErr(fmt.Errorf("replay %s: producer: %w", t.URL, err))
	}
	defer func() { _ = prod.Close(context.WithoutCancel(ctx)) }()
	c, ok := prod.(destinationChecker)
	if !ok {
		return nil
	}
	if err := c.CheckDestination(ctx, to); err != nil {
		return cmdutil.FailureErr(fmt.Errorf("replay %s --dry-run: --to %q: the real run could publish nothing there, every message would fail: %w", t.URL, redact.Quoted(o.To), err))
	}
	return nil
}

// replayTarget resolves where a replay from t may publish, before
// anything is read: to is --to resolved ("" for each message's
// originalTopic), allow the allow-list's decision (nil with --to or
// --allow-any-destination) narrowed by the fan-out guard, guard the
// fan-out guard (nil with --to; its methods accept nil). Its errors are
// replay's refusals (exit 2). dlq replay, edit and triage share it.
func (o *ReplayOptions) replayTarget(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) (to string, allow func(string) bool, guard *FanOutGuard, err error) {
	to, allow, guard, refused, err := o.ReplayTargetOrRefusal(ctx, t, dt, logger)
	if err == nil {
		err = refused
	}
	if err != nil {
		return "", nil, nil, err
	}
	return to, allow, guard, nil
}

// ReplayTargetOrRefusal is replayTarget with the fan-out guard's refusal
// apart (refused, a usage error; to, allow and guard are then still set):
// dlq triage opens a destination the guard refuses, to look, and refuses
// only its replays.
//
// Resolving may ask the broker (--to's queue, the subscription's topic,
// the fan-out guard's subscriptions): a SIGINT or SIGTERM meanwhile
// abandons the look-up and err is ConnectInterrupted (exit 130); a second
// signal exits 130 at once.
func (o *ReplayOptions) ReplayTargetOrRefusal(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) (to string, allow func(string) bool, guard *FanOutGuard, refused, err error) {
	cctx, connected := o.connecting(ctx, logger)
	to, allow, guard, refused, err = o.replayTargetOrRefusal(cctx, t, dt, logger)
	if connected() {
		return "", nil, nil, nil, ConnectInterrupted(t.URL)
	}
	return to, allow, guard, refused, err
}

// replayTargetOrRefusal is ReplayTargetOrRefusal without the signal watch.
func (o *ReplayOptions) replayTargetOrRefusal(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) (to string, allow func(string) bool, guard *FanOutGuard, refused, err error) {
	if to, err = o.replayTo(ctx, t, dt, logger); err != nil || to != "" {
		return to, nil, nil, nil, err
	}
	names, fn, failed, err := o.replayAllowList(t, dt)
	if err != nil {
		return "", nil, nil, nil, err
	}
	if !o.AllowAny {
		allow = fn
		logger.Debug("replay allow-list", "source", t.URL, "destinations", names)
	}
	guard = newFanOutGuard(ctx, t, dt, failed, o.FanOut, logger)
	refused = guard.check("replay")
	return "", guard.allow(allow), guard, refused, nil
}

// Naming adds "what URL: " to err unless err already names the destination
// (a receive error of inspect does), so the URL is said once.
func Naming(t *transport.Target, what string, err error) error {
	if strings.Contains(err.Error(), t.URL) {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, t.URL, err)
}

// ReplaySelf is the name a replay must not publish back into: the
// destination being read.
func ReplaySelf(t *transport.Target) string { return t.Dest }
