//go:build !linux

package handler

import "os/exec"

// runWithParentDeath runs cmd. Only Linux has a parent-death signal, so
// elsewhere a handler process outlives a consume that is killed without
// stopping it (docs/handlers.md); a clean stop still kills its group.
func runWithParentDeath(cmd *exec.Cmd) error { return cmd.Run() }
