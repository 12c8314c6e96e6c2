package faultproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves line echo on 127.0.0.1 until t ends.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through a new connection to addr and returns how
// long the answer took, or an error (a read deadline of limit).
func roundTrip(addr string, limit time.Duration) (time.Duration, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(limit))
	start := time.Now()
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "ping\n" {
		return 0, io.ErrUnexpectedEOF
	}
	return time.Since(start), nil
}

// TestModes_PassForwardsLatencyDelaysBlackHoleHangsResetCuts: Pass forwards,
// Latency delays each way, BlackHole accepts and never answers, Reset cuts an
// open connection, and Pass forwards again afterwards.
func TestModes_PassForwardsLatencyDelaysBlackHoleHangsResetCuts(t *testing.T) {
	p, err := Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if _, err := roundTrip(p.Addr(), 5*time.Second); err != nil {
		t.Fatalf("pass: %v", err)
	}
	p.SetLatency(100 * time.Millisecond)
	p.SetMode(Latency)
	if d, err := roundTrip(p.Addr(), 5*time.Second); err != nil || d < 200*time.Millisecond {
		t.Fatalf("latency: %s, %v; want at least 200ms (100ms each way)", d, err)
	}
	p.SetMode(BlackHole)
	if _, err := roundTrip(p.Addr(), 300*time.Millisecond); err == nil {
		t.Fatal("black hole answered")
	}
	p.SetMode(Pass)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("before the reset: %v", err)
	}
	p.Reset()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("the connection survived the reset")
	}
	if _, err := roundTrip(p.Addr(), 5*time.Second); err != nil {
		t.Fatalf("pass after the reset: %v", err)
	}
}
