package shared

import (
	"fmt"
	"io"
	"sync"
	"syscall"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// LogDLQStdoutGone is logged (Warning) once when a write to stdout fails
// because its reader went away (EPIPE: a `| head` that read what it
// wanted): the run stops as at a first SIGINT/SIGTERM, releasing what it
// holds, and exits cmdutil.ExitBrokenPipe (141).
const LogDLQStdoutGone = "stdout's reader went away (broken pipe); stopping as at an interrupt and releasing what is held"

// stdoutWatch records that the run's stdout broke (outGuard) and tells
// the run's Interruptible contexts.
type stdoutWatch struct {
	once sync.Once
	gone chan struct{}
}

func (s *stdoutWatch) init() { s.once.Do(func() { s.gone = make(chan struct{}) }) }

// broke closes gone, once.
func (s *stdoutWatch) broke() {
	s.init()
	select {
	case <-s.gone:
	default:
		close(s.gone)
	}
}

// Out is the run's stdout for the verbs' reports and records: o.IO.Out,
// except that a write failing with EPIPE (its reader went away) also
// stops the run as a first signal does (the contexts of Interruptible
// end) and makes RunWith's error exit cmdutil.ExitBrokenPipe. Use o.IO.Out
// itself only to ask what stdout is (a file to fsync, a pipe).
func (o *Options) Out() io.Writer { return outGuard{w: o.IO.Out, o: o} }

// StdoutGone reports whether a write to Out failed because stdout's reader
// went away.
func (o *Options) StdoutGone() bool {
	o.stdout.init()
	select {
	case <-o.stdout.gone:
		return true
	default:
		return false
	}
}

// NoteStdoutGone records that stdout's reader went away when err is EPIPE
// (a write to stdout made without Out, as archive's to a pipe); it returns
// err.
func (o *Options) NoteStdoutGone(err error) error {
	if cmdutil.IsBrokenPipe(err) {
		o.stdout.broke()
	}
	return err
}

type outGuard struct {
	w io.Writer
	o *Options
}

func (g outGuard) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	return n, g.o.NoteStdoutGone(err)
}

// EndRun is the error a verb's run ends with, given err, what the verb
// returned: when stdout's reader went away during the run (a write to Out
// failed with EPIPE, or err is EPIPE), err with the broken pipe named,
// exit cmdutil.ExitBrokenPipe; else err. RunWith applies it; a verb with
// a RunE of its own (restore, edit) returns through it.
func (o *Options) EndRun(err error) error {
	if o.StdoutGone() || cmdutil.IsBrokenPipe(err) {
		return stdoutGoneErr(err)
	}
	return err
}

// stdoutGoneErr is the error of a run that stopped because stdout's reader
// went away: err (what the verb said of its stop) with the broken pipe
// named, exit cmdutil.ExitBrokenPipe.
func stdoutGoneErr(err error) error {
	if err == nil {
		err = fmt.Errorf("stopped")
	}
	if cmdutil.IsBrokenPipe(err) {
		return cmdutil.BrokenPipeErr(err)
	}
	return cmdutil.BrokenPipeErr(fmt.Errorf("%w; it stopped because stdout was closed by its reader (%w)", err, syscall.EPIPE))
}
