package shared

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestConnecting_DLQLinesAndExit: what the dlq verbs give the signal watch
// they keep while connecting (cmdutil.WatchSignals, whose behaviour
// TestWatchSignals tests): the run's own signals (Options.Signals), the
// dlq log lines for the stop and for a second signal, and Options.Exit,
// called with ExitInterrupted on the second.
func TestConnecting_DLQLinesAndExit(t *testing.T) {
	sigs := make(chan os.Signal) // a send returns once the watch took it
	exited := make(chan int, 1)
	o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, Exit: func(code int) { exited <- code }}
	defer o.unsubscribe()
	var log bytes.Buffer
	ctx, done := o.connecting(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))
	sigs <- syscall.SIGTERM
	sigs <- syscall.SIGINT
	if !done() || ctx.Err() == nil {
		t.Fatalf("done = false or the connection's context lives on (%v) after a signal", ctx.Err())
	}
	// done waited for the watch: its log and exit are written.
	for _, w := range []string{LogDLQConnectStopping, LogDLQForced} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("the log lacks %q:\n%s", w, log.String())
		}
	}
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Errorf("exit(%d), want %d", code, ExitInterrupted)
		}
	default:
		t.Errorf("a second signal did not exit")
	}
}

// TestConnecting_UnwatchedWhenTheRunTakesItsSignals: a connection does not
// watch signals when the run has none to watch (no Options.Signals) or
// handles them itself (OnSignals, the triage console): its context is the
// caller's, and a signal goes to the run's own handler, not to the
// connection.
func TestConnecting_UnwatchedWhenTheRunTakesItsSignals(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	t.Run("no signals", func(t *testing.T) {
		ctx, done := (&Options{}).connecting(context.Background(), quiet)
		if ctx != context.Background() || done() {
			t.Fatal("a run without signals watches them while connecting")
		}
	})
	t.Run("the run's own handler", func(t *testing.T) {
		sigs := make(chan os.Signal)
		o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, Exit: func(code int) { t.Errorf("exit(%d)", code) }}
		defer o.unsubscribe()
		handled := make(chan struct{}, 1)
		stop := o.OnSignals(quiet, func() { handled <- struct{}{} }, func() {})
		defer stop()
		ctx, done := o.connecting(context.Background(), quiet)
		sigs <- syscall.SIGTERM
		select {
		case <-handled:
		case <-time.After(5 * time.Second):
			t.Fatal("the run's handler did not get the signal")
		}
		if done() || ctx.Err() != nil {
			t.Fatalf("the connection took the run's signal (context: %v)", ctx.Err())
		}
	})
}

// TestEditing_TerminalEditorKeepsItsInterrupts: with the editor on the
// terminal, a SIGINT (a ctrl+c typed into the editor, which the terminal
// sends to brighter too) leaves the edit running and is logged; a SIGTERM
// then stops it. Off a terminal a SIGINT stops the edit at once.
func TestEditing_TerminalEditorKeepsItsInterrupts(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		sigs := make(chan os.Signal) // a send returns once it was taken
		o := &Options{Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, Exit: func(int) {}}
		var log bytes.Buffer
		ctx, done := o.Editing(context.Background(), slog.New(slog.NewTextHandler(&log, nil)), terminal)
		sigs <- syscall.SIGINT
		wait := 5 * time.Second // off a terminal: the stop comes
		if terminal {
			wait = 200 * time.Millisecond // on one: nothing comes
		}
		select {
		case <-ctx.Done():
			if terminal {
				t.Fatalf("a SIGINT stopped an edit whose editor has the terminal; log:\n%s", log.String())
			}
			if !done() {
				t.Errorf("off a terminal: done() = false after the SIGINT that stopped the edit")
			}
			o.unsubscribe()
			continue
		case <-time.After(wait):
			if !terminal {
				t.Fatalf("off a terminal a SIGINT left the edit running")
			}
		}
		sigs <- syscall.SIGTERM
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("a SIGTERM left the edit running after a passed-over SIGINT")
		}
		if !done() || !strings.Contains(log.String(), LogDLQEditorInterruptIgnored) || !strings.Contains(log.String(), LogDLQEditorStopping) {
			t.Errorf("on a terminal: want the SIGINT logged as passed over and the SIGTERM as the stop; log:\n%s", log.String())
		}
		o.unsubscribe()
	}
}
