//go:build !linux

package handler

import "os/exec"

// runWithParentDeath runs cmd. Only Linux has a parent-death signal, so
// elsewhere a handler process outlives a consume that is killed without
// stopping it (docs/handlers.md); a clean stop still kills its group.
// started is called once the process runs.
func runWithParentDeath(cmd *exec.Cmd, started func()) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	started()
	return cmd.Wait()
}
