//go:build linux

package handler

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runWithParentDeath runs cmd (already given its process group by
// killGroup) with a parent-death signal: if consume dies without stopping
// it, even by SIGKILL, the kernel sends the handler process SIGKILL (issue
// 13: orphaned handlers kept running after consume was killed). Linux
// sends the signal when the OS thread that started the child exits, not
// the process, so the goroutine locks its thread from Start until Wait
// returns: the Go runtime never ends a locked thread's life while its
// goroutine still holds it, so the signal fires only when the process dies.
// The handler's own children get no such signal; a clean stop still kills
// the whole group (killGroup).
func runWithParentDeath(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}
