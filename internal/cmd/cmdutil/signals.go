package cmdutil

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StopSignals returns the signals a command takes as a stop request (the
// first stops cleanly, a second exits at once): SIGINT, SIGTERM, and SIGHUP,
// sent when the terminal it runs in closes or an ssh session drops (by
// default SIGHUP would end the process at once, with no clean-up). SIGHUP is
// left out when the process was started with it ignored (nohup):
// subscribing to it would undo that.
func StopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// ExitInterrupted is the exit code of a command ended at once by a second
// SIGINT or SIGTERM (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// SignalMergeWindow is how soon after the first SIGINT/SIGTERM another is
// the same stop, not a second signal: timeout(1) signals the command and
// then its whole process group, and a terminal's ^C reaches every process
// of the group, so one stop may arrive twice in the same moment. Every
// command that takes a second signal as "exit at once" merges within it.
const SignalMergeWindow = 500 * time.Millisecond

// LogSignalMerged is logged (Info) for a signal within SignalMergeWindow of
// the first.
const LogSignalMerged = "signal repeated at once; taken as the same stop (send it again to exit at once)"

// SignalWatch is how WatchSignals answers SIGINT/SIGTERM during one phase
// of a command (while it connects to the broker, while it scans).
type SignalWatch struct {
	// Logger takes the Warning and Info lines below.
	Logger *slog.Logger
	// Stopping is logged (Warning) on the first signal, which cancels the
	// phase's context.
	Stopping string
	// Forced is logged (Warning) on a second signal, before Exit.
	Forced string
	// MergeWindow: a signal this soon after the first is the same stop
	// (timeout(1), a terminal's ^C to the process group), logged (Info) as
	// Merged and not taken as a second one. 0: every later signal is a
	// second.
	MergeWindow time.Duration
	// Merged is the Info line of a merged signal.
	Merged string
	// Exit ends the process with ExitInterrupted on a second signal (nil:
	// a second signal is only logged).
	Exit func(code int)
	// Quit delivers the stop requests of a dashboard (its q; nil: none):
	// the first request, a signal or a q, stops the phase, a q logged as
	// QuitStopping (Warning); a later one, either, is the second (a q
	// logged as QuitForced, a signal as Forced; then Exit). Merging
	// applies to signals only.
	Quit                     <-chan struct{}
	QuitStopping, QuitForced string
	// Stopped, when not nil, is called after the first stop request's
	// line (a command says there what its stop still waits for).
	Stopped func()
}

// WatchSignals watches sigs for a phase: the first signal cancels the
// returned context (what the phase does with it gives up) and a second,
// later than w.MergeWindow after it, calls w.Exit(ExitInterrupted). done
// ends the watch (it may be called more than once) and reports whether a
// signal came. Without a signal the returned context is not cancelled by
// done: what was opened with it may keep it while open. A nil sigs is
// never signalled.
func WatchSignals(ctx context.Context, sigs <-chan os.Signal, w SignalWatch) (context.Context, func() (signalled bool)) {
	cctx, cancel := context.WithCancel(ctx)
	finished, interrupted := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		stopping, quit := w.Stopping, false
		select {
		case <-sigs:
		case <-w.Quit:
			stopping, quit = w.QuitStopping, true
		case <-finished:
			return
		}
		first := time.Now()
		close(interrupted)
		w.Logger.Warn(stopping)
		if w.Stopped != nil {
			w.Stopped()
		}
		cancel()
		for {
			forced := w.Forced
			select {
			case <-sigs:
				if !quit && time.Since(first) < w.MergeWindow {
					w.Logger.Info(w.Merged)
					continue
				}
			case <-w.Quit:
				forced = w.QuitForced
			case <-finished:
				return
			}
			w.Logger.Warn(forced)
			if w.Exit != nil {
				w.Exit(ExitInterrupted)
			}
			return
		}
	}()
	var once sync.Once
	return cctx, func() bool {
		once.Do(func() {
			close(finished)
			wg.Wait()
		})
		select {
		case <-interrupted:
			return true
		default:
			return false
		}
	}
}

// NotifySignals subscribes to the process's stop signals (StopSignals:
// SIGINT, SIGTERM, and SIGHUP unless started under nohup), or returns
// inject() when inject is not nil (factory.Factory.Signals: a test's
// channel): the channel the signals arrive on and the function that ends
// the subscription.
func NotifySignals(inject func() (<-chan os.Signal, func())) (<-chan os.Signal, func()) {
	if inject != nil {
		return inject()
	}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, StopSignals()...)
	return ch, func() { signal.Stop(ch) }
}

// ExitFunc is inject (factory.Factory.Exit: a test's) or, when it is nil,
// os.Exit: what ends the process on a second signal.
func ExitFunc(inject func(code int)) func(code int) {
	if inject != nil {
		return inject
	}
	return os.Exit
}

// LogForced is the Warning of a second signal to a command that stops at
// the first (send, lint --live, demo): it exits ExitInterrupted at once.
const LogForced = "second signal; exiting at once"

// StopOnSignals is the signal handling of a command that does one job and
// stops at the first SIGINT/SIGTERM (send, lint --live, demo): the
// returned context ends at the first signal, logged (Warning) as stopping;
// a signal within SignalMergeWindow of it is the same stop (LogSignalMerged,
// Info); a later one logs LogForced and exits ExitInterrupted at once.
// inject and exit are factory.Factory.Signals and Exit (nil: the process's
// signals, os.Exit). signalled reports whether a signal has come (the
// command then ends with an ExitError of code ExitInterrupted saying what
// it did and did not do) and keeps watching, so a second signal during
// the command's clean-up still exits at once; stop, deferred by the
// command, ends the watch and the subscription.
func StopOnSignals(ctx context.Context, logger *slog.Logger, stopping string, inject func() (<-chan os.Signal, func()), exit func(code int)) (wctx context.Context, signalled func() bool, stop func()) {
	sigs, unsubscribe := NotifySignals(inject)
	wctx, done := WatchSignals(ctx, sigs, SignalWatch{Logger: logger, Stopping: stopping, Forced: LogForced,
		MergeWindow: SignalMergeWindow, Merged: LogSignalMerged, Exit: ExitFunc(exit)})
	var fired atomic.Bool
	var once sync.Once
	// Only a signal cancels wctx while ctx lives.
	signalled = func() bool {
		if wctx.Err() != nil && ctx.Err() == nil {
			fired.Store(true)
		}
		return fired.Load()
	}
	return wctx, signalled, func() {
		once.Do(func() {
			if done() {
				fired.Store(true)
			}
			unsubscribe()
		})
	}
}
