package faultproxy

import (
	"net"
	"sync"
	"testing"
)

// Silent is a TCP listener on 127.0.0.1 that accepts every connection and
// never answers on it: a broker (or a /events endpoint) that a client
// connects to and then waits on until its own deadline.
type Silent struct {
	// URL is the listener's http:// URL (an SQS endpoint, a watch
	// target); Addr its HOST:PORT (a Pub/Sub or RocketMQ endpoint).
	URL, Addr string
	// Accepted receives once, when the first connection is accepted.
	Accepted <-chan struct{}
}

// NewSilent starts a Silent listener; the listener and every connection
// it holds are closed when t ends. It fails t when no port is free.
func NewSilent(t testing.TB) *Silent {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("silent listener: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if conns == nil {
				close(accepted)
			}
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return &Silent{URL: "http://" + l.Addr().String(), Addr: l.Addr().String(), Accepted: accepted}
}
