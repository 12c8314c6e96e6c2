package gcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// Stable log message texts of the consumers (tests match them).
const (
	LogUndecodable = "Pub/Sub message could not be decoded; presenting it as unacceptable"
)

// maxAckDeadline is the longest ack deadline Pub/Sub accepts (600 s).
const maxAckDeadline = limits.PubSubMaxAckDeadline

// ConsumerOptions configures a PullConsumer or a StreamConsumer.
type ConsumerOptions struct {
	// Subscription is the subscription id in the client's project, or a full
	// projects/<p>/subscriptions/<s> name. Required.
	Subscription string
	// BufferSize is the most messages one Receive returns (pull: the Pull's
	// MaxMessages); values below 1 mean 1.
	BufferSize int
	// NoOfPerformers multiplies BufferSize into the stream consumer's flow
	// control (MaxOutstandingMessages); values below 1 mean 1.
	NoOfPerformers int
	// AckDeadline is the subscription's ack deadline, the lease of a pulled
	// message (makeChannels gives the subscription this value); 0 means
	// DefaultAckDeadline. The pull consumer reports it as its Lease and the
	// pump extends it with ModifyAckDeadline (lease.go); the stream consumer
	// bounds each of its client's extensions by it, so the stream's deadline
	// is the subscription's (MaxDurationPerAckExtension, 10..600 s).
	AckDeadline time.Duration
	// MaxExtension is how long the stream consumer's client keeps extending
	// a held message's lease (0 means the library's 60 min; a short value
	// lets a lease lapse in a test, AC-42). Ignored by the pull consumer,
	// whose deadlines the pump extends (AckDeadline).
	MaxExtension time.Duration
	// DeadLetterTopic is deadLetterRoutingKey: the topic a rejected message
	// is published to ("" for none).
	DeadLetterTopic string
	// InvalidTopic is invalidMessageRoutingKey: the topic an unacceptable
	// message is published to ("" falls back to DeadLetterTopic).
	InvalidTopic string
	// Topic is the topic the subscription is attached to (routingKey; an
	// id or a full name), the Router's source: a copy moved back to it
	// from the topic it was last dead-lettered to is routed there again
	// rather than held as a rejection cycle (broker.Router.Source). ""
	// holds it.
	Topic string
	// Logger receives the consumer's and the Router's records; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock used for rejection timestamps and for a missing
	// ce-time; nil means time.Now.
	Now func() time.Time
	// CloseTimeout bounds the stream consumer's Close: how long it waits
	// for its client to send the last acknowledgements and Nacks and end
	// the stream; 0 means DefaultCloseTimeout. Ignored by the pull
	// consumer, whose settlements are calls made before Close.
	CloseTimeout time.Duration
}

// DefaultCloseTimeout is the stream consumer's CloseTimeout when none is
// given (10 s: the client's final acknowledgements take milliseconds; the
// rest is for a loaded machine).
const DefaultCloseTimeout = 10 * time.Second

func (o *ConsumerOptions) normalise() {
	o.BufferSize = max(o.BufferSize, 1)
	o.NoOfPerformers = max(o.NoOfPerformers, 1)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
}

// SubscriptionName returns the full resource name of a subscription:
// projects/P/subscriptions/S for an id S of project P, a full name as it
// is.
func SubscriptionName(project, sub string) string {
	if strings.HasPrefix(sub, "projects/") {
		return sub
	}
	return "projects/" + project + "/subscriptions/" + sub
}

// topicName returns the full resource name of a topic.
func topicName(project, topic string) string {
	if strings.HasPrefix(topic, "projects/") {
		return topic
	}
	return "projects/" + project + "/topics/" + topic
}

// topicResolver returns the full resource name of a topic id or full name
// in project: the Router's Resolve, so that "orders" and
// "projects/P/topics/orders" are one topic.
func topicResolver(project string) func(string) string {
	return func(topic string) string { return topicName(project, topic) }
}

// transient reports whether a gRPC status is worth retrying after the
// pump's channelFailureDelay.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// SubscriptionGoneFix ends the error of a receive the service refused
// with NotFound: the subscription was deleted while consuming (or never
// made, under makeChannels: assume). The pump stops on it (exit 1).
const SubscriptionGoneFix = "the subscription does not exist (deleted while consuming?): recreate it (gcloud pubsub subscriptions create, with its topic and settings) or restart consume with makeChannels: create, which makes it as the file describes"

