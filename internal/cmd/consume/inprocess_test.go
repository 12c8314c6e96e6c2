package consume_test

import (
	"context"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
)

// inProcessConsume is a `brighter consume` run in this test's process by
// runConsume: its stderr, its exit code once run returns, and whether it
// has.
type inProcessConsume struct {
	stderr *cmdtest.LockedBuffer
	code   chan int
	exited atomic.Bool
}

// runConsume runs `brighter consume --config cfg --listen addr` in a
// goroutine until ctx ends, with no stdin, stdout discarded and stderr
// kept; its exit code arrives on code.
func runConsume(ctx context.Context, cfg, addr string) *inProcessConsume {
	c := &inProcessConsume{stderr: &cmdtest.LockedBuffer{}, code: make(chan int, 1)}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: c.stderr, Getenv: os.LookupEnv}
	go func() {
		c.code <- run(ctx, streams, []string{"consume", "--config", cfg, "--listen", addr})
		c.exited.Store(true)
	}()
	return c
}

// addr returns the address c's observability listener bound, or "" until
// it has.
func (c *inProcessConsume) addr() string { return cmdtest.ListenedAddr(c.stderr.String()) }

// waitReady waits up to within for c's listener to start and its /readyz to
// answer 200, and returns the listener's address. When c exits first or is
// not ready in time it calls stop and fails the test, its message starting
// with what and ending with c's stderr.
func (c *inProcessConsume) waitReady(t *testing.T, within time.Duration, stop func(), what string) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if addr := c.addr(); addr != "" && cmdtest.Listening(addr) {
			return addr
		}
		select {
		case code := <-c.code:
			stop()
			t.Fatalf("%sconsume exited with %d; stderr:\n%s", what, code, c.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%snot ready within %s; stderr:\n%s", what, within, c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // poll interval
	}
}
