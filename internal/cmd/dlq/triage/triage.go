package triage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	osuser "os/user"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// dlq triage: the console (internal/tui/triage) over one
// dead-letter destination, its actions wired to inspect's scan, replay and
// archive and to dlq edit's edit session.

// Options are dlq triage's flags: replay's and its own.
type Options struct {
	*shared.ReplayOptions
	// archiveFile is --archive-file: where a (archive) appends.
	archiveFile string
	// logFile is --log-file: where the log goes while the console owns
	// the terminal ("" discards it).
	logFile string
	// refresh is --refresh: how often the console reads the destination
	// again by itself (0: only on ctrl+r and after an action).
	refresh time.Duration
	// refreshSet is whether --refresh was given (refreshPeriod).
	refreshSet bool
	// settle is --settle: how long after its last retry a message not back
	// in the destination counts as a pending retry.
	settle time.Duration
}

// NewCmdTriage returns dlq triage. runF, when not nil, is called with the
// parsed options instead of runTriage (a test checks the flags' parsing
// without opening anything).
func NewCmdTriage(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{ReplayOptions: &shared.ReplayOptions{Options: shared.NewOptions(f)}}
	cmd := &cobra.Command{
		Use:   "triage [SUBSCRIPTION|URL]",
		Short: "An interactive console: failure groups, messages, replay, edit, archive, purge",
		Long: `Open a console over a dead-letter destination: its failure groups (count,
oldest, newest, reason, a sample message), the messages of a group, and
one message (headers, bag, rejection metadata, body pretty-printed by
content type).

Keys: enter opens, esc goes back, space selects (in the group open), r
replays the selection (or what is under the cursor), R replays the whole
group, e edits the message in $EDITOR and replays the edited copy (as dlq
edit), a archives to --archive-file (as dlq archive), x purges (deletes
for good, no copy kept, as dlq purge), d toggles a dry run, / searches
every message (ids, bodies, headers, causes), s sorts, g changes the
grouping (cause, reason, topic, handler), E edits the headers and bag (as
dlq edit --headers), n writes a note on the group, A shows the archive
file, ctrl+r reads again, ? helps, q quits (exit 0); ctrl+c or SIGTERM
interrupts (what an action holds is released, exit 130).

In the archived view (A) r restores the selection (or what is under the
cursor) and R the group into the dead-letter destination, as dlq restore
does: the destination is checked first and the confirmation names the
ids it already holds (y restores those too, another copy each). The
archive file is never changed; a record whose id the dead-letter
destination holds again is marked ↺ (restored).

The console reads the destination again every --refresh (and after every
action; on RocketMQ only on ctrl+r and after an action unless --refresh is
given: every read there is a delivery attempt of the reader group, and after
the group's maximum the broker moves the message to %DLQ%<reader group>), showing "reading…" while it reads and when it last read; the
cursor stays on its group and message. An id stored more than once is
marked ×N. Every copy a replay publishes is recorded in the retry history
beside the replay journals; a message's view lists its retries, and a
retried message not back within --settle of its last retry is settled,
before that pending, and failed again when it comes back.

Replays go where dlq replay sends them (--to, else the originalTopic on
the allow-list; --allow-any-destination lifts it) and keep dlq replay's
journal, the same file: a console killed mid-replay is resumed by the next
replay, here or dlq replay, and no copy is sent twice. Every replay, archive,
purge, restore and edit names its destinations and count and asks once (y/n),
and shows its progress while it runs.

Reads are peek's: the first read holds each message it reads invisible
for --visibility while it runs and makes it visible again as soon as it
ends; every later read releases what each receive brought at once, so a
refreshing console never keeps the dead letters from another consumer.
Every action reads afresh, so nothing is held between keys or after q.`,
		Example: `  brighter dlq triage orders
  brighter dlq triage sqs://orders-dlq --to orders --archive-file orders-dlq.jsonl
  brighter dlq triage orders --dry-run        # start with the dry run on`,
		Args: shared.DestinationArgs,
		RunE: o.RunWith(func(cmd *cobra.Command) error {
			o.ToSet = cmd.Flags().Changed("to")
			o.refreshSet = cmd.Flags().Changed("refresh")
			if runF != nil {
				return runF(o)
			}
			return runTriage(cmd.Context(), o)
		}),
	}
	o.AddCommon(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.To, "to", "", "replay every message to this topic or queue, or a URL of the source's transport (default: its originalTopic)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "start with the dry run on (d toggles it)")
	fl.BoolVar(&o.AllowAny, "allow-any-destination", false, "without --to, replay to any originalTopic a message names, not only the routingKey or channelName of a subscription the file says dead-letters here")
	fl.BoolVar(&o.SNS, "sns", false, "for an sqs:// URL only: publish replays to SNS topics instead of SQS queues")
	fl.BoolVar(&o.FanOut, "fan-out", false, "without --to, replay to a topic that other subscriptions or consumer groups also receive (SNS, Pub/Sub, RocketMQ); by default the console refuses to open on such a destination, or on SNS replays to the failed subscription's queue only")
	fl.StringVar(&o.archiveFile, "archive-file", "dlq-archive.jsonl", "the file the console's a key archives to (JSON lines, appended, as dlq archive writes)")
	fl.StringVar(&o.logFile, "log-file", "", "write the log to this file while the console runs (default: none)")
	fl.DurationVar(&o.settle, "settle", triage.DefaultSettle, "a retried message not back in the destination is a pending retry for this long after its last retry, then settled")
	fl.DurationVar(&o.refresh, "refresh", defaultRefresh, "read the destination again this often while the console is open (0: only on ctrl+r and after an action; on RocketMQ 0 unless given, since every read spends a delivery attempt of the reader group)")
	return cmd
}

// defaultRefresh is --refresh's default: how often the console reads the
// destination again by itself.
const defaultRefresh = 5 * time.Second

// refreshPeriod is how often the console reads t again by itself: --refresh
// (refresh) as given, or by default defaultRefresh, except on RocketMQ (a
// reader group, t.Group), where every read is a delivery attempt of the
// reader group: refreshing every few seconds would spend a message's
// attempts (16 by default) in about a minute and a half, and the broker
// would then move it on to %DLQ%<reader group>, out of the console's
// sight. There the console reads again only on ctrl+r and after an action
// unless --refresh is given (set).
func refreshPeriod(t *transport.Target, refresh time.Duration, set bool) time.Duration {
	if t != nil && t.Group != "" && !set {
		return 0
	}
	return refresh
}

// runTriage opens the console on o.Dest and runs it until it quits.
func runTriage(ctx context.Context, o *Options) error {
	arg := o.Dest
	logIO := *o.IO
	logIO.ErrOut = io.Discard
	if o.logFile != "" {
		lf, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return cmdutil.UsageErr(fmt.Errorf("--log-file: %w", err))
		}
		defer lf.Close()
		logIO.ErrOut = lf
	}
	logger, err := o.Factory.LoggerTo(logIO.ErrOut)
	if err != nil {
		return err
	}
	if _, err := o.Filter(); err != nil {
		return err
	}
	if !o.IO.OutTTY || !o.IO.InTTY {
		// Without a terminal the destination is still resolved first:
		// its refusals (and a signal while that connects) are said as
		// before the terminal's.
		if _, err := o.actions(ctx, arg, logger); err != nil {
			return err
		}
		return cmdutil.UsageErr(errors.New("triage is interactive and needs a terminal; use dlq stats, peek, replay, edit and archive in scripts"))
	}
	t, _, err := o.Target(arg)
	if err != nil {
		return err
	}
	getenv := func(k string) string {
		v, _ := o.IO.Getenv(k)
		return v
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The console draws from its first frame (triage.Starting): while the
	// destination is resolved and read for the first time it says which,
	// on which transport and endpoint, and for how long; q quits (exit 0)
	// and ctrl+c interrupts (exit 130) meanwhile too. A destination that
	// cannot be opened (a queue that does not exist) ends the console and
	// is reported as peek reports it, exit 1.
	model := triage.NewStarting(t.URL, string(t.S.Transport), t.Endpoint(getenv), time.Now(), o.Now)
	// Signals are the command's, as in every dlq command, not the
	// console's (which would take SIGTERM for q): the first ends the
	// console as ctrl+c does, a second exits at once.
	p := tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(o.IO.In), tea.WithOutput(o.IO.Out), tea.WithFPS(10), tea.WithoutSignalHandler())
	// actCtx bounds the console's reads and actions: the first signal
	// ends it at once (an action under way stops while the console
	// quits), and so does the console's end.
	actCtx, stopActs := context.WithCancel(ctx)
	defer stopActs()
	var signalled, forced, ended atomic.Bool
	forcedCh := make(chan struct{})
	var forceOnce sync.Once
	force := func() {
		forced.Store(true)
		logger.Warn(shared.LogDLQForced)
		p.Kill()
		forceOnce.Do(func() { close(forcedCh) })
	}
	stopSignals := sync.OnceFunc(o.OnSignals(logger, func() {
		if ended.Load() {
			// The console has already ended (q, ctrl+c) and waits for
			// an action it stopped: a signal now is the second stop.
			force()
			return
		}
		signalled.Store(true)
		logger.Warn(shared.LogDLQStopping)
		stopActs()
		p.Quit()
	}, force))
	defer stopSignals()
	// The start-up: the destination resolved and read once, then the
	// console shown with that read.
	var (
		a        *triageActions
		startErr error
	)
	started := make(chan struct{})
	go func() {
		defer close(started)
		if a, startErr = o.actions(ctx, arg, logger); startErr != nil {
			p.Send(triage.StartFailedMsg{})
			return
		}
		if o.logFile != "" {
			a.audit = o.auditLogger(logIO.ErrOut)
		}
		first, err := a.Load(actCtx)
		if err != nil {
			startErr = cmdutil.FailureErr(shared.Naming(a.t, "triage", err))
			p.Send(triage.StartFailedMsg{})
			return
		}
		p.Send(triage.ReadyMsg{Console: triage.New(actCtx, a, o.Now).WithDryRun(o.DryRun).WithRefresh(refreshPeriod(a.t, o.refresh, o.refreshSet)).WithSettle(o.settle).WithMessages(first)})
	}()
	final, err := p.Run()
	ended.Store(true)
	errForced := &cmdutil.ExitError{Code: shared.ExitInterrupted, Err: fmt.Errorf("triage %s: interrupted twice; exited at once, messages an action held stay invisible until --visibility lapses", t.URL)}
	if forced.Load() {
		return errForced
	}
	st, _ := final.(triage.Starting)
	_, console := st.Console()
	interrupted := signalled.Load() || st.Interrupted()
	failed := err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil
	// An action still under way (ctrl+c during a replay) stops: it finishes
	// the publishes and removes it has begun, releases what it holds and
	// writes its audit record; a start-up under way gives up. Signals are
	// still watched meanwhile: one now exits at once (force).
	cancel()
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		<-started
		if a != nil {
			a.running.Wait()
		}
	}()
	select {
	case <-waited:
	case <-forcedCh:
		return errForced
	}
	stopSignals()
	if forced.Load() {
		return errForced
	}
	switch {
	case failed:
		return cmdutil.FailureErr(fmt.Errorf("triage %s: %w", t.URL, err))
	case !console && interrupted:
		// ctrl+c or a signal while connecting: nothing was read.
		return shared.ConnectInterrupted("triage " + t.URL)
	case !console && st.Quit():
		return nil
	case !console && startErr != nil:
		return startErr
	case interrupted:
		// ctrl+c or a signal: what was held is released (above), and
		// the run ends as an interrupted dlq command does.
		return shared.Interrupted("triage " + t.URL)
	}
	return nil
}

