package rmqtest

import (
	"context"
	"slices"
	"strings"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
)

// defaultLongPoll is the long-polling timeout of a group whose Settings have
// not arrived yet and whose request carries no deadline.
const defaultLongPoll = time.Second

// clientRequestTimeout is the Go client's default request timeout, which it
// adds to the long-polling timeout to make the ReceiveMessage deadline.
const clientRequestTimeout = 3 * time.Second

// ReceiveMessage delivers visible messages of one queue to a consumer group;
// see the package comment.
func (s *Server) ReceiveMessage(req *v2.ReceiveMessageRequest, stream v2.MessagingService_ReceiveMessageServer) error {
	s.count("ReceiveMessage")
	ctx := stream.Context()
	if h := s.held("ReceiveMessage"); h != nil {
		return h.Call(ctx)
	}
	group := req.GetGroup().GetName()
	topic := req.GetMessageQueue().GetTopic().GetName()
	queue := req.GetMessageQueue().GetId()
	send := func(st *v2.Status, msgs []*v2.Message) error {
		if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}}); err != nil {
			return err
		}
		for _, m := range msgs {
			if err := stream.Send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := fire(&s.recvFault, topic, ""); err != nil {
		return send(faultStatus("injected receive fault", err), nil)
	}
	if group == "" {
		return send(status(v2.Code_ILLEGAL_CONSUMER_GROUP, "consumer group is empty"), nil)
	}
	fe := req.GetFilterExpression()
	if fe != nil && fe.GetType() == v2.FilterType_SQL {
		return send(status(v2.Code_ILLEGAL_FILTER_EXPRESSION, "rmqtest supports TAG filters only"), nil)
	}
	tags := parseTags(fe.GetExpression())
	invisible := req.GetInvisibleDuration().AsDuration()
	if invisible <= 0 {
		return send(status(v2.Code_ILLEGAL_INVISIBLE_TIME, "invisible duration must be positive"), nil)
	}
	batch := int(req.GetBatchSize())
	if batch <= 0 {
		batch = 1
	}

	s.mu.Lock()
	t := s.topics[topic]
	if t == nil || int(queue) < 0 || int(queue) >= len(t.queues) {
		s.mu.Unlock()
		return send(status(v2.Code_TOPIC_NOT_FOUND, "topic %s queue %d does not exist", topic, queue), nil)
	}
	g := s.groupLocked(group)
	pollEnd := s.pollEnd(ctx, g)
	s.mu.Unlock()

	for {
		s.mu.Lock()
		now := time.Now()
		msgs, next := s.deliverLocked(group, g, s.topics[topic].queues[queue], tags, batch, invisible, now)
		notify := s.notify
		s.mu.Unlock()
		if len(msgs) > 0 {
			s.delivered.Add(int64(len(msgs)))
			return send(ok(), msgs)
		}
		wait := time.Until(pollEnd)
		if wait <= 0 {
			return send(status(v2.Code_MESSAGE_NOT_FOUND, "no new message"), nil)
		}
		if !next.IsZero() && next.Sub(now) < wait {
			wait = max(next.Sub(now), time.Millisecond)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-notify:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// pollEnd is when a long poll ends: the group's long-polling timeout, bounded
// by the request deadline less the client's request timeout.
func (s *Server) pollEnd(ctx context.Context, g *groupState) time.Time {
	now := time.Now()
	end := now.Add(defaultLongPoll)
	if g.longPoll > 0 {
		end = now.Add(g.longPoll)
	}
	if dl, ok := ctx.Deadline(); ok {
		bound := dl.Add(-clientRequestTimeout)
		if g.longPoll <= 0 || bound.Before(end) {
			end = bound
		}
	}
	return end
}

// deliverLocked picks up to batch visible messages of one queue for group,
// making each invisible; next is the earliest future time at which something
// of this queue may become visible (zero for none).
func (s *Server) deliverLocked(group string, g *groupState, q []*stored, tags []string, batch int, invisible time.Duration, now time.Time) (out []*v2.Message, next time.Time) {
	blocked := map[string]bool{}
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, st := range q {
		d := g.state[st]
		if d == nil {
			d = &delivery{}
			g.state[st] = d
		}
		if d.done {
			continue
		}
		if !matchTag(tags, st.tag) {
			d.done = true
			continue
		}
		if st.group != "" && blocked[st.group] {
			continue
		}
		if now.Before(st.visibleAt) {
			later(st.visibleAt)
			if st.group != "" {
				blocked[st.group] = true
			}
			continue
		}
		if d.attempts > 0 && now.Before(d.invisibleUntil) {
			later(d.invisibleUntil)
			if st.group != "" {
				blocked[st.group] = true
			}
			continue
		}
		if int(d.attempts) >= g.max {
			s.deadLetterLocked(group, st, d)
			continue
		}
		if len(out) >= batch {
			break
		}
		if d.handle != "" {
			delete(s.handles, d.handle)
		}
		d.attempts++
		d.invisibleUntil = now.Add(invisible)
		d.handle = newHandle()
		s.handles[d.handle] = handleRef{group: group, s: st}
		m := proto.Clone(st.msg).(*v2.Message)
		sp := m.GetSystemProperties()
		h, a := d.handle, d.attempts
		sp.ReceiptHandle, sp.DeliveryAttempt = &h, &a
		sp.InvisibleDuration = nil
		out = append(out, m)
		if st.group != "" {
			blocked[st.group] = true
		}
	}
	return out, next
}

// parseTags reads a TAG expression ("*", "", "a || b"); nil means all.
func parseTags(expr string) []string {
	expr = strings.TrimSpace(expr)
	if expr == "" || expr == "*" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(expr, "||") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func matchTag(tags []string, tag string) bool {
	return tags == nil || slices.Contains(tags, tag)
}
