//go:build !unix

package shared

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(c *exec.Cmd) {}

// stopEditor kills c.
func stopEditor(c *exec.Cmd, kill bool) { _ = c.Process.Kill() }

// groupAlive reports false: there are no process groups.
func groupAlive(c *exec.Cmd) bool { return false }
