package triage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/dlq/shared"
	"github.com/brightergo/brighter/internal/tui/triage"
)

// The console's run, from the terminal to the exit code: the log set up,
// the start-up read, the command's signals, and the wait for the actions
// under way once the console ends.

// runTriage opens the console on o.Dest and runs it until it quits.
func runTriage(ctx context.Context, o *Options) error {
	arg := o.Dest
	logIO := *o.IO
	logIO.ErrOut = io.Discard
	if o.logFile != "" {
		lf, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return cmdutil.UsageErr(fmt.Errorf("--log-file: %w", err))
		}
		defer lf.Close()
		logIO.ErrOut = lf
	}
	logger, err := o.Factory.LoggerTo(logIO.ErrOut)
	if err != nil {
		return err
	}
	if _, err := o.Filter(); err != nil {
		return err
	}
	if !o.IO.OutTTY || !o.IO.InTTY {
		// Without a terminal the destination is still resolved first:
		// its refusals (and a signal while that connects) are said as
		// before the terminal's.
		if _, err := o.actions(ctx, arg, logger); err != nil {
			return err
		}
		return cmdutil.UsageErr(errors.New("triage is interactive and needs a terminal; use dlq stats, peek, replay, edit and archive in scripts"))
	}
	t, _, err := o.Target(arg)
	if err != nil {
		return err
	}
	getenv := func(k string) string {
		v, _ := o.IO.Getenv(k)
		return v
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The console draws from its first frame (triage.Starting): while the
	// destination is resolved and read for the first time it says which,
	// on which transport and endpoint, and for how long; q quits (exit 0)
	// and ctrl+c interrupts (exit 130) meanwhile too. A destination that
	// cannot be opened (a queue that does not exist) ends the console and
	// is reported as peek reports it, exit 1.
	model := triage.NewStarting(t.URL, string(t.S.Transport), t.Endpoint(getenv), time.Now(), o.Now)
	// Signals are the command's, as in every dlq command, not the
	// console's (which would take SIGTERM for q): the first ends the
	// console as ctrl+c does, a second exits at once.
	p := tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(o.IO.In), tea.WithOutput(o.IO.Out), tea.WithFPS(10), tea.WithoutSignalHandler())
	// actCtx bounds the console's reads and actions: the first signal
	// ends it at once (an action under way stops while the console
	// quits), and so does the console's end.
	actCtx, stopActs := context.WithCancel(ctx)
	defer stopActs()
	var signalled, forced, ended atomic.Bool
	forcedCh := make(chan struct{})
	var forceOnce sync.Once
	force := func() {
		forced.Store(true)
		logger.Warn(shared.LogDLQForced)
		p.Kill()
		forceOnce.Do(func() { close(forcedCh) })
	}
	stopSignals := sync.OnceFunc(o.OnSignals(logger, func() {
		if ended.Load() {
			// The console has already ended (q, ctrl+c) and waits for
			// an action it stopped: a signal now is the second stop.
			force()
			return
		}
		signalled.Store(true)
		logger.Warn(shared.LogDLQStopping)
		stopActs()
		p.Quit()
	}, force))
	defer stopSignals()
	// The start-up: the destination resolved and read once, then the
	// console shown with that read.
	var (
		a        *triageActions
		startErr error
	)
	started := make(chan struct{})
	go func() {
		defer close(started)
		if a, startErr = o.actions(ctx, arg, logger); startErr != nil {
			p.Send(triage.StartFailedMsg{})
			return
		}
		if o.logFile != "" {
			a.audit = o.auditLogger(logIO.ErrOut)
		}
		first, err := a.Load(actCtx)
		if err != nil {
			startErr = cmdutil.FailureErr(shared.Naming(a.t, "triage", err))
			p.Send(triage.StartFailedMsg{})
			return
		}
		p.Send(triage.ReadyMsg{Console: triage.New(actCtx, a, o.Now).WithDryRun(o.DryRun).WithRefresh(refreshPeriod(a.t, o.refresh, o.refreshSet)).WithSettle(o.settle).WithMessages(first)})
	}()
	final, err := p.Run()
	ended.Store(true)
	errForced := &cmdutil.ExitError{Code: shared.ExitInterrupted, Err: fmt.Errorf("triage %s: interrupted twice; exited at once, messages an action held stay invisible until --visibility lapses", t.URL)}
	if forced.Load() {
		return errForced
	}
	st, _ := final.(triage.Starting)
	_, console := st.Console()
	interrupted := signalled.Load() || st.Interrupted()
	failed := err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil
	// An action still under way (ctrl+c during a replay) stops: it finishes
	// the publishes and removes it has begun, releases what it holds and
	// writes its audit record; a start-up under way gives up. Signals are
	// still watched meanwhile: one now exits at once (force).
	cancel()
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		<-started
		if a != nil {
			a.running.Wait()
		}
	}()
	select {
	case <-waited:
	case <-forcedCh:
		return errForced
	}
	stopSignals()
	if forced.Load() {
		return errForced
	}
	switch {
	case failed:
		return cmdutil.FailureErr(fmt.Errorf("triage %s: %w", t.URL, err))
	case !console && interrupted:
		// ctrl+c or a signal while connecting: nothing was read.
		return shared.ConnectInterrupted("triage " + t.URL)
	case !console && st.Quit():
		return nil
	case !console && startErr != nil:
		return startErr
	case interrupted:
		// ctrl+c or a signal: what was held is released (above), and
		// the run ends as an interrupted dlq command does.
		return shared.Interrupted("triage " + t.URL)
	}
	return nil
}
