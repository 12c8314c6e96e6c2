package dlqtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/polltest"
)

// PipeRun runs `brighter args...` (CrashCmd: fauxqs's credentials) with
// its stdout a pipe whose reader is read: read takes the reading end, reads
// what it wants and returns what it kept; the end is then closed, as a
// `| head` that exits closes it. It returns the exit code (-1 when a
// signal killed the process), what read kept, and stderr; t fails when
// the process still runs after a minute.
func PipeRun(t *testing.T, read func(r *os.File) []byte, args ...string) (code int, kept []byte, stderr string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := CrashCmd(t, args...)
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // when read failed the test; after Wait it does nothing
	_ = w.Close()
	kept = read(r)
	_ = r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("brighter %v still runs a minute after its stdout's reader left; stderr:\n%s", args[:2], errOut.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, kept, errOut.String()
}

// HeadLines is a PipeRun reader that behaves as a `head -n n` that reads
// only once brighter has written a receive's records and waits for them to
// be read (on Linux brighter waits for its stdout's pipe to drain before it
// receives again): it polls how much the pipe holds every
// polltest.Interval until it holds something and has stopped growing
// between two polls, failing the test if that takes longer than within,
// then reads once, a buffer of 64 KiB, and keeps the first n lines of
// that read, as head keeps n lines of the buffer it read and exits; when
// that read holds fewer than n lines it reads on, a read at a time.
// Elsewhere than on Linux it reads at once.
func HeadLines(t testing.TB, n int, within time.Duration) func(r *os.File) []byte {
	return func(r *os.File) []byte {
		t.Helper()
		last := -1
		if _, err := unread(r); err == nil {
			polltest.Until(t, within, "brighter's first records in the pipe, and no more coming", func() bool {
				held, err := unread(r)
				if err != nil {
					t.Fatal(err)
				}
				settled := held > 0 && held == last
				last = held
				return settled
			})
		}
		var kept []byte
		buf := make([]byte, 64*1024)
		for n > 0 {
			k, err := r.Read(buf)
			for _, b := range buf[:k] {
				if n == 0 {
					break
				}
				kept = append(kept, b)
				if b == '\n' {
					n--
				}
			}
			if err != nil {
				break
			}
		}
		return kept
	}
}
