//go:build !unix

package handler

import "os/exec"

// killGroup leaves cmd's default cancellation (kill the process) in place:
// process groups are a Unix notion.
func killGroup(*exec.Cmd) {}
