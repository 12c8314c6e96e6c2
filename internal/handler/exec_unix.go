//go:build unix

package handler

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// killGroup starts cmd in its own process group and makes a cancellation
// (timeout, or the pump's stop) send SIGTERM to the whole group; cmd's
// WaitDelay then kills the leader if it is still there, and endGroup ends
// what is left of the group.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group id is the leader's pid; a negative pid signals the group.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return os.ErrProcessDone
			}
			return err
		}
		return nil
	}
}

// groupPollMin and groupPollMax bound endGroup's polling interval while it
// waits for the group to empty after SIGTERM.
const (
	groupPollMin = 2 * time.Millisecond
	groupPollMax = 50 * time.Millisecond
)

// endGroup ends the process group cmd's leader led, once the leader has
// exited: every process it left behind (a `cmd &` of a handler script) is
// sent SIGTERM, and SIGKILL if any is still alive after grace (then it
// waits up to killWait for the kill to land). A group that
// is already empty costs one kill(2). It reports how many signals it sent
// (0, 1 or 2) for the log. cmd that never started is left alone.
func endGroup(cmd *exec.Cmd, grace time.Duration) int {
	if cmd.Process == nil || cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
		return 0
	}
	pgid := cmd.Process.Pid
	if !groupAlive(pgid) {
		return 0
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
		return 0 // ESRCH: it emptied meanwhile
	}
	deadline := time.Now().Add(grace)
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

// killWait bounds endGroup's wait for a SIGKILLed group to be gone.
const killWait = time.Second