// channelError wraps a receive failure: transient ones in
// broker.ErrChannelFailure (the pump backs off and retries); a refused
// credential (Unauthenticated, PermissionDenied) in both
// broker.ErrChannelFailure and broker.ErrNotAuthorized, since a credential
// can be renewed or a permission granted while the consumer runs (the
// pump backs off, logs it at Error once per back-off and readiness
// turns 503 after stallAfter); NotFound with what to do
// (SubscriptionGoneFix); others as they are (the pump stops).
func channelError(sub string, err error) error {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("receive from %s: %w: %w: %w", sub, broker.ErrChannelFailure, broker.ErrNotAuthorized, err)
	case codes.NotFound:
		return fmt.Errorf("receive from %s: %w: %s", sub, err, SubscriptionGoneFix)
	}
	if transient(err) {
		return fmt.Errorf("receive from %s: %w: %w", sub, broker.ErrChannelFailure, err)
	}
	return fmt.Errorf("receive from %s: %w", sub, err)
}

// probeService makes the liveness probe: one GetSubscription of sub with
// ProbeTimeout as its own deadline (within ctx's) and no client-side retry.
// Any answer of the service counts, a refusal included (NotFound, a
// PermissionDenied of a credential allowed to consume but not to read the
// subscription, ResourceExhausted of a spent administrator quota): it
// returns nil then. It returns the call's error when the service did not
// answer: no answer within the deadline (DeadlineExceeded), no connection
// (Unavailable) or a call cancelled.
func probeService(ctx context.Context, client *pubsub.Client, sub string) error {
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	_, err := client.SubscriptionAdminClient.GetSubscription(pctx, &pubsubpb.GetSubscriptionRequest{Subscription: sub},
		gax.WithRetry(func() gax.Retryer { return nil }))
	if err == nil || pctx.Err() == nil && answered(err) {
		return nil
	}
	return err
}

// answered reports whether err, a call's error, is the service's own answer
// rather than the call not reaching it or not being answered in time.
func answered(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable, codes.Canceled, codes.Unknown:
		return false
	}
	return true
}

// probeFailed says how a probe (probeService's GetSubscription) that
// failed went: "got no answer within ProbeTimeout" only when it ran to its
// deadline; a connection that was reset or refused says so ("the
// connection was reset before an answer"), anything else that the service
// could not be reached. err itself follows in the failure's text.
func probeFailed(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return fmt.Sprintf("got no answer within %s", ProbeTimeout)
	case strings.Contains(msg, "connection reset"):
		return "found the connection reset before any answer"
	case strings.Contains(msg, "connection refused"):
		return "found the connection refused"
	}
	return "could not reach the service"
}

// unanswered wraps the failure of a receive the service did not answer
// (what says what went unanswered) in broker.ErrChannelFailure, whatever
// err's code: the pump backs off, and its stall clock runs from the
// receive's start.
func unanswered(sub, what string, err error) error {
	return fmt.Errorf("receive from %s: %w: %s: %w", sub, broker.ErrChannelFailure, what, err)
}

// decodeDelivery decodes one delivery and presents its count; an undecodable
// one becomes MT_UNACCEPTABLE with a Warning.
func decodeDelivery(ctx context.Context, o ConsumerOptions, sub string, w Wire, attempt *int) *message.Message {
	m, err := DecodeOrFailure(w, o.Now())
	if err != nil {
		o.Logger.WarnContext(ctx, LogUndecodable, "message_id", m.Header.MessageID, "pubsub_message_id", w.ID, "subscription", sub, "error", err)
	}
	present(m, attempt)
	return m
}

func seekNow(ctx context.Context, client *pubsub.Client, sub string) error {
	_, err := client.SubscriptionAdminClient.Seek(ctx, &pubsubpb.SeekRequest{Subscription: sub, Target: &pubsubpb.SeekRequest_Time{Time: timestamppb.Now()}})
	if err != nil {
		return fmt.Errorf("purge %s: %w", sub, err)
	}
	return nil
}

// ErrNoReceipt is returned when a message without this consumer's receipt is
// settled (it was not received here, or it is a routed copy).
var ErrNoReceipt = errors.New("pubsub: message has no receipt of this consumer")
