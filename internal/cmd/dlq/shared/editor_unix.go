//go:build unix

package shared

import (
	"os/exec"
	"syscall"
)

// ownGroup starts c in a process group of its own, so that stopping it
// stops what it started too (a script's sleep, an editor's helpers).
func ownGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopEditor sends sig (kill: SIGKILL, else SIGTERM) to c, or to its
// process group when it has one of its own.
func stopEditor(c *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if c.SysProcAttr != nil && c.SysProcAttr.Setpgid {
		_ = syscall.Kill(-c.Process.Pid, sig)
		return
	}
	_ = c.Process.Signal(sig)
}

// groupAlive reports whether a process of c's own process group is alive.
func groupAlive(c *exec.Cmd) bool { return syscall.Kill(-c.Process.Pid, 0) == nil }
