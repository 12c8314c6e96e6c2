//go:build unix

package handler

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// runGroup is the process group of one exec run, led by the command's
// process (its pid is the group id). Ending it is SIGTERM to the whole
// group, then SIGKILL to the whole group once grace has passed since the
// SIGTERM: the same whoever ends it (the command's exit, its timeout, the
// pump's stop, consume's end through Groups), and never a second grace.
type runGroup struct {
	cmd   *exec.Cmd
	grace time.Duration

	mu     sync.Mutex
	termAt time.Time   // when SIGTERM was sent; zero before
	kill   *time.Timer // sends SIGKILL at termAt+grace while the leader runs
	killed atomic.Bool // the timer sent SIGKILL
}

// killGroup starts cmd in its own process group and makes a cancellation
// (timeout, or the pump's stop) end the whole group: SIGTERM now, SIGKILL
// after grace (runGroup.terminate). endGroup ends what is left of the
// group once the leader has exited.
func killGroup(cmd *exec.Cmd, grace time.Duration) *runGroup {
	g := &runGroup{cmd: cmd, grace: grace}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if !g.terminate(true) {
			return os.ErrProcessDone
		}
		return nil
	}
	return g
}

// pgid is the group's id: its leader's pid (0 before the leader started).
func (g *runGroup) pgid() int {
	if g.cmd.Process == nil {
		return 0
	}
	return g.cmd.Process.Pid
}

// terminate sends the group SIGTERM, once; with armKill it also arms
// SIGKILL to the group for grace after that SIGTERM (while the leader
// still runs, nobody else waits for the grace to pass). It reports whether
// the group had a process to signal.
func (g *runGroup) terminate(armKill bool) bool {
	pgid := g.pgid()
	if pgid <= 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.termAt.IsZero() {
		// A negative pid signals the group.
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return false
			}
		}
		g.termAt = time.Now()
	}
	if armKill && g.kill == nil {
		g.kill = time.AfterFunc(time.Until(g.termAt.Add(g.grace)), func() {
			g.killed.Store(syscall.Kill(-pgid, syscall.SIGKILL) == nil)
		})
	}
	return true
}

// killAt returns when the group is due SIGKILL (SIGTERM's time plus
// grace), stopping the armed timer: the caller sends it.
func (g *runGroup) killAt() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.kill != nil {
		g.kill.Stop()
	}
	return g.termAt.Add(g.grace)
}

// groupPollMin and groupPollMax bound endGroup's polling interval while it
// waits for the group to empty after SIGTERM.
const (
	groupPollMin = 2 * time.Millisecond
	groupPollMax = 50 * time.Millisecond
)

// endGroup ends the process group g, once its leader has exited (or, from
// Groups.End, while it may still run): every process left in it (a `cmd
// &` of a handler script) is sent SIGTERM unless a cancellation already
// sent it, and SIGKILL if any is still alive once grace has passed since
// that SIGTERM (then it waits up to killWait for the kill to land). A
// group that is already empty costs one kill(2). It reports how many
// signals the group was sent (0, 1 or 2) for the log. A group whose
// leader never started is left alone.
func endGroup(g *runGroup) int {
	if g == nil {
		return 0
	}
	pgid := g.pgid()
	if pgid <= 0 || !groupAlive(pgid) {
		g.killAt() // stop an armed SIGKILL: the group is gone
		if g.killed.Load() {
			return 2 // SIGTERM, then the armed SIGKILL
		}
		return 0
	}
	if !g.terminate(false) {
		return 0 // ESRCH: it emptied meanwhile
	}
	deadline := g.killAt()
	for wait := groupPollMin; time.Now().Before(deadline); wait = min(2*wait, groupPollMax) {
		if !groupAlive(pgid) {
			return 1
		}
		time.Sleep(min(wait, time.Until(deadline))) // poll interval; bounded by grace
	}
	if !groupAlive(pgid) {
		return 1
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	// SIGKILL is not delivered synchronously: wait (briefly; it cannot be
	// ignored) until the group is gone, so that nothing of it runs once
	// the message is settled.
	deadline = time.Now().Add(killWait)
	for wait := groupPollMin; groupAlive(pgid) && time.Now().Before(deadline); wait = min(2*wait, groupPollMax) {
		time.Sleep(wait) // poll interval; bounded by killWait
	}
	return 2
}
