package shared

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/transport"
)

// ExitInterrupted is the exit code of a dlq command stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const ExitInterrupted = cmdutil.ExitInterrupted

// Stable log texts of the dlq commands' signal handling.
const (
	LogDLQStopping    = "signal received; stopping the scan and releasing what it holds (send it again to exit at once)"
	logDLQHeldUnknown = transport.LogHeldUnknown
	LogDLQForced      = "second signal; exiting at once, held messages stay invisible until their visibility timeout lapses"
	// LogDLQConnectStopping is logged (Warning) for a signal while the
	// command is still connecting to the broker: the connection attempt is
	// abandoned and nothing is read.
	LogDLQConnectStopping = "signal received while connecting to the broker; giving up the connection (send it again to exit at once)"
)

// signalWatch is the command's one subscription to SIGINT and SIGTERM,
// from the start of its run (RunWith) to its end, so a signal is handled
// in every phase, connecting included, and none is lost between phases.
type signalWatch struct {
	once        sync.Once
	sigs        <-chan os.Signal
	unsubscribe func()
}

// subscribe returns the run's signals (nil when o.Signals is nil),
// subscribing on the first call.
func (o *Options) subscribe() <-chan os.Signal {
	if o.Signals == nil {
		return nil
	}
	if o.watch == nil {
		o.watch = &signalWatch{}
	}
	o.watch.once.Do(func() { o.watch.sigs, o.watch.unsubscribe = o.Signals() })
	return o.watch.sigs
}

// HoldSignals subscribes to SIGINT and SIGTERM for a run (RunWith does it
// for the verbs it runs): from then on a signal is handled in every phase,
// connecting included. release ends the subscription at the run's end.
func (o *Options) HoldSignals() (release func()) {
	o.subscribe()
	return o.unsubscribe
}

// unsubscribe ends the run's subscription (RunWith's end).
func (o *Options) unsubscribe() {
	if o.watch != nil && o.watch.unsubscribe != nil {
		o.watch.unsubscribe()
	}
	o.watch = nil
}

// Interruptible returns a context that ends on the first SIGINT/SIGTERM,
// or when a write to Out fails because stdout's reader went away (logged
// as LogDLQStdoutGone); a second signal exits the process with
// ExitInterrupted at once. stop ends the watch.
func (o *Options) Interruptible(ctx context.Context, logger *slog.Logger) (context.Context, func()) {
	ictx, cancel := context.WithCancel(ctx)
	// A write to stdout whose reader went away stops the run as a first
	// signal does.
	o.stdout.init()
	go func() {
		select {
		case <-o.stdout.gone:
			logger.Warn(LogDLQStdoutGone)
			cancel()
		case <-ictx.Done():
		}
	}()
	sigs := o.subscribe()
	if sigs == nil {
		return ictx, cancel
	}
	wctx, done := cmdutil.WatchSignals(ictx, sigs, cmdutil.SignalWatch{Logger: logger, MergeWindow: o.MergeWindow, Merged: cmdutil.LogSignalMerged,
		Stopping: LogDLQStopping, Forced: LogDLQForced, Exit: o.Exit, Stopped: func() { o.receiving.sayAwaiting(logger) }})
	return wctx, func() {
		done()
		cancel()
	}
}

// OnSignals calls first on the run's first SIGINT/SIGTERM and second on
// each later one, until stop (which waits for a call under way to
// return); a signal within o.MergeWindow of the first is the
// same stop (timeout(1), a terminal's ^C to the process group), logged
// (Info) to logger as merged. It is for a run that handles signals its own
// way (the triage console): from then on the opens it makes do not watch
// signals (connecting). Without Signals it watches nothing.
func (o *Options) OnSignals(logger *slog.Logger, first, second func()) (stop func()) {
	sigs := o.subscribe()
	if sigs == nil {
		return func() {}
	}
	o.ownSignals.Store(true)
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		call := first
		var firstAt time.Time
		for {
			select {
			case <-sigs:
				if !firstAt.IsZero() && time.Since(firstAt) < o.MergeWindow {
					logger.Info(cmdutil.LogSignalMerged)
					continue
				}
				if firstAt.IsZero() {
					firstAt = time.Now()
				}
				call()
				call = second
			case <-finished:
				return
			}
		}
	}()
	return func() {
		close(finished)
		wg.Wait()
	}
}

// connecting returns a context for a connection to the broker (an open)
// that the first SIGINT/SIGTERM cancels; a second signal exits the process
// with ExitInterrupted at once. done ends the watch and reports whether a
// signal came: the caller then abandons the run with ConnectInterrupted.
// Without a signal cctx is not cancelled: what was opened with it may keep
// it (a client's streams) for as long as it is open.
func (o *Options) connecting(ctx context.Context, logger *slog.Logger) (cctx context.Context, done func() bool) {
	if o.ownSignals.Load() {
		// The run handles its signals itself (OnSignals): an open
		// during it is not a connect of the command's start.
		return ctx, func() bool { return false }
	}
	sigs := o.subscribe()
	if sigs == nil {
		return ctx, func() bool { return false }
	}
	return cmdutil.WatchSignals(ctx, sigs, cmdutil.SignalWatch{Logger: logger, MergeWindow: o.MergeWindow, Merged: cmdutil.LogSignalMerged,
		Stopping: LogDLQConnectStopping, Forced: LogDLQForced, Exit: o.Exit})
}

