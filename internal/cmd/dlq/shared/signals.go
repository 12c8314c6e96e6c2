package shared

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/transport"
)

// ExitInterrupted is the exit code of a dlq command stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const ExitInterrupted = 130

// Stable log texts of the dlq commands' signal handling.
const (
	LogDLQStopping    = "signal received; stopping the scan and releasing what it holds (send it again to exit at once)"
	logDLQHeldUnknown = transport.LogHeldUnknown
	LogDLQForced      = "second signal; exiting at once, held messages stay invisible until their visibility timeout lapses"
)

// Interruptible returns a context that ends on the first SIGINT/SIGTERM;
// a second signal exits the process with exitInterrupted at once. stop ends
// the watch.
func (o *Options) Interruptible(ctx context.Context, logger *slog.Logger) (context.Context, func()) {
	ictx, cancel := context.WithCancel(ctx)
	if o.Signals == nil {
		return ictx, cancel
	}
	sigs, unsubscribe := o.Signals()
	finished := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		logger.Warn(LogDLQStopping)
		cancel()
		select {
		case <-sigs:
			logger.Warn(LogDLQForced)
			if o.Exit != nil {
				o.Exit(ExitInterrupted)
			}
		case <-finished:
		}
	}()
	return ictx, func() {
		close(finished)
		unsubscribe()
		cancel()
	}
}

// Interrupted is the error of a run stopped by a signal: exit code 130.
func Interrupted(what string) error {
	return &cmdutil.ExitError{Code: ExitInterrupted, Err: fmt.Errorf("%s: interrupted; every message read was made visible again", what)}
}
