package dlq

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

func newDLQReplayCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqReplayOptions{dlqOptions: parent}
	cmd := &cobra.Command{
		Use:   "replay [SUBSCRIPTION|URL]",
		Short: "Send dead-lettered messages back where they came from, safely",
		Long: `For each selected message, publish it to --to (default: its originalTopic)
and only then remove it from the dead-letter destination.

Without --to a message goes only to a destination the subscriptions file
knows for the destination being read: the routingKey or channelName of a
subscription whose deadLetterRoutingKey, invalidMessageRoutingKey or
native redrive target it is, as the transport resolves names. The
originalTopic is written by whoever wrote the message, so any other is
refused per message: listed ("refused ID -> DEST"), counted ("refused N")
and left in place; the run exits 1. --allow-any-destination lifts the
allow-list; --dry-run shows each decision ("would refuse ..."). A failed publish
leaves the message where it is and the replay goes on; a crash at any
instant leaves every message in the dead-letter destination, at its
destination, or both, never neither. The summary says how many were
replayed, skipped (not selected) and failed; any failure exits 1.

The replayed message keeps its id (or gets a new one with --new-id), body,
attributes and correlation id, loses the five rejection keys and the
receipt, records replayedFrom and replayedAt, and starts with handled count
0 (unless --keep-count) so its redelivery budget starts afresh. On a FIFO
queue it keeps its message group and gets a fresh deduplication id.

--to takes a topic or queue name, or a URL of the source's transport
(sqs://QUEUE, pubsub://projects/P/topics/T, rocketmq://TOPIC, memory://QUEUE);
it may not be the destination being read (that would only strip the
messages' rejection metadata): that, an empty --to and another transport's
URL are refused before anything is read (exit 2).

A destination that does not exist is never created: those messages fail
and stay. More than --confirm-over messages ask for confirmation on a
terminal and need --yes otherwise (a declined confirmation exits 2, with
nothing replayed); without --yes the replay then handles at most the
number confirmed (or --confirm-over when none was asked).

Each message is handled at most once a run: a replayed message that a
consumer dead-letters again while the replay runs (same id, new rejection
time) is left in the dead-letter destination, counted neither replayed nor
failed.

--copy publishes each selected message and keeps it in the dead-letter
destination (copy, not move): every message read is held until the scan
ends, as peek holds it, so each is copied once a run. On an SQS FIFO queue
or a RocketMQ message group that reaches only the first batch of each
group, as peek does.

Fan-out (SNS, Pub/Sub, RocketMQ): without --to, a copy for an SNS-fed
subscription goes straight to the failed subscription's queue, not through
its topic to every subscriber; a replay into a Pub/Sub topic (or an SNS
topic whose failed subscription the file does not name) that other
subscriptions also read lists them and is refused (exit 2) unless
--fan-out; a replay into a RocketMQ topic, whose consumer groups cannot be
listed and all receive it, is refused (exit 2) unless --fan-out. A
dead-letter destination shared by several subscriptions of one topic is
refused (exit 2) unless --fan-out or --to: a dead letter does not say
which of them failed it.

Every stored copy counts: two copies of one failure (same id and rejection
time) are both selected; one is published and both are removed.
--limit N takes the N failures rejected first, so --dry-run picks the same.

Resumable: a replay (move) keeps a journal (--journal, default under
$XDG_STATE_HOME/brighter/replay/) of the copies the broker accepted; each
copy carries a replayId. Run again after a crash, a replay only removes a
message whose copy the journal records as sent, without sending it again.
The journal is deleted when a run ends cleanly (not interrupted, nothing
failed) with no copy recorded sent whose message was not removed; a
journal kept is named on stderr with why. A replay locks its journal
before it reads anything: a second replay on the same journal is refused
at once (exit 2) naming the journal and the holder's pid; a dead
holder's lock is free.

--output json prints one JSON object per selected message as it is
handled ({"type":"message","id":...,"destination":...,"outcome":"replayed",
"would-replay", "refused", "would-refuse" or "failed","error":...; "newId"
with --new-id}) and a last
{"type":"summary","replayed":N,"skipped":N,"failed":N,"refused":N,"dryRun":...,
"interrupted":...}; prompts and errors stay on stderr.`,
		Example: `  # See what would happen, then do it
  brighter dlq replay orders --reason DeliveryError --dry-run
  brighter dlq replay orders --reason DeliveryError --yes

  # Try one failure group on a staging queue, keeping the dead letters
  brighter dlq replay orders --group-id 921f815d2f4c --to orders-staging --copy --yes

  # Ten a second, to a staging queue, with new ids
  brighter dlq replay sqs://orders-dlq --to orders-staging --new-id --rate 10 --yes

  # For a script: the ids that failed
  brighter dlq replay orders --yes -o json | jq -r 'select(.outcome == "failed") | .id'`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error {
			o.toSet = cmd.Flags().Changed("to")
			o.journalSet = cmd.Flags().Changed("journal")
			return o.run(cmd.Context(), dest)
		}),
	}
	o.addCommon(cmd)
	o.addDestinationFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&o.copy, "copy", false, "keep each message in the dead-letter destination: publish a copy, remove nothing (default: move)")
	fl.Float64Var(&o.rate, "rate", 0, "publish at most this many messages per second (0: no limit)")
	fl.IntVar(&o.confirmOver, "confirm-over", 100, "ask before replaying more than this many messages")
	fl.BoolVarP(&o.yes, "yes", "y", false, "replay without asking, however many messages")
	return cmd
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
	opts.History = o.retryHistory()
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

