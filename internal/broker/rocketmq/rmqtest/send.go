package rmqtest

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
)

// SendMessage stores each message; see the package comment.
func (s *Server) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	s.count("SendMessage")
	if h := s.held("SendMessage"); h != nil {
		return nil, h.Call(ctx)
	}
	resp := &v2.SendMessageResponse{Status: ok()}
	for _, m := range req.GetMessages() {
		topic, id := m.GetTopic().GetName(), m.GetSystemProperties().GetMessageId()
		if err := fire(&s.sendFault, topic, id); err != nil {
			st := faultStatus("injected send fault", err)
			return &v2.SendMessageResponse{Status: st, Entries: []*v2.SendResultEntry{{Status: st, MessageId: id}}}, nil
		}
		s.mu.Lock()
		if s.topics[topic] == nil && !s.opts.AutoCreateTopics {
			s.mu.Unlock()
			st := status(v2.Code_TOPIC_NOT_FOUND, "topic %s does not exist", topic)
			return &v2.SendMessageResponse{Status: st, Entries: []*v2.SendResultEntry{{Status: st, MessageId: id}}}, nil
		}
		st := s.storeLocked(topic, proto.Clone(m).(*v2.Message))
		s.signalLocked()
		s.mu.Unlock()
		resp.Entries = append(resp.Entries, &v2.SendResultEntry{Status: ok(), MessageId: id, Offset: st.offset})
	}
	return resp, nil
}
