//go:build linux

package dlqtest

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// unread returns how many bytes the pipe whose reading end is r holds
// (FIONREAD, TIOCINQ on Linux).
func unread(r *os.File) (int, error) {
	n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
	if err != nil {
		return 0, fmt.Errorf("ask the pipe how much it holds: %w", err)
	}
	return n, nil
}
