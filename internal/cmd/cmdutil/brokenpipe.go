package cmdutil

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// ExitBrokenPipe is the exit code of a command whose output's reader went
// away before it was done (a `| head` that read what it wanted): 141,
// 128 + SIGPIPE, the status a shell reports for a writer SIGPIPE killed,
// so a pipeline's `set -o pipefail` sees what it always saw. The command
// was not killed, though: it stopped as at an interrupt (a dlq command
// released what it held first) and said so on stderr.
const ExitBrokenPipe = 141

// HandleBrokenPipe makes a write to stdout or stderr whose reader has gone
// fail with EPIPE instead of killing the process: Go's runtime otherwise
// ends a program with SIGPIPE at such a write (os/signal, "SIGPIPE"),
// before it can release what it holds or say a word. It subscribes to
// SIGPIPE (the signals themselves are dropped; the write's EPIPE is what
// the command acts on) until stop. Child processes still start with
// SIGPIPE's default action.
func HandleBrokenPipe() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// IsBrokenPipe reports whether err is (or wraps) EPIPE: a write to a pipe
// or socket whose reader has gone.
func IsBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// BrokenPipeErr marks err, which IsBrokenPipe, as the end of a command
// whose output's reader went away: exit ExitBrokenPipe.
func BrokenPipeErr(err error) error { return &ExitError{Code: ExitBrokenPipe, Err: err} }
