package gcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

// TestProbeTopicIsValidatesFirstLookUp: the start-up probe made with a
// GetTopic of the subscription's topic (ProbeTopic) answers, in its one
// call, whether the topic exists, and validate given that answer
// (KnownTopics) makes no GetTopic of its own and reports exactly what it
// reports when it asks itself: nothing for a topic that exists, the same
// "channel does not exist" for one that does not.
func TestProbeTopicIsValidatesFirstLookUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1})
	for _, tc := range []struct {
		topic string
		found bool
	}{{"orders", true}, {"absent", false}} {
		before := e.faults.Calls("GetTopic")
		known, err := ProbeTopic(ctxT(t, 10*time.Second), e.client, tc.topic, 5*time.Second)
		name := topicName(e.project, tc.topic)
		if err != nil || len(known) != 1 || known[name] != tc.found {
			t.Fatalf("ProbeTopic(%s) = %v, %v; want {%s: %t}, nil", tc.topic, known, err, name, tc.found)
		}
		if n := e.faults.Calls("GetTopic") - before; n != 1 {
			t.Fatalf("ProbeTopic(%s) made %d GetTopic calls, want 1", tc.topic, n)
		}
		o := ChannelOptions{Topic: tc.topic, Subscription: "orders-sub", RequeueCount: -1, MakeChannels: broker.MakeValidate, Logger: e.log}
		asked := NewChannels(e.client, o).EnsureChannels(ctxT(t, 10*time.Second))
		o.KnownTopics = known
		before = e.faults.Calls("GetTopic")
		told := NewChannels(e.client, o).EnsureChannels(ctxT(t, 10*time.Second))
		if n := e.faults.Calls("GetTopic") - before; n != 0 {
			t.Errorf("validate told about %s made %d GetTopic calls, want 0", tc.topic, n)
		}
		if (asked == nil) != tc.found || errors.Is(asked, ErrChannelMissing) == tc.found {
			t.Errorf("validate of topic %s asking itself = %v", tc.topic, asked)
		}
		if (asked == nil) != (told == nil) || (asked != nil && asked.Error() != told.Error()) || errors.Is(told, ErrChannelMissing) != errors.Is(asked, ErrChannelMissing) {
			t.Errorf("validate of topic %s told by the probe = %v, want what it reports asking itself: %v", tc.topic, told, asked)
		}
	}
}

// TestProbeTopicFailsAsProbe: ProbeTopic's failures are Probe's. Refused
// credentials (Unauthenticated, or PermissionDenied on every GetTopic) fail
// at once with ErrNotAuthorized; any other answer means reachable and says
// nothing about the topic (validate asks it again).
func TestProbeTopicFailsAsProbe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied} {
		e.faults.FailCall("GetTopic", status.Error(code, "refused"))
		start := time.Now()
		known, err := ProbeTopic(ctxT(t, 10*time.Second), e.client, "orders", 5*time.Second)
		if !errors.Is(err, broker.ErrNotAuthorized) || status.Code(err) != code || known != nil {
			t.Fatalf("ProbeTopic with %s = %v, %v; want ErrNotAuthorized", code, known, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("ProbeTopic with %s took %s: a refusal must not be retried", code, d)
		}
	}
	e.faults.FailCall("GetTopic", status.Error(codes.Internal, "another answer"))
	if known, err := ProbeTopic(ctxT(t, 10*time.Second), e.client, "orders", 5*time.Second); err != nil || known != nil {
		t.Fatalf("ProbeTopic answered Internal = %v, %v; want nil, nil (reachable, nothing known)", known, err)
	}
	e.faults.FailCall("GetTopic", nil)
}

// TestProbeTopicRefusedForTheTopicAlone: a PermissionDenied on the
// subscription's topic alone (a topic in another project, a policy on the
// topic) is not taken for refused credentials: the probe is made again as
// Probe makes it, which the service answers (NotFound), so the command
// starts and validate asks about the topic itself, as before.
func TestProbeTopicRefusedForTheTopicAlone(t *testing.T) {
	t.Parallel()
	_, srv := gcptest.Start(t, "probe", nil, Connect)
	refused := topicName(srv.Project, "guarded")
	var asked []string
	deny := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*pubsubpb.GetTopicRequest); ok {
			asked = append(asked, r.GetTopic())
			if r.GetTopic() == refused {
				return status.Error(codes.PermissionDenied, "not on this topic")
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUnaryInterceptor(deny))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c, err := Connect(context.Background(), srv.Project, option.WithGRPCConn(conn), option.WithTelemetryDisabled())
	if err != nil {
		t.Fatal(err)
	}
	known, err := ProbeTopic(ctxT(t, 10*time.Second), c, "guarded", 5*time.Second)
	if err != nil || known != nil {
		t.Fatalf("ProbeTopic of a topic refused alone = %v, %v; want nil, nil", known, err)
	}
	if len(asked) != 2 || asked[0] != refused || asked[1] != topicName(srv.Project, "brighter-probe") {
		t.Fatalf("GetTopic calls %v, want the topic's and then Probe's", asked)
	}
}
