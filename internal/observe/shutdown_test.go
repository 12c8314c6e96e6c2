package observe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/polltest"
)

// startStoppable starts s on a free loopback port with a base context that
// never ends (as consume's does until the process exits), and returns its
// base URL and stop function.
func startStoppable(t *testing.T, s *Server) (string, func(context.Context) error) {
	t.Helper()
	addr, stop, err := s.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr, stop
}

// stopWithin calls stop with a context that never ends and fails the test
// when it has not returned within limit; it returns how long stop took
// and its error.
func stopWithin(t *testing.T, stop func(context.Context) error, limit time.Duration) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- stop(context.Background()) }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(limit):
		t.Fatalf("the server's stop did not return within %s", limit)
		return 0, nil
	}
}

// A stop ends every /events stream cleanly: each reader, NDJSON and SSE,
// is sent the records published before the stop, an SSE reader the closing
// comment, then the end of the response (no error reading to EOF); stop
// returns nil at once, well within its deadline, although the server's base
// context never ended.
func TestServerStop_EndsEventStreamsCleanly(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "ndjson", true: "sse"}[sse]
		t.Run(name, func(t *testing.T) {
			st := NewStream(64, 0)
			base, stop := startStoppable(t, &Server{Stream: st, Metrics: NewMetrics(), Health: NewHealth(), ShutdownTimeout: 5 * time.Second})
			req, err := http.NewRequest(http.MethodGet, base+"/events", nil)
			if err != nil {
				t.Fatal(err)
			}
			if sse {
				req.Header.Set("Accept", ContentTypeSSE)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			polltest.Until(t, 5*time.Second, "the stream's reader subscribed", func() bool { return st.Readers() == 1 })
			body := make(chan string, 1)
			readErr := make(chan error, 1)
			go func() {
				b, err := io.ReadAll(resp.Body)
				body <- string(b)
				readErr <- err
			}()
			// Published just before the stop: the reader still gets it.
			st.Observe(poisonEvents("orders")[0])

			took, err := stopWithin(t, stop, 4*time.Second)
			if err != nil {
				t.Fatalf("stop = %v, want nil: the stream ends by itself", err)
			}
			t.Logf("stop took %s", took)
			if took > time.Second {
				t.Errorf("stop took %s with one reader attached, want it at once", took)
			}
			got := <-body
			if err := <-readErr; err != nil {
				t.Fatalf("reading /events to its end: %v, want a clean end of stream; got:\n%s", err, got)
			}
			if !strings.Contains(got, `"kind":"received"`) {
				t.Errorf("the record published before the stop is missing:\n%s", got)
			}
			if sse && !strings.HasSuffix(got, SSEClosedComment) {
				t.Errorf("SSE stream ends with %q, want the closing comment %q", got[max(0, len(got)-60):], SSEClosedComment)
			}
			if !sse && strings.Contains(got, SSEClosedComment) {
				t.Errorf("NDJSON stream carries the SSE comment:\n%s", got)
			}
			polltest.Until(t, 5*time.Second, "the stream's reader gone", func() bool { return st.Readers() == 0 })
			if _, err := http.Get(base + "/healthz"); err == nil {
				t.Error("the listener still answers after stop")
			}
		})
	}
}

// A reader that connected and reads nothing, with records published until
// the server's writes to it block (its connection's buffers full), cannot
// hold a stop: stop returns within its ShutdownTimeout (plus a margin),
// although the caller's context has no deadline, saying the connection had
// to be closed, and the stream's reader is gone.
func TestServerStop_BoundedWithAReaderThatDoesNotRead(t *testing.T) {
	st := NewStream(16, 0)
	const timeout = 300 * time.Millisecond
	base, stop := startStoppable(t, &Server{Stream: st, ShutdownTimeout: timeout})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The response's head, then nothing more is read.
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("response line %q, %v", line, err)
	}
	polltest.Until(t, 5*time.Second, "the stream's reader subscribed", func() bool { return st.Readers() == 1 })

	big := Record{Kind: KindLog, Text: strings.Repeat("x", 256<<10)}
	// Flood: far more than loopback's socket buffers hold.
	for range 400 {
		st.Publish(big)
		time.Sleep(time.Millisecond)
	}
	// The handler is stuck writing once it no longer takes records that
	// come slower than it drains (one per two DrainIntervals): they are
	// dropped for it.
	stuck := false
	for i := 0; i < 10 && !stuck; i++ {
		before := st.Dropped()
		for range 20 {
			st.Publish(big)
			time.Sleep(2 * DrainInterval)
		}
		stuck = st.Dropped() > before
	}
	if !stuck {
		t.Fatal("the server's writes to a reader that does not read never blocked")
	}

	took, err := stopWithin(t, stop, timeout+3*time.Second)
	if err == nil {
		t.Error("stop = nil, want an error saying a connection had to be closed")
	}
	t.Logf("stop took %s: %v", took, err)
	polltest.Until(t, 5*time.Second, "the stream's reader gone", func() bool { return st.Readers() == 0 })
}