func (o *dlqReplayOptions) finish(bar *inspect.Bar, sum inspect.Summary, rerr, cerr error, t *dlqTarget) error {
	if bar != nil {
		bar.Finish()
	}
	if err := o.writeSummary(sum, false); err != nil {
		return cmdutil.FailureErr(err)
	}
	switch {
	case rerr != nil:
		return cmdutil.FailureErr(naming(t, "replay", rerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %w", t.URL, cerr))
	case sum.Refused > 0 && sum.Failed == 0:
		where := "they are"
		if sum.Refused == 1 {
			where = "it is"
		}
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %s refused: the originalTopic is not a destination the subscriptions file knows for it; %s still in the dead-letter destination (give --to, or --allow-any-destination)",
			t.URL, plural(sum.Refused, "message"), where))
	case sum.Failed > 0:
		where := "they are"
		if sum.Failed == 1 {
			where = "it is"
		}
		return cmdutil.FailureErr(fmt.Errorf("replay %s: %s failed; %s still in the dead-letter destination (or in both places, as logged)", t.URL, plural(sum.Failed, "message"), where))
	}
	return nil
}

// writeSummary writes the replay's last line: a summary record with
// --output json (interrupted: stopped by a signal), else "replayed N,
// skipped N, failed N".
func (o *dlqReplayOptions) writeSummary(sum inspect.Summary, interrupted bool) error {
	if o.editID != "" {
		// dlq edit: the messages the scan read before it found the one it
		// edits are not the user's business.
		sum.Skipped = 0
	}
	if o.editID != "" && o.format != export.JSON {
		if _, err := fmt.Fprintf(o.io.Out, "edit %s: %s\n", redact.Quoted(o.editID), editOutcome(sum, interrupted)); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
		return nil
	}
	if o.format == export.JSON {
		if o.json == nil { // nothing was selected: no message records
			o.json = inspect.NewReplayJSON(o.io.Out)
		}
		return o.json.WriteSummary(sum, interrupted)
	}
	return inspect.WriteSummary(o.io.Out, sum)
}

// editOutcome is what became of dlq edit's one message: the words of its
// summary line.
func editOutcome(sum inspect.Summary, interrupted bool) string {
	switch {
	case sum.Replayed > 0 && sum.DryRun:
		return "found; would be replayed (dry run, nothing changed)"
	case sum.Failed > 0 && sum.DryRun:
		return "found; the replay would fail (see the log; dry run, nothing changed)"
	case sum.Replayed > 0:
		return "found and replayed"
	case sum.Refused > 0:
		return "found; refused, still in the dead-letter destination"
	case sum.Failed > 0:
		return "found; failed, still in the dead-letter destination (see the log)"
	case interrupted:
		return "interrupted before it was replayed; still in the dead-letter destination"
	}
	return "not found (not replayed)"
}

