package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
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