// ConnectInterrupted is the error of a run stopped by a signal while it
// was connecting to the broker for the destination url: exit code 130;
// nothing was read or changed.
func ConnectInterrupted(url string) error {
	return &cmdutil.ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s: interrupted while connecting to the broker; nothing was read or changed", url)}
}

// Interrupted is the error of a run stopped by a signal: exit code 130.
func Interrupted(what string) error {
	return &cmdutil.ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s: interrupted; every message read was made visible again", what)}
}

// LogDLQEditorStopping is logged (Warning) for a signal while dlq edit's
// editor is open: the editor is stopped (SIGTERM, then SIGKILL after
// EditorStopGrace) and nothing is sent.
const LogDLQEditorStopping = "signal received while the editor is open; stopping the editor, nothing is sent (send it again to exit at once)"

// EditorStopGrace is how long a stopped editor has to exit after its
// SIGTERM before it is killed (SIGKILL).
const EditorStopGrace = 300 * time.Millisecond

// LogDLQEditorInterruptIgnored is logged (Info) for a SIGINT while an
// editor runs on the terminal: the terminal sent it to the editor too
// (a ctrl+c typed into vi), and the editor decides what it means.
const LogDLQEditorInterruptIgnored = "SIGINT while the editor has the terminal; left to the editor (SIGTERM stops the edit)"

// Editing returns a context for the time an editor is open (dlq edit)
// that the first SIGINT/SIGTERM cancels (logged as LogDLQEditorStopping);
// a second signal, later than o.MergeWindow after it, exits the process
// with ExitInterrupted at once. done ends the watch and reports whether a
// signal came.
//
// With onTerminal (the editor runs in the terminal's foreground process
// group, as brighter does), SIGINT is passed over while the editor runs,
// as git does: a ctrl+c typed into the editor reaches both, and is the
// editor's to handle. SIGTERM (and SIGINT sent by kill to an editor off a
// terminal) still stops the edit.
func (o *Options) Editing(ctx context.Context, logger *slog.Logger, onTerminal bool) (ectx context.Context, done func() bool) {
	sigs := o.subscribe()
	if sigs == nil {
		return ctx, func() bool { return false }
	}
	stopFilter := func() {}
	if onTerminal {
		sigs, stopFilter = passOverInterrupts(sigs, logger)
	}
	ectx, watchDone := cmdutil.WatchSignals(ctx, sigs, cmdutil.SignalWatch{Logger: logger, MergeWindow: o.MergeWindow, Merged: cmdutil.LogSignalMerged,
		Stopping: LogDLQEditorStopping, Forced: LogDLQForced, Exit: o.Exit})
	return ectx, func() bool {
		signalled := watchDone()
		stopFilter()
		return signalled
	}
}

// passOverInterrupts forwards every signal of sigs but SIGINT (logged as
// LogDLQEditorInterruptIgnored) until stop is called; stop waits for the
// forwarder to end, so no later signal of sigs is taken from the run's
// next phase.
func passOverInterrupts(sigs <-chan os.Signal, logger *slog.Logger) (<-chan os.Signal, func()) {
	out := make(chan os.Signal, 1)
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-quit:
				return
			case s := <-sigs:
				if s == os.Interrupt {
					logger.Info(LogDLQEditorInterruptIgnored)
					continue
				}
				select {
				case out <- s:
				case <-quit:
					return
				}
			}
		}
	}()
	return out, func() { close(quit); <-ended }
}

// RunStoppable runs c (an editor) until it exits or ctx ends; then c is
// sent SIGTERM and, when it has not exited EditorStopGrace later, killed.
// With group (stdin is not a terminal, so c needs no terminal's
// foreground) c runs in a process group of its own and the signals go to
// the whole group: what c started (a script's children) stops too, and
// none keeps brighter's stderr open. A process of the group still alive
// EditorStopGrace after the SIGTERM is killed (SIGKILL to the group) even
// when c itself has exited (a shell that ran the editor dies at once,
// what ignores SIGTERM lives on), and RunStoppable returns once the group
// is gone (or, at the most, editorGroupGone after the SIGKILL). On a
// terminal c stays in brighter's group (a terminal editor must be in the
// foreground group to read it) and only c is signalled. It returns c's
// error (ctx's when ctx ended first).
func RunStoppable(ctx context.Context, c *exec.Cmd, group bool) error {
	if group {
		ownGroup(c)
	}
	if err := c.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
	}
	stopEditor(c, false)
	grace := time.After(EditorStopGrace)
	if group {
		stopGroup(c, exited, grace)
		return ctx.Err()
	}
	select {
	case <-exited:
	case <-grace:
		stopEditor(c, true)
		<-exited
	}
	return ctx.Err()
}

// editorGroupGone bounds the wait for a stopped editor's process group to
// be gone after its SIGKILL.
const editorGroupGone = 2 * time.Second

// stopGroup ends the stop of c, run in a group of its own and sent
// SIGTERM: it waits for c to exit and its group to be gone until grace
// ends, then kills the group (SIGKILL) if any of it is alive, and waits for
// c and (at the most editorGroupGone) for the group to be gone.
func stopGroup(c *exec.Cmd, exited <-chan error, grace <-chan time.Time) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	waited := false
wait:
	for !waited || groupAlive(c) {
		select {
		case <-exited:
			waited = true
		case <-tick.C:
		case <-grace:
			break wait
		}
	}
	if !waited || groupAlive(c) {
		stopEditor(c, true)
		if !waited {
			<-exited
		}
		for gone := time.After(editorGroupGone); groupAlive(c); {
			select {
			case <-tick.C:
			case <-gone:
				return
			}
		}
	}
}
