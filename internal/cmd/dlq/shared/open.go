package shared

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/transport"
	"github.com/spf13/cobra"
)

// Setup is what every dlq command builds before it reads or publishes:
// the Logger the global flags ask for, the selection (F) from the filter
// flags, and the destination resolved (T) with its transport's dlq
// support (DT).
type Setup struct {
	// Logger is the logger the global flags ask for.
	Logger *slog.Logger
	// F is the selection the filter flags make (--reason, --topic,
	// --since, --until, --limit, ...).
	F inspect.Filter
	// T is the destination the command's argument resolved to: a
	// subscription's dead-letter or native redrive target, or a URL.
	T *transport.Target
	// DT is the dlq support of T's transport (its reader, producer and
	// address scheme).
	DT transport.Transport
}

// Setup builds the logger and the filter, runs checks (the command's own
// flag checks, in order; each returns a usage error), then resolves arg
// into a target; it reads nothing. The first error is returned as is.
func (o *Options) Setup(arg string, checks ...func() error) (*Setup, error) {
	logger, err := o.Factory.Logger()
	if err != nil {
		return nil, err
	}
	f, err := o.Filter()
	if err != nil {
		return nil, err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	t, dt, err := o.Target(arg)
	if err != nil {
		return nil, err
	}
	return &Setup{Logger: logger, F: f, T: t, DT: dt}, nil
}

// Target resolves the argument, checks the flags against its transport and
// returns the transport's dlq support; it reads nothing.
func (o *Options) Target(arg string) (*transport.Target, transport.Transport, error) {
	t, err := o.Resolve(arg)
	if err != nil {
		return nil, nil, err
	}
	if err := o.checkTarget(t); err != nil {
		return nil, nil, err
	}
	factory, err := o.Transports.Get(t.S)
	if err != nil {
		return nil, nil, cmdutil.ExitCoded(err)
	}
	return t, factory, nil
}

// OpenReader opens the transport's reader over t. A SIGINT or SIGTERM
// while it connects abandons the connection: ConnectInterrupted (exit
// 130); a second exits 130 at once.
func (o *Options) OpenReader(ctx context.Context, t *transport.Target, dt transport.Transport, rewrite bool, logger *slog.Logger) (*transport.Channel, error) {
	cctx, done := o.connecting(ctx, logger)
	ch, err := dt.DLQReader(cctx, t, transport.ReadOptions{Visibility: o.Visibility, Wait: o.Wait, Rewrite: rewrite}, logger)
	if done() {
		if err == nil {
			_ = ch.Close(context.WithoutCancel(ctx))
		}
		return nil, ConnectInterrupted(t.URL)
	}
	if err != nil {
		if _, ok := cmdutil.AsExitError(err); ok {
			return nil, cmdutil.ExitCoded(err)
		}
		return nil, cmdutil.FailureErr(fmt.Errorf("%s: open: %w", t.URL, err))
	}
	return ch, nil
}

// OpenProducer opens the transport's producer for t (a restore's). A
// SIGINT or SIGTERM while it connects abandons the connection:
// ConnectInterrupted (exit 130); a second exits 130 at once. Its other
// errors are the transport's, as they are.
func (o *Options) OpenProducer(ctx context.Context, t *transport.Target, dt transport.Transport, logger *slog.Logger) (broker.Producer, error) {
	cctx, done := o.connecting(ctx, logger)
	p, err := dt.DLQProducer(cctx, t, logger)
	if done() {
		if err == nil {
			_ = p.Close(context.WithoutCancel(ctx))
		}
		return nil, ConnectInterrupted(t.URL)
	}
	return p, err
}

// NoteHeld says on w, after a scan of t, how many messages another reader
// held invisible when the scan began (transport.Channel.Held): the scan could
// not see them, so an empty or short result is not the whole destination.
// It says nothing when none were held or the transport cannot
// tell.
func NoteHeld(w io.Writer, t *transport.Target, ch *transport.Channel) {
	if s := HeldNote(ch.Held); s != "" {
		fmt.Fprintf(w, "%s: %s\n", t.URL, s)
	}
}

// HeldNote is NoteHeld's text for held messages, "" for none. held is the
// broker's estimate (SQS ApproximateNumberOfMessagesNotVisible), so the
// note says "about" and what the figure is: a broker may still count a
// hold that has lapsed (fauxqs does until the queue's next receive; SQS's
// figure lags), and such a message was read like any other.
func HeldNote(held int64) string {
	if held <= 0 {
		return ""
	}
	return "about " + Plural(int(held), "more message") + " held invisible by another reader when this one began (a killed replay or archive, a running scan, or a consumer; the broker's estimate, which may still count holds that had lapsed): those still held were not read; they come back when their visibility timeout lapses"
}

// Source is the inspect source over ch, the destination t opened for
// reading, with --wait and the transport's short-poll fact.
func (o *Options) Source(t *transport.Target, ch *transport.Channel, logger *slog.Logger) *inspect.Source {
	return &inspect.Source{Consumer: ch.Consumer, Name: t.URL, Wait: o.Wait, ShortPoll: ch.ShortPoll, Logger: logger,
		Receiving: func(wait time.Duration) func() { return o.receiving.start(t.URL, wait) }}
}

// CheckOutput checks peek's and stats' --output (a usage error names the
// valid formats).
func (o *Options) CheckOutput() error { return cmdutil.ParseOutput(cmdutil.ScanFormats, &o.Output) }

// ScanCmd completes cmd, a dlq verb that scans a destination and removes
// nothing (peek, stats): it takes the destination as at most one argument,
// has the common flags and --output, and runs run once the destination is
// resolved into o.Dest.
func (o *Options) ScanCmd(cmd *cobra.Command, run func(cmd *cobra.Command) error) *cobra.Command {
	cmd.Args = DestinationArgs
	cmd.RunE = o.RunWith(run)
	o.AddCommon(cmd)
	o.AddOutput(cmd)
	return cmd
}

// Scan opens o.Dest for reading as peek and stats read it and runs scan
// over it, closing it and ending the signal watch afterwards.
func (o *Options) Scan(ctx context.Context, scan func(rs *ReadScan) error) error {
	rs, err := o.openReadScan(ctx, o.Dest)
	if err != nil {
		return err
	}
	defer rs.done()
	return scan(rs)
}

// ReadScan is what peek and stats share before their scan: the checked
// --output, the filter (F), the destination (T) opened for reading (Ch)
// and its Source, a context (Ctx) that the first SIGINT or SIGTERM
// cancels, and stderr (ErrOut) for the summary.
type ReadScan struct {
	// F is the selection the filter flags make.
	F inspect.Filter
	// T is the destination read.
	T *transport.Target
	// DT is T's transport.
	DT transport.Transport
	// Logger is the command's logger.
	Logger *slog.Logger
	// Ch is T opened for reading: its consumer and how to close it.
	Ch *transport.Channel
	// Source is the scan's source of messages over Ch.
	Source *inspect.Source
	// Ctx is cancelled by the first SIGINT or SIGTERM.
	Ctx context.Context
	// ErrOut is stderr, for the summary.
	ErrOut io.Writer
	// done closes the channel and stops listening for signals.
	done func()
}

// Summarise prints the scan's summary line on stderr: the destination's
// URL, ": ", then format with args.
func (rs *ReadScan) Summarise(format string, args ...any) {
	fmt.Fprintf(rs.ErrOut, "%s: %s\n", rs.T.URL, fmt.Sprintf(format, args...))
}

func (o *Options) openReadScan(ctx context.Context, arg string) (*ReadScan, error) {
	su, err := o.Setup(arg, o.CheckOutput)
	if err != nil {
		return nil, err
	}
	f, t, logger := su.F, su.T, su.Logger
	ch, err := o.OpenReader(ctx, t, su.DT, false, logger)
	if err != nil {
		return nil, err
	}
	sctx, stop := o.Interruptible(ctx, logger)
	return &ReadScan{F: f, T: t, DT: su.DT, Logger: logger, Ch: ch, Source: o.Source(t, ch, logger), Ctx: sctx, ErrOut: o.IO.ErrOut, done: func() {
		stop()
		ch.Close(context.WithoutCancel(ctx))
	}}, nil
}
