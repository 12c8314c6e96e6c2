//go:build unix

package handler

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killGroup starts cmd in its own process group and makes a cancellation
// kill the whole group, so that children the command started die with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group id is the leader's pid; a negative pid signals the group.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return os.ErrProcessDone
			}
			return err
		}
		return nil
	}
}