// actions resolves arg as dlq replay does (its refusals are usage
// errors) and returns the console's actions on it.
func (o *Options) actions(ctx context.Context, arg string, logger *slog.Logger) (*triageActions, error) {
	t, dt, err := o.Target(arg)
	if err != nil {
		return nil, err
	}
	// A fan-out refusal does not stop the console opening: it refuses
	// only the replays (and edits), so the dead letters can still be read,
	// archived and purged.
	to, allow, guard, refused, err := o.ReplayTargetOrRefusal(ctx, t, dt, logger)
	if err != nil {
		return nil, err
	}
	return &triageActions{o: o, t: t, dt: dt, to: to, allow: allow, guard: guard, refused: refused, logger: logger, history: o.RetryHistory(t)}, nil
}

// triageActions are the console's actions on one destination: each opens
// the destination, does its scan (which releases what it read) and closes
// it again.
type triageActions struct {
	o     *Options
	t     *transport.Target
	dt    transport.Transport
	to    string
	allow func(string) bool
	// guard is the fan-out guard (nil with --to): it routes a copy to the
	// failed subscription's own queue where the transport has one.
	guard *shared.FanOutGuard
	// refused is the fan-out guard's refusal of every replay from this
	// destination (nil when replays may go): the console opens to look,
	// and each replay or edit answers with it.
	refused error
	logger  *slog.Logger
	// audit, with --log-file, gets one LogAudit record per action (nil:
	// none).
	audit *slog.Logger
	// running counts the actions under way (acting) and the opens of the
	// destination (Open): triage waits for them (their releases and audit
	// records) after the console ends, so nothing stays held.
	running sync.WaitGroup
	// held is transport.Channel.Held of the last Load (LoadNote).
	held atomic.Int64
	// history is the retry history the console's replays record into and
	// its message view reads (nil: none kept).
	history *inspect.RetryHistory
	// reread is set after the first Load: every later one (a refresh,
	// ctrl+r, the read after an action) releases each receive at once.
	reread atomic.Bool
}