// confirm asks on a terminal; off one it refuses without --yes. An
// interrupt (ctx done: SIGINT or SIGTERM) while it waits for the answer
// ends the wait at once: (false, nil), and the caller exits 130.
func (o *dlqReplayOptions) confirm(ctx context.Context, n int, name string, dests []string) (bool, error) {
	to := destinationsText(dests)
	if !o.io.InTTY {
		return false, cmdutil.UsageErr(fmt.Errorf("%s selected in %s, more than --confirm-over %d, to be replayed %s: pass --yes to replay them, or narrow the selection", plural(n, "message"), name, o.confirmOver, to))
	}
	fmt.Fprintf(o.io.ErrOut, "Replay %s from %s %s? [y/N] ", plural(n, "message"), name, to)
	type answer struct {
		line string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(o.io.In).ReadString('\n')
		answered <- answer{line, err}
	}()
	var line string
	select {
	case <-ctx.Done():
		fmt.Fprintln(o.io.ErrOut)
		return false, nil
	case a := <-answered:
		if a.err != nil && !errors.Is(a.err, io.EOF) {
			return false, cmdutil.FailureErr(fmt.Errorf("read confirmation: %w", a.err))
		}
		line = a.line
	}
	if ctx.Err() != nil {
		fmt.Fprintln(o.io.ErrOut)
		return false, nil
	}
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(o.io.ErrOut)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	// Declined (or no answer: end of input): a refused replay, exit 2 as
	// without --yes off a terminal; nothing was replayed.
	return false, cmdutil.UsageErr(errors.New("replay cancelled; nothing was replayed"))
}

// closeJournal closes the replay journal of a run from t, deleting it when
// the run was clean (not interrupted, the scan did not fail, no message
// failed) and nothing is left to resume (drained: the run read every
// message, inspect.FileJournal.Close); a journal kept is named on stderr
// with why.
func (o *dlqReplayOptions) closeJournal(j *inspect.FileJournal, t *dlqTarget, interrupted, scanFailed bool, failed int, drained bool) error {
	pending, held := j.Pending(), j.Held()
	removed, err := j.Close(interrupted || scanFailed || failed > 0, drained)
	if err != nil || removed {
		return err
	}
	var why []string
	switch {
	case interrupted:
		why = append(why, "the run was interrupted")
	case scanFailed:
		why = append(why, "the read of the dead-letter destination failed")
	}
	if failed > 0 {
		why = append(why, plural(failed, "message")+" failed (a failed publish may still have reached its destination)")
	}
	switch {
	case drained && held > 0:
		why = append(why, plural(held, "copy")+" recorded sent less than --visibility ago whose message was not removed (a run killed after sending may still hold it invisible; a rerun after that only removes it)")
	case pending > 0:
		why = append(why, plural(pending, "copy")+" recorded sent whose message was not removed (a filtered run does not know whether they are still there)")
	}
	fmt.Fprintf(o.io.ErrOut, "%s: replay journal %s kept: %s; it is deleted by a later run that ends cleanly with nothing left to resume\n", t.URL, j.Path(), strings.Join(why, "; "))
	return nil
}

// openJournal opens the replay journal of a replay from t (nil with
// --journal ”): --journal, else $XDG_STATE_HOME/brighter/replay/ (default
// ~/.local/state) and a file named after the source URL and its hash.
func (o *dlqReplayOptions) openJournal(t *dlqTarget) (*inspect.FileJournal, error) {
	path := o.journal
	if o.journalSet && path == "" {
		return nil, nil
	}
	if path == "" {
		dir := o.env("XDG_STATE_HOME")
		if dir == "" {
			home := o.env("HOME")
			if home == "" {
				var err error
				if home, err = os.UserHomeDir(); err != nil {
					return nil, cmdutil.UsageErr(errors.New("the replay journal needs $XDG_STATE_HOME or $HOME: give --journal FILE (or --journal '' for none)"))
				}
			}
			dir = filepath.Join(home, ".local", "state")
		}
		key := t.URL
		if t.S != nil && t.S.Transport == config.TransportMemory && t.S.Memory != nil {
			// memory://QUEUE names a queue inside a file: two files are
			// two dead-letter destinations, with a journal (and lock) each.
			if abs, err := filepath.Abs(t.S.Memory.Output); err == nil {
				key += "?file=" + abs
			}
		}
		path = filepath.Join(dir, "brighter", "replay", journalName(key))
	}
	j, err := inspect.OpenJournal(path, o.visibility)
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

// destinationsText names where a replay's copies go, for its
// confirmation: "to D", "to D1, D2 and D3", at most five named ("and N
// more" after them).
func destinationsText(dests []string) string {
	const shown = 5
	switch {
	case len(dests) == 0:
		return "to their originalTopic"
	case len(dests) == 1:
		return "to " + dests[0]
	case len(dests) <= shown:
		return "to " + strings.Join(dests[:len(dests)-1], ", ") + " and " + dests[len(dests)-1]
	}
	return fmt.Sprintf("to %s and %d more", strings.Join(dests[:shown], ", "), len(dests)-shown)
}
