package rmqtest

import (
	"errors"
	"sync/atomic"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

// Fault makes an RPC fail on demand: a non-nil error makes the RPC answer
// INTERNAL_ERROR with the error's text, or the code of a *StatusError (an
// authentication failure, a too-large body, ...). topic and messageID name
// the message the call is about ("" for a receive or a route query).
type Fault func(topic, messageID string) error

// StatusError is an error a Fault returns to make the RPC answer Code
// instead of INTERNAL_ERROR (UNAUTHORIZED, FORBIDDEN,
// MESSAGE_BODY_TOO_LARGE, ...), with Message as the status message.
type StatusError struct {
	Code    v2.Code
	Message string
}

func (e *StatusError) Error() string { return e.Code.String() + ": " + e.Message }

// faultStatus is the status an RPC answers for a Fault's err: the code of
// a *StatusError, else INTERNAL_ERROR with what ("injected send fault")
// and err's text.
func faultStatus(what string, err error) *v2.Status {
	var se *StatusError
	if errors.As(err, &se) {
		return status(se.Code, "%s", se.Message)
	}
	return status(v2.Code_INTERNAL_ERROR, "%s: %v", what, err)
}

// FailSend installs (or, with nil, removes) a fault on SendMessage. The Go
// client retries a failed send up to three attempts in all.
func (s *Server) FailSend(f Fault) { s.sendFault.Store(&f) }

// FailAck installs (or removes) a fault on AckMessage. The Go client's Ack
// reports success even then (ADR 0003, decision 7); the message stays.
func (s *Server) FailAck(f Fault) { s.ackFault.Store(&f) }

// FailChangeInvisibleDuration installs (or removes) a fault on
// ChangeInvisibleDuration; the invisibility is left unchanged.
func (s *Server) FailChangeInvisibleDuration(f Fault) { s.changeFault.Store(&f) }

// FailReceive installs (or removes) a fault on ReceiveMessage: the
// receive answers the fault's status with no message (topic is the
// queue's topic, messageID "").
func (s *Server) FailReceive(f Fault) { s.recvFault.Store(&f) }

// FailQueryRoute installs (or removes) a fault on QueryRoute, which every
// client makes when it starts and every 30 s after (messageID "").
func (s *Server) FailQueryRoute(f Fault) { s.routeFault.Store(&f) }

func fire(p *atomic.Pointer[Fault], topic, id string) error {
	if f := p.Load(); f != nil && *f != nil {
		return (*f)(topic, id)
	}
	return nil
}