// acting counts an action as running until the returned function is
// called (after its audit record): triage waits for it after the console
// ends, so an action stopped by ctrl+c or a signal still writes its
// record.
func (a *triageActions) acting() (done func()) {
	a.running.Add(1)
	return a.running.Done
}

// LoadNote implements triage.LoadNoter: how many messages another reader
// held invisible when the last Load began (SQS only), "" for none.
func (a *triageActions) LoadNote() string { return shared.HeldNote(a.held.Load()) }

// Source implements triage.Actions.
func (a *triageActions) Source() string { return a.t.URL }

// Open opens the destination for one action; held is how many messages
// another reader held invisible as it opened (transport.Channel.Held).
// Until the returned close is called the action counts as running.
func (a *triageActions) Open(ctx context.Context, rewrite bool) (src *inspect.Source, held int64, closeFn func() error, err error) {
	a.running.Add(1)
	ch, err := a.o.OpenReader(ctx, a.t, a.dt, rewrite, a.logger)
	if err != nil {
		a.running.Done()
		return nil, 0, nil, err
	}
	return a.o.Source(a.t, ch, a.logger), ch.Held, func() error {
		defer a.running.Done()
		return ch.Close(context.WithoutCancel(ctx))
	}, nil
}

// collect is a peek Exporter that keeps copies of the messages.
type collect []*message.Message

