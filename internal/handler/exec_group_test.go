//go:build unix

package handler

import (
	"context"
	"github.com/brightergo/brighter/internal/polltest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/pump"
)

// readPid reads a process id a handler script wrote.
func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the handler wrote no pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file %s holds %q", path, b)
	}
	return pid
}

// requireGroupEnded fails unless no process of group pgid is alive now,
// without waiting: the handler returns only once its group has ended.
func requireGroupEnded(t *testing.T, pgid int, what string) {
	t.Helper()
	if groupAlive(pgid) {
		t.Fatalf("%s: a process of the handler's group %d is still alive after the handler returned", what, pgid)
	}
}

// TestExec_BackgroundChildEndsWithTheMessage: an exec handler whose
// command starts a background child and exits leaves nothing running once
// the message is settled: on exit 0 (Ack), on exit 75 (Defer), on a timeout
// and when the pump's stop cancels the run. The handler returns at once on
// exit (it does not wait for the child's hold on its output pipes).
func TestExec_BackgroundChildEndsWithTheMessage(t *testing.T) {
	cases := []struct {
		name    string
		body    string // after the background child started
		timeout time.Duration
		cancel  bool
		want    pump.Outcome
	}{
		{"exit 0", "exit 0", time.Minute, false, pump.Ack},
		{"exit 75", "exit 75", time.Minute, false, pump.Defer},
		{"timeout", "sleep 300", 300 * time.Millisecond, false, pump.Defer},
		{"stop", "touch \"$DIR/running\"; sleep 300", time.Minute, true, pump.Defer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			logger, lb := newTestLogger()
			cmd := script(t, dir, "s", `echo $$ > "$DIR/group"; sleep 300 & echo $! > "$DIR/child"; `+c.body)
			h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"DIR=" + dir}, Timeout: c.timeout, Logger: logger})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				go func() {
					deadline := time.Now().Add(10 * time.Second)
					for time.Now().Before(deadline) {
						if _, err := os.Stat(filepath.Join(dir, "running")); err == nil {
							cancel()
							return
						}
						time.Sleep(10 * time.Millisecond) // poll for the file
					}
				}()
			}
			start := time.Now()
			r := h(ctx, testMessage(0))
			if r.Outcome != c.want {
				t.Fatalf("outcome %v (%+v), want %v", r.Outcome, r, c.want)
			}
			if el := time.Since(start); c.name == "exit 0" && el > DefaultWaitDelay {
				t.Errorf("handler returned after %s: it waited for the background child's output pipes", el)
			}
			requireGroupEnded(t, readPid(t, filepath.Join(dir, "group")), c.name)
			waitGone(t, readPid(t, filepath.Join(dir, "child")))
			if c.name == "exit 0" {
				lb.find(t, msgExecGroupEnded)
			}
		})
	}
}

// TestExec_ChildIgnoringTermIsKilledAfterGrace: a background child
// that ignores SIGTERM is sent SIGKILL once KillGrace has passed. The script
// exits only once the child ignores SIGTERM, so the SIGTERM cannot land
// before the trap.
func TestExec_ChildIgnoringTermIsKilledAfterGrace(t *testing.T) {
	dir := t.TempDir()
	logger, lb := newTestLogger()
	cmd := script(t, dir, "s", `echo $$ > "$DIR/group"; (trap '' TERM; touch "$DIR/ignoring"; exec sleep 300) & echo $! > "$DIR/child"
while [ ! -e "$DIR/ignoring" ]; do sleep 0.01; done
exit 0`)
	grace := 300 * time.Millisecond
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"DIR=" + dir}, KillGrace: grace, Logger: logger})
	start := time.Now()
	if r := h(context.Background(), testMessage(0)); r.Outcome != pump.Ack {
		t.Fatalf("%+v", r)
	}
	if el := time.Since(start); el < grace {
		t.Errorf("handler returned after %s, before the %s grace: SIGKILL came without a grace period", el, grace)
	}
	requireGroupEnded(t, readPid(t, filepath.Join(dir, "group")), "TERM ignored")
	waitGone(t, readPid(t, filepath.Join(dir, "child")))
	if rec := lb.find(t, msgExecGroupEnded); rec["killed"] != true {
		t.Errorf("group-ended record %v, want killed=true", rec)
	}
}

// TestExec_StopEndsTermIgnoringGroupWithinGrace: a run whose command and
// background child both ignore SIGTERM, cut off by the pump's stop (its
// context cancelled), returns once KillGrace has passed since the
// SIGTERM, with its whole group gone: SIGKILL goes to the group, not to
// the command alone after WaitDelay with the grace starting again.
func TestExec_StopEndsTermIgnoringGroupWithinGrace(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "s", `trap '' TERM; echo $$ > "$DIR/group"; sleep 300 & echo $! > "$DIR/child"; touch "$DIR/running"; sleep 300`)
	grace := 500 * time.Millisecond
	groups := NewGroups()
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"DIR=" + dir}, Timeout: time.Minute, KillGrace: grace, WaitDelay: 3 * time.Second, Groups: groups})
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "running")); err == nil {
				cancelled = time.Now()
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond) // poll for the file
		}
	}()
	if r := h(ctx, testMessage(0)); r.Outcome != pump.Defer || r.Err == nil {
		t.Fatalf("%+v, want a deferral with the cut-off error", r)
	}
	if el := time.Since(cancelled); el < grace || el > grace+time.Second {
		t.Errorf("handler returned %s after the stop, want the %s grace and little more", el, grace)
	}
	requireGroupEnded(t, readPid(t, filepath.Join(dir, "group")), "stop")
	waitGone(t, readPid(t, filepath.Join(dir, "child")))
	if n := len(groups.live); n != 0 {
		t.Errorf("Groups holds %d runs after the handler returned, want none", n)
	}
}

// TestGroups_EndEndsRunsUnderWay: Groups.End, called while a run whose
// processes ignore SIGTERM is under way (its context never cancelled),
// returns only once that run's whole group is gone, and reports it.
func TestGroups_EndEndsRunsUnderWay(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "s", `trap '' TERM; echo $$ > "$DIR/group"; sleep 300 & echo $! > "$DIR/child"; touch "$DIR/running"; sleep 300`)
	groups := NewGroups()
	h := mustExec(t, ExecOptions{Command: cmd, Env: []string{"DIR=" + dir}, Timeout: time.Minute, KillGrace: 300 * time.Millisecond, Groups: groups})
	done := make(chan pump.Result, 1)
	go func() { done <- h(context.Background(), testMessage(0)) }()
	polltest.Until(t, 30*time.Second, "the handler's script running", func() bool {
		_, err := os.Stat(filepath.Join(dir, "running"))
		return err == nil
	})
	pgid := readPid(t, filepath.Join(dir, "group"))
	if n := groups.End(); n != 1 {
		t.Errorf("End reported %d groups, want 1", n)
	}
	requireGroupEnded(t, pgid, "End")
	waitGone(t, readPid(t, filepath.Join(dir, "child")))
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not return after its group was ended")
	}
}
