package rmqtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
)

type handleRef struct {
	group string
	s     *stored
}

// holdLocked finds the delivery a receipt handle still holds.
func (s *Server) holdLocked(group, handle string, now time.Time) (*stored, *delivery, *v2.Status) {
	ref, found := s.handles[handle]
	if !found || ref.group != group {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is invalid or stale")
	}
	d := s.groups[group].state[ref.s]
	if d == nil || d.done || d.handle != handle {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is stale")
	}
	if !now.Before(d.invisibleUntil) {
		return nil, nil, status(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is expired")
	}
	return ref.s, d, nil
}

// AckMessage removes messages for the group when their handles are current.
func (s *Server) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	s.count("AckMessage")
	if h := s.held("AckMessage"); h != nil {
		return nil, h.Call(ctx)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	resp := &v2.AckMessageResponse{Status: ok()}
	for _, e := range req.GetEntries() {
		var st *v2.Status
		if err := fire(&s.ackFault, topic, e.GetMessageId()); err != nil {
			st = faultStatus("injected ack fault", err)
		} else {
			s.mu.Lock()
			_, d, bad := s.holdLocked(group, e.GetReceiptHandle(), time.Now())
			if bad == nil {
				d.done = true
				delete(s.handles, d.handle)
				s.signalLocked()
				st = ok()
			} else {
				st = bad
			}
			s.mu.Unlock()
		}
		if st.GetCode() != v2.Code_OK {
			resp.Status = st
		}
		resp.Entries = append(resp.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st})
	}
	return resp, nil
}

// ChangeInvisibleDuration resets a held message's invisibility and issues a
// new receipt handle.
func (s *Server) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	s.count("ChangeInvisibleDuration")
	if h := s.held("ChangeInvisibleDuration"); h != nil {
		return nil, h.Call(ctx)
	}
	group, topic := req.GetGroup().GetName(), req.GetTopic().GetName()
	if err := fire(&s.changeFault, topic, req.GetMessageId()); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: faultStatus("injected change-invisible-duration fault", err), ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	dur := req.GetInvisibleDuration().AsDuration()
	if dur < 0 {
		return &v2.ChangeInvisibleDurationResponse{Status: status(v2.Code_ILLEGAL_INVISIBLE_TIME, "invisible duration is negative"), ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	st, d, bad := s.holdLocked(group, req.GetReceiptHandle(), now)
	if bad != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: bad, ReceiptHandle: req.GetReceiptHandle()}, nil
	}
	delete(s.handles, d.handle)
	// With 0 the message is visible at once and the new handle is already
	// expired, as on a real broker.
	d.invisibleUntil = now.Add(dur)
	d.handle = newHandle()
	s.handles[d.handle] = handleRef{group: group, s: st}
	s.signalLocked()
	return &v2.ChangeInvisibleDurationResponse{Status: ok(), ReceiptHandle: d.handle}, nil
}

func newHandle() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
