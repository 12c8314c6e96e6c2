package restore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/brightergo/brighter/internal/tui/kit"
)

// Options are dlq restore's flags: the shared ones and its own.
type Options struct {
	*shared.Options
	// file is the argument: the archive to read ("-": stdin).
	file string
	// to and toSet are --to and whether it was given.
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

// NewCmdRestore returns dlq restore. runF, when not nil, is called with
// the parsed options instead of runRestore (a test checks the flags'
// parsing without reading anything).
func NewCmdRestore(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Options: shared.NewOptions(f)}
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
destination holds; with --output json "would-restore" records), publishing
nothing.

Every record published is recorded in the retry history beside the replay
journals ($XDG_STATE_HOME/brighter/replay/retries.jsonl) as a restore from
FILE, which dlq triage lists in the message's view (a restore is no retry).

On SQS it publishes to queues, also for a subscription fed by SNS (its
dead-letter queue is a queue); on a FIFO queue each message keeps its
message group and gets a fresh deduplication id.`,
		Example: `  brighter dlq restore orders-timeouts.jsonl -c brighter.yaml -s orders
  brighter dlq restore dlq.jsonl -s sqs://orders-dlq --group-id 921f815d2f4c
  gunzip -c dlq.jsonl.gz | brighter dlq restore - -s orders --to orders-staging`,
		Args: restoreArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.toSet = cmd.Flags().Changed("to")
			o.file = args[0]
			if runF != nil {
				return runF(o)
			}
			// Signals are handled from the start, connecting included.
			defer o.HoldSignals()()
			return o.EndRun(runRestore(cmd.Context(), o))
		},
	}
	o.AddCommon(cmd)
	cmd.ValidArgsFunction = nil
	cmd.Flags().StringVar(&o.to, "to", "", "publish to this queue or topic, or a URL of the destination's transport (default: the dead-letter destination)")
	cmd.Flags().BoolVar(&o.fanOut, "fan-out", false, "without --to, publish to a dead-letter topic that other subscriptions also receive (Pub/Sub); by default that is refused")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "read the file and check the destination; publish nothing")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "restore records whose id the dead-letter destination already holds (a second copy)")
	shared.AddRunOutput(cmd, &o.format)
	return cmd
}

// restoreArgs accepts restore's one argument, the archive FILE. A second
// argument (a destination written as the other dlq commands take it) is a
// usage error (exit 2) that says the destination is given with -s, rather
// than cobra's bare "accepts 1 arg(s), received 2"; none or more than two
// are cmdutil.ArgsBetween's usage error, naming the FILE.
func restoreArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 2 {
		return cmdutil.UsageErr(fmt.Errorf("restore takes one argument, the archive FILE: name the destination with -s/--subscription, not as a second argument (%s)", redact.Quote(args[1])))
	}
	return cmdutil.ArgsBetween(1, 1, "the archive FILE (- for stdin)")(cmd, args)
}

// runRestore publishes the selected records of the archive o.file to the
// destination -s names (or --to).
func runRestore(ctx context.Context, o *Options) error {
	file := o.file
	su, err := o.Setup(o.Subscription, func() error {
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
	logger, f, t, dt := su.Logger, su.F, su.T, su.DT
	// A dead-letter queue is a queue, also for an SNS-fed subscription.
	t = shared.RestoreTarget(t)
	from := dt.ReplayFrom(t)
	raw := from.Name
	if o.toSet {
		raw = o.to
	}
	dest, err := shared.ToName(t, dt, raw)
	if err != nil {
		return cmdutil.UsageErr(fmt.Errorf("--to %q: %w", raw, err))
	}
	if !o.toSet {
		// A signal while it asks the broker ends the run (exit 130).
		if err := o.GuardRestore(ctx, t, dt, dest, o.fanOut, logger); err != nil {
			return err
		}
	}
	in := o.IO.In
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
	var reader *transport.Channel
	if t.S.Transport == config.TransportMemory {
		ch, err := o.OpenReader(ctx, t, dt, true, logger)
		if err != nil {
			return err
		}
		reader = ch
		closeReader = func() error { return ch.Close(context.WithoutCancel(ctx)) }
	}
	there, err := o.alreadyThere(ctx, t, dt, reader, dest == from.Name, ms, logger)
	if err == nil && o.dryRun {
		// The dry run fails what the producer would refuse before any
		// call (SQS: a body that is not UTF-8 text), as replay's does.
		var check func(*message.Message) error
		if c, ok := dt.(transport.DryRunChecker); ok {
			check = c.DryRunCheck(t)
		}
		err = o.restoreDryRun(name, ms, there, dest, len(all)-len(ms), check)
	}
	if err != nil || o.dryRun {
		if closeReader != nil {
			err = errors.Join(err, closeReader())
		}
		return err
	}
	// A signal while the producer connects ends the run (exit 130).
	p, err := o.OpenProducer(ctx, t, dt, logger)
	if err != nil {
		if closeReader != nil {
			_ = closeReader()
		}
		if ee, ok := cmdutil.AsExitError(err); ok && ee.Code == shared.ExitInterrupted {
			return err
		}
		return cmdutil.FailureErr(fmt.Errorf("restore to %s: producer: %w", dest, err))
	}
	sctx, stop := o.Interruptible(ctx, logger)
	var records *inspect.RunJSON
	if o.format == export.JSON {
		records = inspect.NewRunJSON(o.Out())
	}
	sum, rerr := inspect.Restore(sctx, p, ms, dest, logger, inspect.RecordRestores(ctx, o.RetryHistory(t), shared.ArchiveName(file), dest, o.Now, logger, func(id string, err error) {
		if records != nil {
			records.Message(id, dest, "restored", err)
			return
		}
		if err != nil {
			fmt.Fprintf(o.Out(), "failed %s: publish to %s: %s\n", kit.Visible(id), kit.Visible(dest), kit.Visible(err.Error()))
			return
		}
		fmt.Fprintf(o.Out(), "restored %s -> %s\n", kit.Visible(id), kit.Visible(dest))
	}))
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
		fmt.Fprintf(o.Out(), "restored %d, skipped %d, failed %d\n", sum.Restored, skipped, sum.Failed)
	}
	switch {
	case rerr != nil && stopped:
		return &cmdutil.ExitError{Code: shared.ExitInterrupted, Err: fmt.Errorf("restore %s: interrupted after %d of %d; run it again with --id for the rest (it publishes the file's messages again)", name, sum.Restored+sum.Failed, len(ms))}
	case rerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %w", name, rerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %w", name, cerr))
	case sum.Failed > 0:
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %s failed; still in the file only", name, shared.Plural(sum.Failed, "message")))
	}
	return nil
}

// alreadyThere reads the dead-letter destination of t (through reader when
// not nil, else a reader it opens and closes) for the ids of ms: the ids it
// already holds, with their number of copies. It reads nothing, and says
// so on stderr, when readable is false (--to names another destination).
// Without --yes and --dry-run an id already there refuses the restore
// (exit 2) before anything is published.
func (o *Options) alreadyThere(ctx context.Context, t *transport.Target, dt transport.Transport, reader *transport.Channel, readable bool, ms []*message.Message, logger *slog.Logger) (map[string]int, error) {
	if !readable {
		fmt.Fprintf(o.IO.ErrOut, "restore: --to %s is not the dead-letter destination: not checked for ids already there\n", o.to)
		return nil, nil
	}
	if reader == nil {
		ch, err := o.OpenReader(ctx, t, dt, false, logger)
		if err != nil {
			return nil, err
		}
		defer ch.Close(context.WithoutCancel(ctx))
		reader = ch
	}
	there, err := inspect.AlreadyThere(ctx, o.Source(t, reader, logger), ms)
	if err != nil {
		return nil, cmdutil.FailureErr(fmt.Errorf("restore: check %s for ids already there: %w; nothing was published", t.URL, err))
	}
	if len(there) == 0 || o.yes || o.dryRun {
		return there, nil
	}
	ids := make([]string, 0, len(there))
	for id, n := range there {
		ids = append(ids, fmt.Sprintf("%s (%s)", redact.Quoted(id), shared.Plural(n, "copy")))
	}
	slices.Sort(ids)
	return nil, cmdutil.UsageErr(fmt.Errorf("restore: %s already holds %s of the file's selected records: %s; restoring would add another copy of each; nothing was published (pass --yes to restore them anyway, or leave them out with --id)",
		t.URL, shared.Plural(len(there), "id"), strings.Join(ids, ", ")))
}

// restoreDryRun lists what a restore of ms (read from the archive called
// name) into dest would do and its summary; nothing is published. check,
// when not nil, is asked about each message's RestoreCopy: an error (what
// the producer would refuse before publishing it) makes the message a
// failure of the dry run ("failed ID: ...", as the real run says it), and
// any failure exits 1 (cmdutil.FailureErr), as the real run would. With
// -o json it prints a record per message (Outcome "would-restore", or
// "failed" with its Error; AlreadyThere its copies in the destination)
// and a summary record (DryRun true) instead of the lines.
func (o *Options) restoreDryRun(name string, ms []*message.Message, there map[string]int, dest string, skipped int, check func(*message.Message) error) error {
	var records *inspect.RunJSON
	if o.format == export.JSON {
		records = inspect.NewRunJSON(o.Out())
	}
	dups, failed := 0, 0
	for _, m := range ms {
		id := m.Header.MessageID
		n := there[id]
		if n > 0 {
			dups++
		}
		var cerr error
		if check != nil {
			if cerr = check(inspect.RestoreCopy(m, dest)); cerr != nil {
				failed++
			}
		}
		switch {
		case records != nil:
			r := inspect.ReplayRecord{ID: id, Destination: dest, Outcome: "would-restore"}
			if n > 0 {
				r.AlreadyThere = &n
			}
			if cerr != nil {
				r.Outcome, r.Error = "failed", cerr.Error()
			}
			records.Record(r)
		case cerr != nil:
			fmt.Fprintf(o.Out(), "failed %s: publish to %s: %s\n", kit.Visible(id), kit.Visible(dest), kit.Visible(cerr.Error()))
		case n > 0:
			fmt.Fprintf(o.Out(), "would restore %s -> %s (already there: %s)\n", kit.Visible(id), kit.Visible(dest), shared.Plural(n, "copy"))
		default:
			fmt.Fprintf(o.Out(), "would restore %s -> %s\n", kit.Visible(id), kit.Visible(dest))
		}
	}
	if records != nil {
		restored, dryRun, interrupted := len(ms)-failed, true, false
		if err := records.Summary(inspect.ReplayRecord{Restored: &restored, Skipped: &skipped, Failed: &failed, AlreadyThere: &dups, DryRun: &dryRun, Interrupted: &interrupted}); err != nil {
			return cmdutil.FailureErr(fmt.Errorf("restore: %w", err))
		}
	} else {
		fmt.Fprintf(o.Out(), "would restore %d, skipped %d, already there %d, failed %d (dry run, nothing published)\n", len(ms)-failed, skipped, dups, failed)
	}
	if failed > 0 {
		return cmdutil.FailureErr(fmt.Errorf("restore %s: %s would fail (dry run, nothing published)", name, shared.Plural(failed, "message")))
	}
	return nil
}
