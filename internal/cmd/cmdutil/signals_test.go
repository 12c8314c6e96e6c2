package cmdutil_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
)

// lockedLog is a log the watch's goroutine writes while the test reads.
type lockedLog struct{ cmdtest.LockedBuffer }

// count is how many records of level with message msg the log holds.
func (l *lockedLog) count(level, msg string) int {
	return strings.Count(l.String(), "level="+level+" msg="+msg+"\n")
}

// watched is one WatchSignals under test: its context, done, log and the
// exit codes its Exit was called with.
type watched struct {
	ctx    context.Context
	done   func() bool
	log    *lockedLog
	exited chan int
}

// watch starts WatchSignals on sigs with mergeWindow, logging to a fresh
// log; withExit gives it an Exit that records its code.
func watch(ctx context.Context, sigs <-chan os.Signal, mergeWindow time.Duration, withExit bool) *watched {
	w := &watched{log: &lockedLog{}, exited: make(chan int, 4)}
	sw := cmdutil.SignalWatch{Logger: slog.New(slog.NewTextHandler(w.log, nil)), Stopping: "stopping", Forced: "forced",
		MergeWindow: mergeWindow, Merged: "merged"}
	if withExit {
		sw.Exit = func(code int) { w.exited <- code }
	}
	w.ctx, w.done = cmdutil.WatchSignals(ctx, sigs, sw)
	return w
}

// send gives the watch s, failing t when it has not taken it within 5s
// (a watch that returned takes no more).
func send(t *testing.T, sigs chan<- os.Signal, s os.Signal) {
	t.Helper()
	select {
	case sigs <- s:
	case <-time.After(5 * time.Second):
		t.Fatalf("the watch did not take %v", s)
	}
}

// exitCode waits up to 5s for Exit and returns its code.
func (w *watched) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case code := <-w.exited:
		return code
	case <-time.After(5 * time.Second):
		t.Fatal("Exit was not called")
		return 0
	}
}

// TestWatchSignals is the one test of the signal watch every command's
// phases use (consume while it connects, the dlq verbs while they connect
// and scan); the commands' own tests check only the texts and exit they
// give it. The signal channel is unbuffered, so a send returns once the
// watch has taken the signal, and done waits for it to be handled.
func TestWatchSignals(t *testing.T) {
	t.Run("no signal: the context lives on, done says none came", func(t *testing.T) {
		w := watch(context.Background(), make(chan os.Signal), time.Minute, true)
		if first, again := w.done(), w.done(); first || again {
			t.Fatal("done reports a signal when none came")
		}
		if w.ctx.Err() != nil {
			t.Fatalf("the context ended without a signal: %v", w.ctx.Err())
		}
		if s := w.log.String(); s != "" {
			t.Errorf("logged without a signal:\n%s", s)
		}
	})
	t.Run("nil channel: never signalled", func(t *testing.T) {
		w := watch(context.Background(), nil, 0, true)
		if w.done() || w.ctx.Err() != nil {
			t.Fatalf("done = true or the context ended (%v) on a nil channel", w.ctx.Err())
		}
	})
	t.Run("first signal cancels the context and is logged", func(t *testing.T) {
		sigs := make(chan os.Signal)
		w := watch(context.Background(), sigs, time.Minute, true)
		send(t, sigs, syscall.SIGTERM)
		select {
		case <-w.ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the first signal did not cancel the context")
		}
		if first, again := w.done(), w.done(); !first || !again {
			t.Fatal("done reports no signal after one came (on either call)")
		}
		if n := w.log.count("WARN", "stopping"); n != 1 {
			t.Errorf("%d Warning records of the stop, want 1:\n%s", n, w.log)
		}
		if len(w.exited) != 0 {
			t.Errorf("a first signal called Exit(%d)", <-w.exited)
		}
	})
	t.Run("signals within the merge window are the same stop", func(t *testing.T) {
		sigs := make(chan os.Signal)
		w := watch(context.Background(), sigs, time.Minute, true)
		send(t, sigs, syscall.SIGTERM)
		send(t, sigs, syscall.SIGINT)
		send(t, sigs, syscall.SIGINT)
		if !w.done() {
			t.Fatal("done reports no signal")
		}
		if len(w.exited) != 0 {
			t.Fatalf("a signal within the merge window called Exit(%d)", <-w.exited)
		}
		if n := w.log.count("INFO", "merged"); n != 2 {
			t.Errorf("%d Info records of a merged signal, want 2:\n%s", n, w.log)
		}
		if strings.Contains(w.log.String(), "forced") {
			t.Errorf("a merged signal logged as a second one:\n%s", w.log)
		}
	})
	t.Run("a signal after the merge window exits 130", func(t *testing.T) {
		sigs := make(chan os.Signal)
		const window = 100 * time.Millisecond
		w := watch(context.Background(), sigs, window, true)
		send(t, sigs, syscall.SIGTERM)
		time.Sleep(window + 50*time.Millisecond) // the gap under test: past the merge window
		send(t, sigs, syscall.SIGINT)
		if code := w.exitCode(t); code != cmdutil.ExitInterrupted {
			t.Fatalf("Exit(%d), want %d", code, cmdutil.ExitInterrupted)
		}
		w.done()
		if n := w.log.count("WARN", "forced"); n != 1 {
			t.Errorf("%d Warning records of the second signal, want 1:\n%s", n, w.log)
		}
	})
	t.Run("no merge window: the next signal is a second one", func(t *testing.T) {
		sigs := make(chan os.Signal)
		w := watch(context.Background(), sigs, 0, true)
		send(t, sigs, syscall.SIGINT)
		send(t, sigs, syscall.SIGINT)
		if code := w.exitCode(t); code != cmdutil.ExitInterrupted {
			t.Fatalf("Exit(%d), want %d", code, cmdutil.ExitInterrupted)
		}
		w.done()
	})
	t.Run("no Exit: a second signal is only logged", func(t *testing.T) {
		sigs := make(chan os.Signal)
		w := watch(context.Background(), sigs, 0, false)
		send(t, sigs, syscall.SIGTERM)
		send(t, sigs, syscall.SIGTERM)
		if !w.done() {
			t.Fatal("done reports no signal")
		}
		if n := w.log.count("WARN", "forced"); n != 1 {
			t.Errorf("%d Warning records of the second signal, want 1:\n%s", n, w.log)
		}
	})
	t.Run("done leaves later signals to the next phase", func(t *testing.T) {
		sigs := make(chan os.Signal, 1)
		w := watch(context.Background(), sigs, 0, true)
		w.done()
		send(t, sigs, syscall.SIGTERM)
		time.Sleep(50 * time.Millisecond) // a window for what must NOT happen: the signal taken
		if len(sigs) != 1 || w.ctx.Err() != nil {
			t.Fatalf("a signal after done was taken (%d left) or cancelled the context (%v)", len(sigs), w.ctx.Err())
		}
	})
	t.Run("the parent's end ends the context, not as a signal", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		w := watch(parent, make(chan os.Signal), 0, true)
		cancel()
		<-w.ctx.Done()
		if w.done() {
			t.Fatal("done reports a signal when the parent ended")
		}
	})
}

