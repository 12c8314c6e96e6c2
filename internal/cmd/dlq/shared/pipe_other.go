//go:build !linux

package shared

import (
	"context"
	"os"
)

// fdPipe is stdout as an inspect.Pipe where brighter cannot ask a pipe how
// much its reader has still to read (every system but Linux): it never
// waits and never sees the reader go, so an archive to a pipe removes a
// receive once the next one's records went into the pipe (and the last
// at the end).
type fdPipe struct{}

// newFdPipe is an fdPipe.
func newFdPipe(f *os.File, socket bool) *fdPipe { return &fdPipe{} }

// Present is always nil.
func (p *fdPipe) Present() error { return nil }

// Drained is always nil.
func (p *fdPipe) Drained(ctx context.Context) error { return nil }
