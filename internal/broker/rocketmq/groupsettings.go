package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/pkg/utils"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// ErrGroupSettingsNotReported is returned by GroupMaxDeliveryAttempts when
// the proxy did not send the consumer group's settings (its retry policy)
// before the deadline: the broker's maximum cannot be known.
var ErrGroupSettingsNotReported = errors.New("rocketmq: the proxy did not report the consumer group's retry policy")

// GroupSettingsWait bounds how long GroupMaxDeliveryAttempts waits for the
// proxy's answer (a proxy answers at once).
const GroupSettingsWait = 5 * time.Second

// GroupMaxDeliveryAttempts reads the broker-side maximum number of
// deliveries of a message to consumer group before RocketMQ dead-letters it
// to %DLQ%<group> (`lint --live`). A RocketMQ 5 proxy answers the
// Settings a simple consumer sends on the Telemetry stream with the group's
// retry policy: backoff_policy.max_attempts, the group's retryMaxTimes + 1
// (Apache RocketMQ's GrpcClientSettingsManager). The Go client keeps no
// trace of that answer, so this opens the Telemetry stream itself, through
// the client library's own connection (rmq.NewClientConn: its TLS) and
// request signing (rmq.Client.Sign), sends the Settings the library's
// SimpleConsumer would send for topic, reads the answer and closes the
// stream. It receives no message, so it takes nothing from the group.
//
// It connects and waits for the answer until ctx ends or GroupSettingsWait
// has passed, returning an error wrapping ErrGroupSettingsNotReported when
// none came (a proxy that does not send one), and an error naming the
// endpoint when the stream cannot be opened (an unreachable proxy, refused
// credentials; one that accepts the connection and never answers: ctx's
// error, wrapped, when ctx ends first).
func GroupMaxDeliveryAttempts(ctx context.Context, c Connection, group, topic string) (int, error) {
	if err := c.validate(); err != nil {
		return 0, err
	}
	if group == "" || topic == "" {
		return 0, errors.New("rocketmq: a consumer group and a topic are required")
	}
	ConfigureClientLog(c.ClientLogDir)
	access, err := utils.ParseTarget(c.Endpoint)
	if err != nil {
		return 0, fmt.Errorf("rocketmq: endpoint %s: %w", c.where(), err)
	}
	cli, err := rmq.NewClient(c.config(group))
	if err != nil {
		return 0, fmt.Errorf("rocketmq: client for %s: %w", c.where(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, GroupSettingsWait)
	defer cancel() // ends the stream
	// The dial ends with ctx too: a proxy that accepts the connection and
	// never answers holds it no longer than the caller allows.
	conn, err := rmq.NewClientConn(c.Endpoint, rmq.WithContext(ctx))
	if err != nil {
		return 0, fmt.Errorf("rocketmq: connect to %s: %w", c.where(), err)
	}
	defer func() { _ = conn.Close() }()
	stream, err := v2.NewMessagingServiceClient(conn.Conn()).Telemetry(cli.Sign(ctx))
	if err != nil {
		return 0, fmt.Errorf("rocketmq: telemetry stream to %s: %w", c.where(), err)
	}
	ns := c.Namespace
	consumer := v2.ClientType_SIMPLE_CONSUMER
	settings := &v2.Settings{
		ClientType: &consumer, AccessPoint: access, RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{
			Group: &v2.Resource{Name: group, ResourceNamespace: ns},
			Subscriptions: []*v2.SubscriptionEntry{{
				Topic:      &v2.Resource{Name: topic, ResourceNamespace: ns},
				Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: DefaultTagFilter},
			}},
			LongPollingTimeout: durationpb.New(DefaultAwaitDuration),
		}},
	}
	if err := stream.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: settings}}); err != nil {
		return 0, fmt.Errorf("rocketmq: send settings to %s: %w", c.where(), err)
	}
	for {
		cmd, err := stream.Recv()
		if err != nil {
			if code := status.Code(err); ctx.Err() != nil || errors.Is(err, io.EOF) || code == codes.DeadlineExceeded || code == codes.Canceled {
				return 0, fmt.Errorf("rocketmq: group %s at %s: %w", group, c.where(), ErrGroupSettingsNotReported)
			}
			return 0, fmt.Errorf("rocketmq: telemetry from %s: %w", c.where(), err)
		}
		if st := cmd.GetStatus(); st != nil && st.GetCode() != v2.Code_OK {
			return 0, fmt.Errorf("rocketmq: group %s at %s: %s: %s", group, c.where(), st.GetCode(), st.GetMessage())
		}
		got := cmd.GetSettings()
		if got.GetSubscription().GetGroup().GetName() == group && got.GetBackoffPolicy().GetMaxAttempts() > 0 {
			return int(got.GetBackoffPolicy().GetMaxAttempts()), nil
		}
	}
}
