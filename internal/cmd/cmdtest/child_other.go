//go:build !linux

package cmdtest

import "os/exec"

// startChild starts cmd; only Linux has a parent-death signal, so
// elsewhere the process may outlive a test binary that dies without
// stopping it.
func startChild(cmd *exec.Cmd) (<-chan error, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done, nil
}
