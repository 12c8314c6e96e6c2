//go:build !unix

package handler

import (
	"os/exec"
	"time"
)

// killGroup leaves cmd's default cancellation (kill the process) in place:
// process groups are a Unix notion.
func killGroup(*exec.Cmd) {}

// endGroup does nothing: without process groups the handler's children
// cannot be found (docs/handlers.md).
func endGroup(*exec.Cmd, time.Duration) int { return 0 }
