//go:build unix && !linux

package handler

import "syscall"

// groupAlive reports whether group pgid has any process (zombies
// included: without /proc they cannot be told apart).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
