package consume

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// Supervisor turns the stop requests of a consume run into its end: the
// first request (a signal, or q on the dashboard) stops receiving and lets
// the pumps drain; a second one cuts the handlers off, waits up to Grace
// for the pumps, gives the terminal back and exits the process with
// cmdutil.ExitFailure. A signal within MergeWindow of the first signal is
// the same stop (timeout(1) signals the command and then its process
// group). A run that stops for a reason of its own (a pump failed,
// cancelling the run's context) takes the next request as the second.
//
// It knows nothing of cobra or the pumps: what it does is the functions it
// is given, so a test drives it with channels of its own.
type Supervisor struct {
	// Logger receives the stable texts of each request.
	Logger *slog.Logger
	// Signals delivers SIGINT and SIGTERM.
	Signals <-chan os.Signal
	// Quit delivers the dashboard's q (nil when there is no dashboard).
	Quit <-chan struct{}
	// Stop cancels the run's context: the pumps stop receiving and drain.
	Stop func()
	// CutOff cancels the running handlers (each pump's CutOff), on the
	// second request.
	CutOff func()
	// EndHandlers ends the process groups of the exec handlers still
	// running (handler.Groups.End), after the wait for the pumps and
	// before Exit: nothing a handler started outlives consume. nil does
	// nothing.
	EndHandlers func()
	// Restore gives the terminal back (the dashboard's kill) before Exit.
	Restore func()
	// Final writes the run's last line (the `brighter: ...` error line,
	// or the JSON record), after Restore and before Exit: the exit skips
	// the line a returned error would get. nil writes nothing.
	Final func(code int)
	// Exit ends the process (os.Exit) after the second request.
	Exit func(code int)
	// MergeWindow is how close to the first signal another is the same
	// stop; Grace is how long the second request waits for the pumps to
	// return before Exit.
	MergeWindow, Grace time.Duration

	forced, pumpsDone, finished, exited chan struct{}
}

// Start watches for stop requests until Finish. runCtx is the run's
// context: when it ends before any request (Stop called for a reason of
// the run's own), the next request is the second.
func (s *Supervisor) Start(runCtx context.Context) {
	s.forced, s.pumpsDone, s.finished, s.exited = make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	go s.watch(runCtx)
}

// PumpsDone says that every pump has returned: a forced stop waiting for
// them exits at once.
func (s *Supervisor) PumpsDone() { close(s.pumpsDone) }

// Forced reports whether a second request cut the run short (the run
// then ends in failure however the pumps returned).
func (s *Supervisor) Forced() bool {
	select {
	case <-s.forced:
		return true
	default:
		return false
	}
}

// AwaitExit waits until a forced stop has called Exit: after a second
// request the run must not end (and write its own last line) before the
// exit does. It returns only when Exit returns (a test's).
func (s *Supervisor) AwaitExit() { <-s.exited }

// Finish ends the watch: the run has returned.
func (s *Supervisor) Finish() { close(s.finished) }

func (s *Supervisor) watch(runCtx context.Context) {
	var first time.Time // when the first signal came; zero when none did
	select {
	case <-s.Signals:
		first = time.Now()
		s.Logger.Info(logConsumeStopping)
	case <-s.Quit:
		s.Logger.Info(logConsumeQuitKey)
	case <-runCtx.Done():
		// Draining for a reason of its own (a pump failed): a signal
		// or q from now on is the second one.
	case <-s.finished:
		return
	}
	s.Stop()
second:
	for {
		select {
		case <-s.Signals:
			if !first.IsZero() && time.Since(first) < s.MergeWindow {
				s.Logger.Info(logConsumeSignalMerged)
				continue
			}
			s.Logger.Warn(logConsumeForced)
		case <-s.Quit:
			s.Logger.Warn(logConsumeQuitForced)
		case <-s.finished:
			return
		}
		break second
	}
	close(s.forced)
	// Cancel the handlers first, so exec handlers' process groups are
	// killed and their messages released, and give them a moment to
	// return; then exit whatever is left.
	s.CutOff()
	select {
	case <-s.pumpsDone:
	case <-time.After(s.Grace):
	}
	if s.EndHandlers != nil {
		s.EndHandlers()
	}
	// Give the terminal back before the process ends, then say why it
	// ends.
	s.Restore()
	if s.Final != nil {
		s.Final(cmdutil.ExitFailure)
	}
	s.Exit(cmdutil.ExitFailure)
	close(s.exited)
}
