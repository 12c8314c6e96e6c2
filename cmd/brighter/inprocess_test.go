package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// freeAddr returns a 127.0.0.1 address nothing listens on now: one the
// kernel just gave out and that was closed again, for a consume's --listen
// (or, left alone, a port every connection to is refused).
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// inProcessConsume is a `brighter consume` run in this test's process by
// runConsume: its stderr, its exit code once run returns, and whether it
// has.
type inProcessConsume struct {
	stderr *lockedBuffer
	code   chan int
	exited atomic.Bool
}

// runConsume runs `brighter consume --config cfg --listen addr` in a
// goroutine until ctx ends, with no stdin, stdout discarded and stderr
// kept; its exit code arrives on code.
func runConsume(ctx context.Context, cfg, addr string) *inProcessConsume {
	c := &inProcessConsume{stderr: &lockedBuffer{}, code: make(chan int, 1)}
	streams := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: c.stderr, Getenv: os.LookupEnv}
	go func() {
		c.code <- run(ctx, streams, []string{"consume", "--config", cfg, "--listen", addr})
		c.exited.Store(true)
	}()
	return c
}

// waitReady waits up to within for c's /readyz on addr to answer 200. When
// c exits first or is not ready in time it calls stop and fails the test,
// its message starting with what and ending with c's stderr.
func (c *inProcessConsume) waitReady(t *testing.T, addr string, within time.Duration, stop func(), what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !listening(addr) {
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
		time.Sleep(50 * time.Millisecond)
	}
}
