package rmqtest

import (
	"context"
	"sync"
	"time"
)

// Hold records the calls a black hole held (HoldCalls).
type Hold struct {
	mu   sync.Mutex
	left []time.Duration
}

// hold waits until ctx (the server side of the call, carrying the client's
// deadline) ends, as a broker that accepts the call and never answers,
// recording the deadline it had left on arrival (0: none); a call with no
// deadline is let go after a minute, so the test fails on the record.
func (h *Hold) hold(ctx context.Context) error {
	var left time.Duration
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	h.mu.Lock()
	h.left = append(h.left, left)
	h.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return context.DeadlineExceeded
	}
}

// Deadlines returns, for each call held so far, the deadline it had left
// when it arrived (0: the call had no deadline).
func (h *Hold) Deadlines() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.left...)
}

// HoldCalls makes every call of the RPC method ("AckMessage",
// "ChangeInvisibleDuration" or "SendMessage") wait until the client's
// deadline ends, recording it in the returned Hold (issue 31: a black-holed
// endpoint per call kind); the call is counted but changes nothing.
// ReleaseCalls ends it.
func (s *Server) HoldCalls(method string) *Hold {
	h := &Hold{}
	s.holds.Store(method, h)
	return h
}

// ReleaseCalls stops holding method's calls; calls held already wait on.
func (s *Server) ReleaseCalls(method string) { s.holds.Delete(method) }

// held returns method's Hold, or nil when its calls are not held.
func (s *Server) held(method string) *Hold {
	if h, ok := s.holds.Load(method); ok {
		return h.(*Hold)
	}
	return nil
}

// AdvertisePort makes the routes the server answers name port on 127.0.0.1
// instead of its own (a fault proxy in front of it: issue 31's soak), so
// that the client's every call goes through the proxy, not only its first
// route query. 0 restores the server's own port.
func (s *Server) AdvertisePort(port int) { s.routed.Store(int32(port)) }

// routePort is the port routes name.
func (s *Server) routePort() int32 {
	if p := s.routed.Load(); p != 0 {
		return p
	}
	return int32(s.port)
}
