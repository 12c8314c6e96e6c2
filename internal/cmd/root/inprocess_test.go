package root

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/observe"
)

// freeAddr returns a 127.0.0.1 address nothing listens on now: one the
// kernel just gave out and that was closed again. Left alone, every
// connection to it is refused; a server started on it races every other
// process for it, so a consume's --listen takes anyListen instead and reads
// the port it got with listenedAddr (issue 33).
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

// anyListen is a consume's --listen in the tests: a port the kernel picks
// when the listener binds, so no other process can take it first.
const anyListen = "127.0.0.1:0"

// listenedAddr returns the host:port from the observability listener's
// start line (observe.LogListening) in a consume's logs, text or JSON, or
// "" while there is none.
func listenedAddr(logs string) string {
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, observe.LogListening) {
			continue
		}
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == observe.LogListening {
			return l.Addr
		}
		for _, f := range strings.Fields(line) {
			if a, ok := strings.CutPrefix(f, "addr="); ok {
				return strings.Trim(a, `"`)
			}
		}
	}
	return ""
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

// addr returns the address c's observability listener bound, or "" until
// it has.
func (c *inProcessConsume) addr() string { return listenedAddr(c.stderr.String()) }

// waitReady waits up to within for c's listener to start and its /readyz to
// answer 200, and returns the listener's address. When c exits first or is
// not ready in time it calls stop and fails the test, its message starting
// with what and ending with c's stderr.
func (c *inProcessConsume) waitReady(t *testing.T, within time.Duration, stop func(), what string) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if addr := c.addr(); addr != "" && listening(addr) {
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
