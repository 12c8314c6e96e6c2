package consume

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// Stable log texts of a stop while consume is still connecting.
const (
	// logConsumeConnectStopping is logged (Warning) for a signal before
	// the pumps start: the channels being opened are given up and the
	// run ends without receiving anything.
	logConsumeConnectStopping = "signal received while connecting to the broker; stopping before any message is received (send it again to exit at once)"
	// logConsumeConnectForced is logged (Warning) for a second signal
	// while connecting: the process exits ExitInterrupted at once.
	logConsumeConnectForced = "second signal while connecting; exiting at once"
	// logConsumeConnectQuit is logged (Warning) for q on the dashboard of
	// consume --tui before the pumps start, as a signal then is.
	logConsumeConnectQuit = "dashboard quit while connecting to the broker; stopping before any message is received (press q again to exit at once)"
	// logConsumeConnectQuitForced is logged (Warning) for q again while
	// connecting: the process exits ExitInterrupted at once.
	logConsumeConnectQuitForced = "dashboard quit again while connecting; exiting at once"
)

// ExitInterrupted is consume's exit code for a second signal while it is
// still connecting to the broker (128 + SIGINT, as shells report it): no
// message was received, so none is left unsettled.
const ExitInterrupted = cmdutil.ExitInterrupted

// startupWatch watches sigs, and quit (the dashboard's q; nil without
// one), while the channels open, before the pumps start
// (cmdutil.WatchSignals): the first request cancels ctx (the opens under
// way give up) and a second, for a signal later than mergeWindow after a
// first signal, calls exit(ExitInterrupted) at once. done ends the watch,
// leaving sigs and quit to the Supervisor, and reports whether a request
// came: the run then ends with startupInterrupted. Without one the
// returned context is not cancelled: the channels opened with it may keep
// it while open.
func startupWatch(ctx context.Context, logger *slog.Logger, sigs <-chan os.Signal, quit <-chan struct{}, mergeWindow time.Duration, exit func(int)) (context.Context, func() bool) {
	return cmdutil.WatchSignals(ctx, sigs, cmdutil.SignalWatch{
		Logger: logger, Stopping: logConsumeConnectStopping, Forced: logConsumeConnectForced,
		MergeWindow: mergeWindow, Merged: logConsumeSignalMerged, Exit: exit,
		Quit: quit, QuitStopping: logConsumeConnectQuit, QuitForced: logConsumeConnectQuitForced,
	})
}

// startupInterrupted is the end of a run stopped by a signal while it was
// connecting (sub is the subscription being opened): exit 0, as any stop
// by a first signal, with a line saying that nothing was received.
func startupInterrupted(sub string) error {
	return &cmdutil.ExitError{Code: cmdutil.ExitOK, Err: fmt.Errorf("interrupted while connecting to the broker (subscription %s); stopped before any message was received", sub)}
}
