// Package cmdutil is what several commands share: the exit codes and the
// errors that carry them, the watch of SIGINT/SIGTERM during a phase of a
// command (WatchSignals), the groups of mutually exclusive flags, the
// -o/--output flag, flag completion, the duration-flag check, the
// positional-argument checks (NoArgs, ArgsBetween) and the loading of a
// subscriptions file. A helper used by one command lives in
// that command's package, not here.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/factory, internal/cmd/root
package cmdutil

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code int
	Err  error
}

// Error is the wrapped error's text.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ExitError) Unwrap() error { return e.Err }

// UsageErr marks err a usage or configuration error (exit 2).
func UsageErr(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// FailureErr marks err a runtime failure (exit 1).
func FailureErr(err error) error { return &ExitError{Code: ExitFailure, Err: err} }

// ExitCoded returns err with the exit code the transports' wiring chose: a
// transport.UsageError becomes a usage error (exit 2); any other error is
// returned as it is.
func ExitCoded(err error) error {
	var ee *ExitError
	var ue *transport.UsageError
	if err != nil && !errors.As(err, &ee) && errors.As(err, &ue) {
		return UsageErr(err)
	}
	return err
}

// AsExitError finds the exit code an error already chose: an ExitError in
// its chain, or a transport.UsageError (a usage error, exit 2) made by the
// transports' wiring.
func AsExitError(err error) (*ExitError, bool) {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee, true
	}
	var ue *transport.UsageError
	if errors.As(err, &ue) {
		return &ExitError{Code: ExitUsage, Err: err}, true
	}
	return nil, false
}

// WrapExit adds context to err, keeping the exit code an inner ExitError
// already chose (a seed file that does not parse is a usage error even when
// it surfaces while opening a channel), else using code.
func WrapExit(code int, err error, format string, args ...any) error {
	if ee, ok := AsExitError(err); ok {
		code, err = ee.Code, ee.Err
	}
	return &ExitError{Code: code, Err: fmt.Errorf(format+": %w", append(args, err)...)}
}

// PositiveDuration refuses a duration flag's value d of zero or less, a
// usage error (exit 2) naming the flag, the value and the valid range:
// "--NAME D: must be more than 0s" and, when bound is not empty, the
// upper bound in parentheses ("at most 12h on SQS"). Every duration flag
// of the commands goes through it before anything is opened: a negative
// --timeout would otherwise run a command with a deadline already past.
func PositiveDuration(name string, d time.Duration, bound string) error {
	if d > 0 {
		return nil
	}
	if bound != "" {
		bound = " (" + bound + ")"
	}
	return UsageErr(fmt.Errorf("--%s %s: must be more than 0s%s", name, config.FormatDuration(d), bound))
}

// FiniteFloat refuses a float flag's value v that is not a number (NaN) or
// is infinite, a usage error (exit 2) naming the flag and the value:
// "--NAME NaN: must be a finite number". pflag parses "NaN", "Inf" and
// "+Inf" as floats, and NaN compares false with every bound, so a range
// check alone lets it through (a --rate NaN replayed with no limit).
// Every float flag of the commands goes through it before its range check.
func FiniteFloat(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return UsageErr(fmt.Errorf("--%s %g: must be a finite number", name, v))
	}
	return nil
}
