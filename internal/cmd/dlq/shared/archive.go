package shared

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
		w, sync, close = fh, fsyncer(fh), fh.Close
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
