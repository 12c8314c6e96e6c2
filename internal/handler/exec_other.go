//go:build !unix

package handler

import (
	"os/exec"
	"time"
)

// runGroup stands for a run's process group, which only Unix has.
type runGroup struct{}

// killGroup leaves cmd's default cancellation (kill the process) in place:
// process groups are a Unix notion.
func killGroup(*exec.Cmd, time.Duration) *runGroup { return nil }

// endGroup does nothing: without process groups the handler's children
// cannot be found (docs/handlers.md).
func endGroup(*runGroup) int { return 0 }

// pgid is 0: there is no group.
func (*runGroup) pgid() int { return 0 }

// terminate does nothing: there is no group to signal.
func (*runGroup) terminate(bool) bool { return false }