// TestWatchSignals_QuitStopsLikeASignalAndASecondRequestForcesExit: a
// dashboard's q (SignalWatch.Quit) is a stop request like a signal: the first,
// logged as QuitStopping, cancels the context; a second request, q or a signal
// even within the merge window (merging is for a signal repeated by timeout(1)
// or a terminal), logs its Forced text and exits ExitInterrupted. Unread
// requests are left on the channel once done.
func TestWatchSignals_QuitStopsLikeASignalAndASecondRequestForcesExit(t *testing.T) {
	start := func(sigs <-chan os.Signal, quit <-chan struct{}) *watched {
		w := &watched{log: &lockedLog{}, exited: make(chan int, 4)}
		w.ctx, w.done = cmdutil.WatchSignals(context.Background(), sigs, cmdutil.SignalWatch{
			Logger: slog.New(slog.NewTextHandler(w.log, nil)), Stopping: "stopping", Forced: "forced",
			MergeWindow: time.Minute, Merged: "merged", Exit: func(code int) { w.exited <- code },
			Quit: quit, QuitStopping: "quit", QuitForced: "quit-forced"})
		return w
	}
	press := func(t *testing.T, quit chan<- struct{}) {
		t.Helper()
		select {
		case quit <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("the watch did not take q")
		}
	}
	t.Run("q then q", func(t *testing.T) {
		quit := make(chan struct{})
		w := start(make(chan os.Signal), quit)
		press(t, quit)
		select {
		case <-w.ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("q did not cancel the context")
		}
		press(t, quit)
		if code := w.exitCode(t); code != cmdutil.ExitInterrupted {
			t.Fatalf("Exit(%d), want %d", code, cmdutil.ExitInterrupted)
		}
		if !w.done() || w.log.count("WARN", "quit") != 1 || w.log.count("WARN", "quit-forced") != 1 {
			t.Fatalf("done false or the log lacks the q texts:\n%s", w.log)
		}
	})
	t.Run("q then a signal at once", func(t *testing.T) {
		quit, sigs := make(chan struct{}), make(chan os.Signal)
		w := start(sigs, quit)
		press(t, quit)
		send(t, sigs, syscall.SIGINT)
		if code := w.exitCode(t); code != cmdutil.ExitInterrupted || w.log.count("WARN", "forced") != 1 || w.log.count("INFO", "merged") != 0 {
			t.Fatalf("Exit(%d); a signal after q must be the second request, not merged:\n%s", code, w.log)
		}
	})
	t.Run("a q not taken stays for the next watcher", func(t *testing.T) {
		quit := make(chan struct{}, 1)
		w := start(make(chan os.Signal), quit)
		if w.done() {
			t.Fatal("done reports a request when none came")
		}
		quit <- struct{}{}
		if len(quit) != 1 {
			t.Fatal("a finished watch took q")
		}
	})
}