func (c *collect) Write(m *message.Message) error { *c = append(*c, m.Clone()); return nil }
func (c *collect) Flush() error                   { return nil }

// Load implements triage.Actions: a peek of the command's filter.
func (a *triageActions) Load(ctx context.Context) ([]*message.Message, error) {
	f, err := a.o.Filter()
	if err != nil {
		return nil, err
	}
	src, held, closeSrc, err := a.Open(ctx, false)
	if err != nil {
		return nil, err
	}
	a.held.Store(held)
	// A re-read releases what each receive brought at once, so a console
	// refreshing every few seconds never keeps the dead letters from
	// another reader (inspect.Source.ReleaseEach). Not on RocketMQ (a
	// reader group, t.Group): there every receive is a delivery attempt of
	// the reader group, and a re-read receiving each message several times
	// would spend its attempts (16, then the broker moves it to
	// %DLQ%<group>) several times faster.
	src.ReleaseEach = a.reread.Swap(true) && a.t.Group == ""
	var out collect
	_, perr := inspect.Peek(ctx, src, f, &out)
	return out, errors.Join(perr, closeSrc())
}

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

// LogAudit is the stable message of the audit record dlq triage writes to
// --log-file for each action, whatever the log level: user, action
// (replay, archive, purge, edit, restore), ids, destination, dry_run, done, failed,
// outcome (the action's summary) and error.
const LogAudit = "dlq triage action"

// auditLogger is the logger of the audit records: w in the log format,
// at Info whatever --log-level says (an audit line is never filtered out).
func (o *Options) auditLogger(w io.Writer) *slog.Logger {
	user := o.Env("USER")
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		user = u.Username
	}
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if o.Factory != nil && o.Factory.LogFormat == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(h).With("user", user)
}

// record writes the audit record of one action (nothing without
// --log-file).
func (a *triageActions) record(ctx context.Context, action string, ids []string, dest string, dryRun bool, res triage.Result, err error) {
	if a.audit == nil {
		return
	}
	attrs := []any{"source", a.t.URL, "action", action, "ids", strings.Join(ids, ","), "destination", dest, "dry_run", dryRun,
		"done", res.Done, "failed", res.Failed, "outcome", res.Summary}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	a.audit.InfoContext(ctx, LogAudit, attrs...)
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
