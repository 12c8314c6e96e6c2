package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/inspect"
)

// The run of dlq archive and dlq purge.

// ArchiveOptions are the flags of dlq archive and dlq purge, which share
// one run (RunArchive).
type ArchiveOptions struct {
	*Options
	// File is --file: where archive writes ("-": stdout).
	File string
	// All is --all: select every message without a filter.
	All bool
	// Yes is purge's --yes.
	Yes bool
	// Purge is true for dlq purge (the archive goes nowhere).
	Purge bool
	// Format is --output: text, or json (a record per message and a
	// summary on stdout).
	Format string
}

// RunArchive archives (or, with Purge, purges) what o selects from arg.
func (o *ArchiveOptions) RunArchive(ctx context.Context, arg string) error {
	what := "archive"
	if o.Purge {
		what = "purge"
	}
	su, err := o.Setup(arg, func() error {
		if err := cmdutil.ParseOutput(cmdutil.RunFormats, &o.Format); err != nil {
			return err
		}
		if !o.Purge && o.File == "-" && o.Format == export.JSON {
			return cmdutil.UsageErr(errors.New("archive --output json prints its records on stdout, where the archive would go: give --file FILE"))
		}
		if !o.Purge && o.File != "-" && o.Format == export.JSON && SameAsOut(o.File, o.IO.Out) {
			return cmdutil.UsageErr(fmt.Errorf("archive --output json prints its records on stdout, and --file %s is stdout: the records would overwrite the archive; give --file another FILE", o.File))
		}
		if !o.All && !o.Selects() {
			return cmdutil.UsageErr(fmt.Errorf("%s removes every message it selects: give a filter (--reason, --topic, --since, --until, --id, --grep, --group-id, --limit) or --all", what))
		}
		if o.Purge && !o.Yes {
			return cmdutil.UsageErr(errors.New("purge deletes the selected messages and keeps no copy: pass --yes (or archive them with dlq archive --file FILE)"))
		}
		if !o.Purge && o.File == os.DevNull {
			return cmdutil.UsageErr(fmt.Errorf("archive --file %s keeps no copy: that is a purge; use dlq purge with --yes", os.DevNull))
		}
		if !o.Purge && o.File == "-" && o.IO.OutTTY {
			return cmdutil.UsageErr(errors.New("archive writes JSON lines to stdout, which is a terminal: give --file FILE or redirect stdout"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	logger, f, t, dt := su.Logger, su.F, su.T, su.DT
	var (
		w     io.Writer = io.Discard
		sync  func() error
		close = func() error { return nil }
	)
	// pipe: stdout is a pipe or a socket, whose reader keeps nothing of
	// what it does not read (inspect.ArchiveWith's rule for a Pipe).
	var pipe inspect.Pipe
	if !o.Purge {
		// Through Out: a write whose reader went away stops the run at
		// once and is logged (LogDLQStdoutGone), as for the other verbs.
		w = o.Out()
		if out, ok := o.IO.Out.(*os.File); ok {
			sync = Fsyncer(out)
		}
		if o.File == "-" {
			pipe = StdoutPipe(o.IO.Out)
		}
	}
	var af ArchiveFile
	if !o.Purge && o.File != "-" {
		if af, err = CheckArchiveFile(o.File); err != nil {
			return err
		}
	}
	ch, err := o.OpenReader(ctx, t, dt, true, logger)
	if err != nil {
		if af.file != nil {
			_ = af.file.Close()
		}
		return err
	}
	if !o.Purge && o.File != "-" {
		fh, err := af.Open(o.File, logger)
		if err != nil {
			_ = ch.Close(context.WithoutCancel(ctx))
			return cmdutil.FailureErr(fmt.Errorf("archive %s: %w", t.URL, err))
		}
		sf := inspect.ArchiveFile(o.File, o.IO.SyncFileOf(fh))
		w, sync, close = sf, Fsyncer(sf), fh.Close
	}
	verb := "archived"
	if o.Purge {
		verb = "purged"
	}
	var (
		records *inspect.RunJSON
		done    func(id string, err error)
	)
	if o.Format == export.JSON {
		records = inspect.NewRunJSON(o.Out())
		done = func(id string, err error) { records.Message(id, "", verb, err) }
	}
	sctx, stop := o.Interruptible(ctx, logger)
	sum, aerr := inspect.ArchiveWith(sctx, o.Source(t, ch, logger), f, w, sync, pipe, done)
	stopped := sctx.Err() != nil
	stop()
	cerr := errors.Join(ch.Close(context.WithoutCancel(ctx)), close())
	if records != nil {
		r := inspect.ReplayRecord{Skipped: &sum.Skipped, Failed: &sum.Failed, Interrupted: &stopped}
		if o.Purge {
			r.Purged = &sum.Archived
		} else {
			r.Archived = &sum.Archived
		}
		if err := records.Summary(r); err != nil {
			cerr = errors.Join(cerr, err)
		}
	} else {
		line := fmt.Sprintf("%s: %s %d, skipped %d, failed %d", t.URL, verb, sum.Archived, sum.Skipped, sum.Failed)
		if sum.Left > 0 {
			line += fmt.Sprintf(", left %d (the reader went away before reading them; they are still there, visible)", sum.Left)
		}
		fmt.Fprintln(o.IO.ErrOut, line)
	}
	if !stopped {
		NoteHeld(o.IO.ErrOut, t, ch)
	}
	switch {
	case pipe != nil && (cmdutil.IsBrokenPipe(aerr) || o.StdoutGone()):
		// Before the interrupt's case: a reader that went away stops the
		// run as an interrupt does, and the messages removed last must
		// still be named.
		perr := aerr
		if !cmdutil.IsBrokenPipe(perr) {
			perr = fmt.Errorf("write the archive: %w", syscall.EPIPE)
		}
		return cmdutil.BrokenPipeErr(fmt.Errorf("%s %s: stopped: %w; %s archived, each removed only once the reader had read its record and was still reading after it; the rest are still in the destination, visible%s",
			what, t.URL, perr, Plural(sum.Archived, "message"), unconfirmed(sum.Unconfirmed)))
	case stopped:
		return &cmdutil.ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s %s: interrupted; what was %s is gone from the destination, the rest is still there, visible", what, t.URL, verb)}
	case aerr != nil:
		return cmdutil.FailureErr(Naming(t, what, aerr))
	case cerr != nil:
		return cmdutil.FailureErr(fmt.Errorf("%s %s: %w", what, t.URL, cerr))
	case sum.Failed > 0:
		return cmdutil.FailureErr(fmt.Errorf("%s %s: %s failed; see the log (a message %s but not removed is in both places)", what, t.URL, Plural(sum.Failed, "message"), verb))
	}
	return nil
}

// SameAsOut reports whether path names the file out writes to (os.SameFile
// of both Stats): /dev/stdout, /dev/fd/1, or the file stdout is redirected
// to. It is false when path does not exist or out is not an *os.File.
func SameAsOut(path string, out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	oi, err := f.Stat()
	if err != nil {
		return false
	}
	return os.SameFile(fi, oi)
}

// unconfirmed is what an archive to a pipe whose reader went away says of
// inspect.ArchiveSummary.Unconfirmed: "" when empty.
func unconfirmed(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("; the reader read the records of the %s removed last and then went away, so it may not have kept them all: %s",
		Plural(len(ids), "message"), strings.Join(ids, " "))
}
