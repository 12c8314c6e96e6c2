package dlq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// dlq archive, purge and restore: their flags and runs.

// dlqArchiveOptions are archive's and purge's own flags.
type dlqArchiveOptions struct {
	*dlqOptions
	// file is --file: where archive writes ("-": stdout).
	file string
	// all is --all: select every message without a filter.
	all bool
	// yes is purge's --yes.
	yes bool
	// purge is true for dlq purge (the archive goes nowhere).
	purge bool
	// format is --output: text, or json (a record per message and a
	// summary on stdout).
	format string
}

// addRunOutput declares archive's, purge's and restore's --output into
// format.
func addRunOutput(cmd *cobra.Command, format *string) {
	cmdutil.AddOutputFlag(cmd, format, cmdutil.RunFormats, "(json: a record per message, then a summary, on stdout)")
}

func newDLQArchiveCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqArchiveOptions{dlqOptions: parent}
	cmd := &cobra.Command{
		Use:   "archive [SUBSCRIPTION|URL]",
		Short: "Move dead-lettered messages into a JSON-lines file, removing each once it is on disk",
		Long: `Write the selected messages to --file (default: stdout) as JSON lines, the
shape peek --output json prints and restore reads (every header, the bag
with the rejection metadata, and the body, base64 when it is not UTF-8),
and remove each from the dead-letter destination only after its line has
been written and the file fsynced. A crash at any instant leaves every
message in the destination, in the file, or in both, never in neither.

The file is appended to (created with mode 0600 when missing), so an
archive run again after a crash, or on another day, adds to it. An
existing file must be an archive: every complete line a record restore
can read, else it is refused (exit 2) and left unchanged; only an
unfinished last line starting with '{' after complete records (a killed
archive's) is cut off before appending. Archive
removes what it selects, so it needs a filter (--reason, --topic, --since,
--until, --id, --grep, --group-id, --limit) or --all; it refuses to write
to a terminal. Failures to remove are counted and exit 1: those messages
are in both places.`,
		Example: `  # Keep a failure group's messages on disk and out of the queue
  brighter dlq archive orders --group-id 921f815d2f4c --file orders-timeouts.jsonl

  # Everything, to stdout, compressed
  brighter dlq archive sqs://orders-dlq --all | gzip > dlq-$(date +%F).jsonl.gz`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.run(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	cmd.Flags().StringVar(&o.file, "file", "-", "append the archive to this file ('-': stdout)")
	cmd.Flags().BoolVar(&o.all, "all", false, "archive every message (without it a filter is required)")
	addRunOutput(cmd, &o.format)
	return cmd
}

func newDLQPurgeCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqArchiveOptions{dlqOptions: parent, purge: true}
	cmd := &cobra.Command{
		Use:   "purge [SUBSCRIPTION|URL]",
		Short: "Delete dead-lettered messages for good (an archive to nowhere)",
		Long: `Remove the selected messages from the dead-letter destination, keeping no
copy: dlq archive to /dev/null. It needs --yes and a filter (--reason,
--topic, --since, --until, --id, --grep, --group-id, --limit) or --all;
without them it refuses (exit 2) and reads nothing. Archive first when in
doubt.`,
		Example: `  brighter dlq purge orders --group-id 921f815d2f4c --yes
  brighter dlq purge sqs://orders-dlq --until 720h --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.run(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	cmd.Flags().BoolVar(&o.all, "all", false, "purge every message (without it a filter is required)")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "confirm: delete the selected messages, keeping no copy")
	addRunOutput(cmd, &o.format)
	return cmd
}

// selects reports whether a flag narrows the selection.
func (o *dlqOptions) selects() bool {
	return len(o.reasons) > 0 || len(o.topics) > 0 || o.since != "" || o.until != "" || len(o.ids) > 0 ||
		o.grep != "" || len(o.groupIDs) > 0 || o.limit > 0
}

// fsyncer returns the sync of an archive written to f: fsync, where f is
// something that can be synced (a pipe or a terminal cannot: EINVAL).
func fsyncer(f interface{ Sync() error }) func() error {
	return func() error {
		err := f.Sync()
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
			return nil
		}
		return err
	}
}

// logArchiveUnfinishedLineCut is logged (Warn) when dlq archive cut an
// unfinished last line off the file it appends to.
const logArchiveUnfinishedLineCut = "archive: cut an unfinished last line off the file"

// archiveFile is an existing --file, checked (inspect.CheckArchive) before
// anything is read: nil file when there is none yet.
type archiveFile struct {
	file *os.File
	// keep and unfinished: cut the file to keep before appending.
	keep       int64
	unfinished bool
}

// checkArchiveFile opens an existing archive path for reading and appending
// and checks that every line is a record: a file that is not an
// archive is a usage error naming its first bad line, and is not changed.
// A missing file is no error (it is created once the source is open);
// pipes and devices are not checked.
func checkArchiveFile(path string) (archiveFile, error) {
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, os.ErrNotExist) {
		return archiveFile{}, nil
	}
	if err != nil {
		return archiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	st, err := fh.Stat()
	if err != nil {
		_ = fh.Close()
		return archiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	if !st.Mode().IsRegular() {
		return archiveFile{file: fh}, nil
	}
	keep, unfinished, err := inspect.CheckArchive(io.NewSectionReader(fh, 0, st.Size()), path)
	if err != nil {
		_ = fh.Close()
		if errors.Is(err, inspect.ErrNotArchive) {
			return archiveFile{}, cmdutil.UsageErr(fmt.Errorf("archive --file: %w; refusing to append to it: nothing was read and the file is unchanged", err))
		}
		return archiveFile{}, cmdutil.FailureErr(fmt.Errorf("archive --file: %w", err))
	}
	return archiveFile{file: fh, keep: keep, unfinished: unfinished}, nil
}

// open makes the checked file ready to append to: it cuts an unfinished
// last line off an existing archive (a Warn on logger says how many bytes)
// or creates a missing one with mode 0600.
func (a archiveFile) open(path string, logger *slog.Logger) (*os.File, error) {
	if a.file == nil {
		fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("archive --file: %w", err)
		}
		return fh, nil
	}
	if a.unfinished {
		st, err := a.file.Stat()
		if err == nil {
			err = a.file.Truncate(a.keep)
		}
		if err != nil {
			_ = a.file.Close()
			return nil, fmt.Errorf("archive --file %s: cut the unfinished last line: %w", path, err)
		}
		logger.Warn(logArchiveUnfinishedLineCut, "file", path, "bytes", st.Size()-a.keep)
	}
	return a.file, nil
}

func (o *dlqArchiveOptions) run(ctx context.Context, arg string) error {
	what := "archive"
	if o.purge {
		what = "purge"
	}
	su, err := o.setup(arg, func() error {
		if err := cmdutil.ParseOutput(cmdutil.RunFormats, &o.format); err != nil {
			return err
		}
		if !o.purge && o.file == "-" && o.format == export.JSON {
			return cmdutil.UsageErr(errors.New("archive --output json prints its records on stdout, where the archive would go: give --file FILE"))
		}
		if !o.all && !o.selects() {
			return cmdutil.UsageErr(fmt.Errorf("%s removes every message it selects: give a filter (--reason, --topic, --since, --until, --id, --grep, --group-id, --limit) or --all", what))
		}
		if o.purge && !o.yes {
			return cmdutil.UsageErr(errors.New("purge deletes the selected messages and keeps no copy: pass --yes (or archive them with dlq archive --file FILE)"))
		}
		if !o.purge && o.file == os.DevNull {
			return cmdutil.UsageErr(fmt.Errorf("archive --file %s keeps no copy: that is a purge; use dlq purge with --yes", os.DevNull))
		}
		if !o.purge && o.file == "-" && o.io.OutTTY {
			return cmdutil.UsageErr(errors.New("archive writes JSON lines to stdout, which is a terminal: give --file FILE or redirect stdout"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger, f, t, dt := su.logger, su.f, su.t, su.dt
	var (
		w     io.Writer = io.Discard
		sync  func() error
		close = func() error { return nil }
	)
	if !o.purge {
		w = o.io.Out
		if out, ok := o.io.Out.(*os.File); ok {
			sync = fsyncer(out)
		}
	}
	var af archiveFile
	if !o.purge && o.file != "-" {
		if af, err = checkArchiveFile(o.file); err != nil {
			return err
		}
	}
	ch, err := o.openReader(ctx, t, dt, true, logger)
	if err != nil {
		if af.file != nil {
			_ = af.file.Close()
		}
		return err
	}
	if !o.purge && o.file != "-" {
		fh, err := af.open(o.file, logger)
		if err != nil {
			_ = ch.Close(context.WithoutCancel(ctx))
			return cmdutil.FailureErr(fmt.Errorf("archive %s: %w", t.URL, err))
		}
		sf := inspect.ArchiveFile(o.file, o.io.SyncFileOf(fh))
		w, sync, close = sf, fsyncer(sf), fh.Close
	}
	verb := "archived"
	if o.purge {
		verb = "purged"
	}
	var (
		records *inspect.RunJSON
		done    func(id string, err error)
	)
	if o.format == export.JSON {
		records = inspect.NewRunJSON(o.io.Out)
		done = func(id string, err error) { records.Message(id, "", verb, err) }
	}
	sctx, stop := o.interruptible(ctx, logger)
	sum, aerr := inspect.ArchiveWith(sctx, o.source(t, ch, logger), f, w, sync, done)
	stopped := sctx.Err() != nil
	stop()
	cerr := errors.Join(ch.Close(context.WithoutCancel(ctx)), close())
	if records != nil {
		r := inspect.ReplayRecord{Skipped: &sum.Skipped, Failed: &sum.Failed, Interrupted: &stopped}
		if o.purge {
			r.Purged = &sum.Archived
		} else {
			r.Archived = &sum.Archived
		}
		if err := records.Summary(r); err != nil {
			cerr = errors.Join(cerr, err)
		}
	} else {
		fmt.Fprintf(o.io.ErrOut, "%s: %s %d, skipped %d, failed %d\n", t.URL, verb, sum.Archived, sum.Skipped, sum.Failed)
	}
	if !stopped {
		noteHeld(o.io.ErrOut, t, ch)
	}
	switch {
	case stopped:
		return &cmdutil.ExitError{Code: exitInterrupted, Err: fmt.Errorf("%s %s: interrupted; what was %s is gone from the destination, the rest is still there, visible", what, t.URL, verb)}
	case aerr != nil:
		return cmdutil.FailureErr(naming(t, what, aerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("%s %s: %w", what, t.URL, cerr))
	case sum.Failed > 0:
		return cmdutil.FailureErr(fmt.Errorf("%s %s: %s failed; see the log (a message %s but not removed is in both places)", what, t.URL, plural(sum.Failed, "message"), verb))
	}
	return nil
}

// dlqRestoreOptions are restore's own flags.
type dlqRestoreOptions struct {
	*dlqOptions
	to    string
	toSet bool
	// fanOut is --fan-out: without --to, publish to a Pub/Sub topic other
	// subscriptions also receive.
	fanOut bool
	// format is --output: text or json.
	format string
	// dryRun is --dry-run: read the file and check the destination, publish
	// nothing.
	dryRun bool
	// yes is --yes: restore records whose id the destination already holds.
	yes bool
}

func newDLQRestoreCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqRestoreOptions{dlqOptions: parent}
	cmd := &cobra.Command{
		Use:   "restore FILE -s SUBSCRIPTION|URL",
		Short: "Publish the messages of an archive back to a dead-letter destination",
		Long: `Read FILE (JSON lines, as dlq archive and peek --output json write them;
'-' for stdin) and publish each selected message, as it was archived, with
its rejection metadata, to the dead-letter destination --subscription names
(--invalid, --native as for the other dlq commands), or to --to. The whole
file is read first: a line that cannot be read refuses the restore (exit 2)
before anything is published. The file is never changed, so a restore run
again publishes its messages again. A failed publish is counted and exits
1; the message is still in the file.

Before publishing into the dead-letter destination (no --to, or --to
naming it) the restore reads it (releasing everything it reads) and
refuses (exit 2), publishing nothing, when it already holds an id of a
selected record: a second restore would make a second copy of each. The
refusal lists the ids and how many copies are there; --yes restores them
all the same, --id narrows the selection. With another --to the
destination is not read (a topic cannot be), and stderr says so.
--dry-run reads the file, checks the destination and lists what would be
restored ("would restore ID -> DEST", "already there" for an id the
destination holds), publishing nothing.

On SQS it publishes to queues, also for a subscription fed by SNS (its
dead-letter queue is a queue); on a FIFO queue each message keeps its
message group and gets a fresh deduplication id.`,
		Example: `  brighter dlq restore orders-timeouts.jsonl -c brighter.yaml -s orders
  brighter dlq restore dlq.jsonl -s sqs://orders-dlq --group-id 921f815d2f4c
  gunzip -c dlq.jsonl.gz | brighter dlq restore - -s orders --to orders-staging`,
		Args: restoreArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.toSet = cmd.Flags().Changed("to")
			return o.run(cmd.Context(), args[0])
		},
	}
	o.addCommon(cmd)
	cmd.ValidArgsFunction = nil
	cmd.Flags().StringVar(&o.to, "to", "", "publish to this queue or topic, or a URL of the destination's transport (default: the dead-letter destination)")
	cmd.Flags().BoolVar(&o.fanOut, "fan-out", false, "without --to, publish to a dead-letter topic that other subscriptions also receive (Pub/Sub); by default that is refused")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "read the file and check the destination; publish nothing")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "restore records whose id the dead-letter destination already holds (a second copy)")
	addRunOutput(cmd, &o.format)
	return cmd
}

// restoreArgs accepts restore's one argument, the archive FILE. A second
// argument (a destination written as the other dlq commands take it) is a
// usage error (exit 2) that says the destination is given with -s, rather
// than cobra's bare "accepts 1 arg(s), received 2"; more are cobra's error.
func restoreArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 2 {
		return cmdutil.UsageErr(fmt.Errorf("restore takes one argument, the archive FILE: name the destination with -s/--subscription, not as a second argument (%s)", redact.Quote(args[1])))
	}
	return cobra.ExactArgs(1)(cmd, args)
}

func (o *dlqRestoreOptions) run(ctx context.Context, file string) error {
	su, err := o.setup(o.subscription, func() error {
		if err := cmdutil.ParseOutput(cmdutil.RunFormats, &o.format); err != nil {
			return err
		}
		if o.toSet && o.to == "" {
			return cmdutil.UsageErr(errors.New("--to is empty: give a queue or topic, or leave --to out to restore into the dead-letter destination"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger, f, t, dt := su.logger, su.f, su.t, su.dt
	if t.S.SQS != nil && t.S.SQS.ChannelType == config.ChannelPubSub {
		// A dead-letter queue is a queue, also for an SNS-fed subscription.
		s, q := *t.S, *t.S.SQS
		q.ChannelType = config.ChannelPointToPoint
		s.SQS = &q
		tc := *t
		tc.S = &s
		t = &tc
	}
	from := dt.ReplayFrom(t)
	raw := from.Name
	if o.toSet {
		raw = o.to
	}
	dest, err := toName(t, dt, raw)
	if err != nil {
		return cmdutil.UsageErr(fmt.Errorf("--to %q: %w", raw, err))
	}
	if !o.toSet {
		if err := restoreGuard(ctx, t, dt, dest, o.fanOut); err != nil {
			return err
		}
	}
	in := o.io.In
	name := "stdin"
	if file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return cmdutil.UsageErr(fmt.Errorf("restore: %w", err))
		}
		defer fh.Close()
		in, name = fh, file
	}
	all, err := inspect.ReadArchive(in, name)
	if err != nil {
		return cmdutil.UsageErr(fmt.Errorf("restore: %w; nothing was published", err))
	}
	ms := all[:0:0]
	for _, m := range all {
		if f.Match(m) && (f.Limit == 0 || len(ms) < f.Limit) {
			ms = append(ms, m)
		}
	}
	// The memory transport publishes into the memory.output file the reader
	// loads and writes back on close.
	var closeReader func() error
	var reader *openedChannel
	if t.S.Transport == config.TransportMemory {
		ch, err := o.openReader(ctx, t, dt, true, logger)
		if err != nil {
			return err
		}
		reader = ch
		closeReader = func() error { return ch.Close(context.WithoutCancel(ctx)) }
	}
	there, err := o.alreadyThere(ctx, t, dt, reader, dest == from.Name, ms, logger)
	if err == nil && o.dryRun {
		err = o.restoreDryRun(ms, there, dest, len(all)-len(ms))
	}
	if err != nil || o.dryRun {
		if closeReader != nil {
			err = errors.Join(err, closeReader())
		}
		return err
	}
	p, err := dt.DLQProducer(ctx, t, logger)
	if err != nil {
		if closeReader != nil {
			_ = closeReader()
		}
		return cmdutil.FailureErr(fmt.Errorf("restore to %s: producer: %w", dest, err))
	}
	sctx, stop := o.interruptible(ctx, logger)
	var records *inspect.RunJSON
	if o.format == export.JSON {
		records = inspect.NewRunJSON(o.io.Out)
	}
	sum, rerr := inspect.Restore(sctx, p, ms, dest, logger, func(id string, err error) {
		if records != nil {
			records.Message(id, dest, "restored", err)
			return
		}
		if err != nil {
			fmt.Fprintf(o.io.Out, "failed %s: publish to %s: %v\n", id, dest, err)
			return
		}
		fmt.Fprintf(o.io.Out, "restored %s -> %s\n", id, dest)
	})
	stopped := sctx.Err() != nil
	stop()
	cerr := p.Close(context.WithoutCancel(ctx))
	if closeReader != nil {
		cerr = errors.Join(cerr, closeReader())
	}
	skipped := len(all) - len(ms)
	if records != nil {
		interrupted := rerr != nil && stopped
		if err := records.Summary(inspect.ReplayRecord{Restored: &sum.Restored, Skipped: &skipped, Failed: &sum.Failed, Interrupted: &interrupted}); err != nil {
			cerr = errors.Join(cerr, err)
		}
	} else {
		fmt.Fprintf(o.io.Out, "restored %d, skipped %d, failed %d\n", sum.Restored, skipped, sum.Failed)
	}
	switch {
	case rerr != nil && stopped:
		return &cmdutil.ExitError{Code: exitInterrupted, Err: fmt.Errorf("restore %s: interrupted after %d of %d; run it again with --id for the rest (it publishes the file's messages again)", name, sum.Restored+sum.Failed, len(ms))}
	case rerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %w", name, rerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %w", name, cerr))
	case sum.Failed > 0:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %s failed; still in the file only", name, plural(sum.Failed, "message")))
	}
	return nil
}

// alreadyThere reads the dead-letter destination of t (through reader when
// not nil, else a reader it opens and closes) for the ids of ms: the ids it
// already holds, with their number of copies. It reads nothing, and says
// so on stderr, when readable is false (--to names another destination).
// Without --yes and --dry-run an id already there refuses the restore
// (exit 2) before anything is published.
func (o *dlqRestoreOptions) alreadyThere(ctx context.Context, t *dlqTarget, dt dlqTransport, reader *openedChannel, readable bool, ms []*message.Message, logger *slog.Logger) (map[string]int, error) {
	if !readable {
		fmt.Fprintf(o.io.ErrOut, "restore: --to %s is not the dead-letter destination: not checked for ids already there\n", o.to)
		return nil, nil
	}
	if reader == nil {
		ch, err := o.openReader(ctx, t, dt, false, logger)
		if err != nil {
			return nil, err
		}
		defer ch.Close(context.WithoutCancel(ctx))
		reader = ch
	}
	there, err := inspect.AlreadyThere(ctx, o.source(t, reader, logger), ms)
	if err != nil {
		return nil, cmdutil.FailureErr(fmt.Errorf("restore: check %s for ids already there: %w; nothing was published", t.URL, err))
	}
	if len(there) == 0 || o.yes || o.dryRun {
		return there, nil
	}
	ids := make([]string, 0, len(there))
	for id, n := range there {
		ids = append(ids, fmt.Sprintf("%s (%s)", redact.Quoted(id), plural(n, "copy")))
	}
	slices.Sort(ids)
	return nil, cmdutil.UsageErr(fmt.Errorf("restore: %s already holds %s of the file's selected records: %s; restoring would add another copy of each; nothing was published (pass --yes to restore them anyway, or leave them out with --id)",
		t.URL, plural(len(there), "id"), strings.Join(ids, ", ")))
}

// restoreDryRun lists what a restore of ms into dest would do and its
// summary; nothing is published.
func (o *dlqRestoreOptions) restoreDryRun(ms []*message.Message, there map[string]int, dest string, skipped int) error {
	dups := 0
	for _, m := range ms {
		id := m.Header.MessageID
		if n := there[id]; n > 0 {
			dups++
			fmt.Fprintf(o.io.Out, "would restore %s -> %s (already there: %s)\n", id, dest, plural(n, "copy"))
			continue
		}
		fmt.Fprintf(o.io.Out, "would restore %s -> %s\n", id, dest)
	}
	fmt.Fprintf(o.io.Out, "would restore %d, skipped %d, already there %d (dry run, nothing published)\n", len(ms), skipped, dups)
	return nil
}
