// Package faultproxy is fault injection for tests: Proxy, a
// small TCP proxy that injects network faults between a client and a
// broker (added latency, connection resets and a black hole: a host that
// accepts connections and never answers), for the soak harness; Hold, a
// black hole for single calls that a test server or interceptor catches;
// and Counter, a reverse proxy that counts the calls a broker is sent (SQS
// actions, gRPC methods), for consume's benchmarks and the call-count tests
// of internal/broker/sqs and internal/cmd/consume, and that can hold the
// calls of one name unanswered (lint --live's look-up deadline); and
// Silent, a listener that accepts connections and never answers (a broker
// or a watch target that says nothing). It is test support: only the
// emulators' test servers, the command tests' support and tests use it.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
//
// Imported by: internal/broker/gcp/gcptest, internal/broker/rocketmq/rmqtest, internal/cmd/cmdtest
package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is what the proxy does with traffic.
type Mode int32

const (
	// Pass forwards traffic unchanged.
	Pass Mode = iota
	// Latency delays each chunk of traffic, both ways, by the proxy's
	// latency (SetLatency).
	Latency
	// BlackHole accepts connections and reads what the client sends, but
	// forwards nothing and answers nothing; connections open before it was
	// switched on stop forwarding too.
	BlackHole
	// ResetNew accepts each new connection and resets it at once (a TCP
	// RST: the client reads "connection reset by peer"), as a proxy that
	// refuses connections; connections open before it was switched on
	// keep their mode (Reset closes them).
	ResetNew
)

// Proxy forwards TCP connections from its own address to a target.
type Proxy struct {
	ln      net.Listener
	target  string
	mode    atomic.Int32
	latency atomic.Int64 // nanoseconds

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	resets atomic.Int64
}

// Start listens on 127.0.0.1 (a free port) and forwards to target
// (host:port). Close stops it.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetMode switches the proxy to m; it applies to the traffic that follows.
func (p *Proxy) SetMode(m Mode) { p.mode.Store(int32(m)) }

// SetLatency sets the delay of Latency mode.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// Reset closes every connection open now (both sides), as a connection
// reset does; new connections are accepted as before.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		_ = c.Close()
	}
	p.resets.Add(1)
}

// Resets is how many times Reset was called.
func (p *Proxy) Resets() int64 { return p.resets.Load() }

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Reset()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve forwards one client connection.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	switch Mode(p.mode.Load()) {
	case BlackHole:
		_, _ = io.Copy(io.Discard, client) // until the client or a Reset closes it
		return
	case ResetNew:
		if tc, ok := client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // Close sends RST
		}
		_ = client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				switch Mode(p.mode.Load()) {
				case BlackHole:
					continue // swallowed: nothing reaches the other side
				case Latency:
					time.Sleep(time.Duration(p.latency.Load()))
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					if tc, ok := dst.(*net.TCPConn); ok {
						_ = tc.CloseWrite()
					}
				}
				return
			}
		}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	// One direction ended: close both so the other ends too.
	_ = client.Close()
	_ = server.Close()
	<-done
}
