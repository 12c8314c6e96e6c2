//go:build linux

package cmdtest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startChild starts cmd with a parent-death signal: when this test binary
// exits however it exits (go test -timeout, SIGKILL, a crash), the kernel
// sends the process SIGKILL. Linux sends the signal when the OS thread that
// started the child exits, not the process, so a goroutine of its own
// locks its thread from Start until Wait returns: the Go runtime never ends
// a locked thread while its goroutine still holds it, so the signal fires
// only when the test binary dies (TestStartChild_OutlivesTheThreadThatAskedForIt).
func startChild(cmd *exec.Cmd) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started, done := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
