package gcp

import (
	"context"
	"strings"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc"

	"github.com/brightergo/brighter/internal/broker"
)

// TransportName is the transport's name in the subscriptions file, the
// transport label of the calls it counts.
const TransportName = "gcp"

// gcpCallKinds maps the Pub/Sub RPCs that move messages to their kind;
// every other RPC is broker.CallOther.
var gcpCallKinds = map[string]broker.CallKind{
	"Pull":              broker.CallReceive,
	"StreamingPull":     broker.CallReceive,
	"Acknowledge":       broker.CallAck,
	"ModifyAckDeadline": broker.CallVisibility,
	"Publish":           broker.CallPublish,
}

// rpcName is the method's own name: the last element of a gRPC full
// method name (/google.pubsub.v1.Subscriber/Acknowledge).
func rpcName(fullMethod string) string {
	return fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
}

// rpcKind is the kind of the Pub/Sub RPC op.
func rpcKind(op string) broker.CallKind {
	if k, ok := gcpCallKinds[op]; ok {
		return k
	}
	return broker.CallOther
}

// rpcChannel is the short name of the subscription or topic a request
// names: its subscription or topic field; else, for the admin calls, the
// resource it creates or updates (a Topic or Subscription's name, an IAM
// call's resource); "" when it names none.
func rpcChannel(req any) string {
	if r, ok := req.(*pubsubpb.Subscription); ok {
		return broker.ShortName(r.GetName()) // CreateSubscription: not its topic
	}
	if r, ok := req.(interface{ GetSubscription() string }); ok && r.GetSubscription() != "" {
		return broker.ShortName(r.GetSubscription())
	}
	if r, ok := req.(interface{ GetTopic() string }); ok && r.GetTopic() != "" {
		return broker.ShortName(r.GetTopic())
	}
	if r, ok := req.(interface{ GetName() string }); ok && r.GetName() != "" {
		return broker.ShortName(r.GetName())
	}
	if r, ok := req.(interface{ GetResource() string }); ok && r.GetResource() != "" {
		return broker.ShortName(r.GetResource())
	}
	return ""
}

// CountCalls returns the gRPC dial options that count every Pub/Sub call a
// client sends into calls, with interceptors on its connections: each
// unary RPC attempt (Pull, Acknowledge, ModifyAckDeadline, Publish, the
// admin calls) is one call; a StreamingPull stream is one receive call when
// it opens (counted at its first request, which names the subscription),
// and each later request on it that carries acknowledgements or deadline
// changes is one ack or visibility call (the client library sends those as
// unary RPCs today, so a stream is usually counted once). Keep-alive
// requests on a stream are not counted.
func CountCalls(calls broker.CallCounter) []grpc.DialOption {
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		op := rpcName(method)
		calls.CountCall(broker.Call{Transport: TransportName, Channel: rpcChannel(req), Kind: rpcKind(op), Operation: op})
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil {
			return nil, err
		}
		return &countedStream{ClientStream: s, op: rpcName(method), calls: calls}, nil
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}

// countedStream counts the calls a client stream carries (see CountCalls).
type countedStream struct {
	grpc.ClientStream
	op      string
	calls   broker.CallCounter
	channel string // the subscription, from the stream's first request
}

// SendMsg counts m's calls and sends it.
func (s *countedStream) SendMsg(m any) error {
	req, ok := m.(*pubsubpb.StreamingPullRequest)
	if !ok {
		return s.ClientStream.SendMsg(m)
	}
	if req.GetSubscription() != "" {
		s.channel = broker.ShortName(req.GetSubscription())
		s.calls.CountCall(broker.Call{Transport: TransportName, Channel: s.channel, Kind: rpcKind(s.op), Operation: s.op})
	}
	if len(req.GetAckIds()) > 0 {
		s.calls.CountCall(broker.Call{Transport: TransportName, Channel: s.channel, Kind: broker.CallAck, Operation: s.op})
	}
	if len(req.GetModifyDeadlineAckIds()) > 0 {
		s.calls.CountCall(broker.Call{Transport: TransportName, Channel: s.channel, Kind: broker.CallVisibility, Operation: s.op})
	}
	return s.ClientStream.SendMsg(m)
}
