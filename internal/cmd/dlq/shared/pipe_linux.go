package shared

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pipeDrainPoll is the longest pause between two looks at how much of an
// archive a pipe's reader has still to read (the first is a millisecond,
// doubling).
const pipeDrainPoll = 50 * time.Millisecond

// fdPipe is the reader at the other end of stdout when stdout is a pipe or
// a socket (inspect.Pipe), on Linux: how many bytes it has not read yet is
// the pipe's FIONREAD (TIOCINQ; a socket's SIOCOUTQ, TIOCOUTQ: what the
// peer has not taken),
// and whether it is still there is poll(2) on the writing end (POLLERR
// once no reader holds a pipe, POLLHUP for a socket whose peer closed).
type fdPipe struct {
	f      *os.File
	unread uint
}

// newFdPipe is f, a pipe (socket false) or a socket, as an inspect.Pipe.
func newFdPipe(f *os.File, socket bool) *fdPipe {
	if socket {
		return &fdPipe{f: f, unread: unix.TIOCOUTQ}
	}
	return &fdPipe{f: f, unread: unix.TIOCINQ}
}

// pipeGone is the error of a reader that went away.
func pipeGone() error {
	return fmt.Errorf("stdout's reader went away: %w", syscall.EPIPE)
}

// Present reports (EPIPE) whether the reader has gone.
func (p *fdPipe) Present() error {
	fds := []unix.PollFd{{Fd: int32(p.f.Fd()), Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll stdout: %w", err)
		}
		break
	}
	if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
		return pipeGone()
	}
	return nil
}

// Drained waits until the reader has read every byte written so far.
func (p *fdPipe) Drained(ctx context.Context) error {
	pause := time.Millisecond
	for {
		n, err := unix.IoctlGetInt(int(p.f.Fd()), p.unread)
		if err != nil {
			return fmt.Errorf("ask stdout how much is unread: %w", err)
		}
		if n == 0 {
			return nil
		}
		if err := p.Present(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, pipeDrainPoll)
	}
}
