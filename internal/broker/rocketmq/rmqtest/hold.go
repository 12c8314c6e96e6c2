package rmqtest

import "github.com/brightergo/brighter/internal/faultproxy"

// HoldCalls makes every call of the RPC method ("AckMessage",
// "ChangeInvisibleDuration", "SendMessage", "ReceiveMessage" or
// "QueryRoute") wait until the
// client's deadline ends, recording it in the returned Hold (a black-holed
// endpoint per call kind, to prove each call's own deadline); the call is
// counted but changes nothing. ReleaseCalls ends it.
func (s *Server) HoldCalls(method string) *faultproxy.Hold {
	h := &faultproxy.Hold{}
	s.holds.Store(method, h)
	return h
}

// ReleaseCalls stops holding method's calls; calls held already wait on.
func (s *Server) ReleaseCalls(method string) { s.holds.Delete(method) }

// held returns method's Hold, or nil when its calls are not held.
func (s *Server) held(method string) *faultproxy.Hold {
	if h, ok := s.holds.Load(method); ok {
		return h.(*faultproxy.Hold)
	}
	return nil
}

// AdvertisePort makes the routes the server answers name port on 127.0.0.1
// instead of its own (a fault proxy in front of it: the soak of docs/reliability.md), so
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
