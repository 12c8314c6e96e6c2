package shared

// exitInterrupted is the exit code of a dlq command stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const exitInterrupted = 130

// Stable log texts of the dlq commands' signal handling.
const (
	logDLQStopping    = "signal received; stopping the scan and releasing what it holds (send it again to exit at once)"
	logDLQHeldUnknown = transport.LogHeldUnknown
	logDLQForced      = "second signal; exiting at once, held messages stay invisible until their visibility timeout lapses"
)

// interruptible returns a context that ends on the first SIGINT/SIGTERM;
// a second signal exits the process with exitInterrupted at once. stop ends
// the watch.
func (o *dlqOptions) interruptible(ctx context.Context, logger *slog.Logger) (context.Context, func()) {
	ictx, cancel := context.WithCancel(ctx)
	if o.signals == nil {
		return ictx, cancel
	}
	sigs, unsubscribe := o.signals()
	finished := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		logger.Warn(logDLQStopping)
		cancel()
		select {
		case <-sigs:
			logger.Warn(logDLQForced)
			if o.exit != nil {
				o.exit(exitInterrupted)
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

// interrupted is the error of a run stopped by a signal: exit code 130.
func interrupted(what string) error {
	return &cmdutil.ExitError{Code: exitInterrupted, Err: fmt.Errorf("%s: interrupted; every message read was made visible again", what)}
}
