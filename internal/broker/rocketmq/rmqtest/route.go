package rmqtest

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
)

func (s *Server) route(topic string) []*v2.MessageQueue {
	out := make([]*v2.MessageQueue, s.opts.QueuesPerTopic)
	for i := range out {
		out[i] = &v2.MessageQueue{
			Topic:      &v2.Resource{Name: topic},
			Id:         int32(i),
			Permission: v2.Permission_READ_WRITE,
			Broker: &v2.Broker{Name: "rmqtest", Id: 0, Endpoints: &v2.Endpoints{
				Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: s.routePort()}},
			}},
			AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL, v2.MessageType_FIFO, v2.MessageType_DELAY},
		}
	}
	return out
}

// QueryRoute answers the topic's queues, all served here.
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	s.count("QueryRoute")
	if h := s.held("QueryRoute"); h != nil {
		return nil, h.Call(ctx)
	}
	name := req.GetTopic().GetName()
	if err := fire(&s.routeFault, name, ""); err != nil {
		return &v2.QueryRouteResponse{Status: faultStatus("injected query-route fault", err)}, nil
	}
	s.mu.Lock()
	exists := s.topics[name] != nil
	if !exists && s.opts.AutoCreateTopics {
		s.topicLocked(name)
		exists = true
	}
	s.mu.Unlock()
	if !exists {
		return &v2.QueryRouteResponse{Status: status(v2.Code_TOPIC_NOT_FOUND, "topic %s does not exist", name)}, nil
	}
	return &v2.QueryRouteResponse{Status: ok(), MessageQueues: s.route(name)}, nil
}

// Heartbeat answers OK.
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	s.count("Heartbeat")
	return &v2.HeartbeatResponse{Status: ok()}, nil
}

// Telemetry reads the client's Settings until the stream ends, recording a
// consumer group's long-polling timeout.
func (s *Server) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	s.count("Telemetry")
	for {
		cmd, err := stream.Recv()
		if err != nil {
			// EOF or a client going away: either ends the stream cleanly.
			return nil
		}
		sub := cmd.GetSettings().GetSubscription()
		if sub == nil || sub.GetGroup() == nil {
			continue
		}
		s.mu.Lock()
		g := s.groupLocked(sub.GetGroup().GetName())
		if lp := sub.GetLongPollingTimeout(); lp != nil {
			g.longPoll = lp.AsDuration()
		}
		maxAttempts, hide := g.max, s.hideRetryPolicy
		s.mu.Unlock()
		if hide {
			continue
		}
		// As a RocketMQ 5 proxy does (GrpcClientSettingsManager): answer a
		// consumer's Settings with them merged with the group's retry
		// policy, whose max_attempts is the group's maximum delivery attempts.
		answer := proto.Clone(cmd.GetSettings()).(*v2.Settings)
		answer.BackoffPolicy = &v2.RetryPolicy{MaxAttempts: int32(maxAttempts)}
		if err := stream.Send(&v2.TelemetryCommand{Status: ok(), Command: &v2.TelemetryCommand_Settings{Settings: answer}}); err != nil {
			return nil
		}
	}
}

// HideGroupRetryPolicy makes Telemetry stop (hide true) or resume
// answering a consumer's Settings with its group's retry policy, as a proxy
// that does not report it.
func (s *Server) HideGroupRetryPolicy(hide bool) {
	s.mu.Lock()
	s.hideRetryPolicy = hide
	s.mu.Unlock()
}
