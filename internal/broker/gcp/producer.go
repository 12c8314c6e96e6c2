package gcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Connect makes a Pub/Sub client for project. When PUBSUB_EMULATOR_HOST is
// set the client library itself dials the emulator without credentials;
// opts (for example option.WithGRPCConn in tests) are passed on. It returns
// an error naming the project when the client cannot be made.
func Connect(ctx context.Context, project string, opts ...option.ClientOption) (*pubsub.Client, error) {
	c, err := pubsub.NewClient(ctx, project, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to Pub/Sub project %q: %w", project, err)
	}
	return c, nil
}

// ErrDelayUnsupported is returned by Send for a message with a delay:
// Pub/Sub has no delayed publish and Brighter's producer needs a scheduler
// for one (docs/wire-format.md#pubsub).
var ErrDelayUnsupported = errors.New("pubsub: delayed publish is not supported (no scheduler)")

// ProducerOptions configures a Producer.
type ProducerOptions struct {
	// EnableMessageOrdering publishes a message's PartitionKey as its
	// ordering key. Without it the ordering key is left empty (the Pub/Sub
	// client refuses ordering keys on a publisher without ordering).
	EnableMessageOrdering bool
	// DelayThreshold is how long the client batches publishes; 0 means 1 ms
	// (Send waits for its publish, so a long batch delay is latency).
	DelayThreshold time.Duration
	// PublishTimeout is the Publish RPC's own deadline (the client's
	// PublishSettings.Timeout): the client makes the RPC itself, under its
	// own context, so a caller's deadline ends only the wait for the result
	// (Publish returns at ctx's deadline) and the RPC runs on. A consumer's
	// routing producer gets the subscription's callTimeout, so the
	// dead-letter publish of a rejection ends at that bound on the wire too.
	// 0 means the client's default (60 s).
	PublishTimeout time.Duration
}

// Producer publishes messages in Brighter's Pub/Sub wire format. It
// implements broker.Producer and broker.Publisher (so a consumer's Router
// publishes routed copies with it). Safe for concurrent use. It does not own
// the client.
type Producer struct {
	client *pubsub.Client
	opts   ProducerOptions

	mu   sync.Mutex
	pubs map[string]*pubsub.Publisher
}

// NewProducer makes a Producer on client.
func NewProducer(client *pubsub.Client, opts ProducerOptions) *Producer {
	if opts.DelayThreshold <= 0 {
		opts.DelayThreshold = time.Millisecond
	}
	return &Producer{client: client, opts: opts, pubs: map[string]*pubsub.Publisher{}}
}

func (p *Producer) publisher(topic string) *pubsub.Publisher {
	p.mu.Lock()
	defer p.mu.Unlock()
	pub := p.pubs[topic]
	if pub == nil {
		pub = p.client.Publisher(topic)
		pub.EnableMessageOrdering = p.opts.EnableMessageOrdering
		pub.PublishSettings.DelayThreshold = p.opts.DelayThreshold
		if p.opts.PublishTimeout > 0 {
			pub.PublishSettings.Timeout = p.opts.PublishTimeout
		}
		p.pubs[topic] = pub
	}
	return pub
}

// Send publishes m to the topic m.Header.Topic (an id in the client's
// project or a full projects/<p>/topics/<t> name) and waits for the
// service's answer. A message with a delay returns ErrDelayUnsupported.
func (p *Producer) Send(ctx context.Context, m *message.Message) error {
	if m.Header.Delay > 0 {
		return fmt.Errorf("send message %s to %s: %w", m.Header.MessageID, m.Header.Topic, ErrDelayUnsupported)
	}
	return p.Publish(ctx, m.Header.Topic, m)
}

// Publish publishes m to topic, whatever m.Header.Topic says (the Router
// has already set it to the destination). It implements broker.Publisher.
// When a publish with an ordering key fails it resumes that key, so the next
// publish of the key is attempted rather than refused (a routing failure
// must not wedge later routings, R-19). It waits for the service's answer
// until ctx ends (the RPC itself has ProducerOptions.PublishTimeout). A message over Pub/Sub's limits is
// refused before the call (CheckLimits; the emulator would take it).
func (p *Producer) Publish(ctx context.Context, topic string, m *message.Message) error {
	w := Encode(m)
	if err := CheckLimits(w); err != nil {
		return fmt.Errorf("publish message %s to topic %s: %w", m.Header.MessageID, topic, err)
	}
	pm := &pubsub.Message{Data: w.Data, Attributes: w.Attributes}
	if p.opts.EnableMessageOrdering {
		pm.OrderingKey = w.OrderingKey
	}
	pub := p.publisher(topic)
	if _, err := pub.Publish(ctx, pm).Get(ctx); err != nil {
		if pm.OrderingKey != "" {
			pub.ResumePublish(pm.OrderingKey)
		}
		return classifyPublish(fmt.Errorf("publish message %s to topic %s: %w", m.Header.MessageID, topic, err))
	}
	return nil
}

// CheckDestination looks up, without publishing, the topic Publish would
// publish to (an id in the client's project or a full
// projects/<p>/topics/<t> name) with one GetTopic: nil when it exists, else
// the error (NotFound for a missing topic), naming the topic. A dry run uses
// it so that it refuses what the real run would.
func (p *Producer) CheckDestination(ctx context.Context, topic string) error {
	name := topic
	if !strings.HasPrefix(name, "projects/") {
		name = "projects/" + p.client.Project() + "/topics/" + topic
	}
	if _, err := p.client.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: name}); err != nil {
		return fmt.Errorf("topic %s: %w", name, err)
	}
	return nil
}

// classifyPublish wraps into err what kind of refusal it is: a
// publish that can never succeed as it is wraps broker.ErrPermanent
// (InvalidArgument: an invalid attribute or message), broker.ErrTooLarge
// when the message or its attributes are over a limit (InvalidArgument
// saying so, or the client's own ErrOversizedMessage), so that the Router
// tries once with the rejection message shortened; a refused credential
// wraps broker.ErrNotAuthorized. A topic that does not exist (NotFound) is
// not permanent: it is the broker's state, which creating the topic cures,
// and R-19/AC-18 require such a message released and redelivered within
// 10 s (as SQS does for a missing queue). Other errors are returned as they
// are.
func classifyPublish(err error) error {
	if errors.Is(err, pubsub.ErrOversizedMessage) {
		return fmt.Errorf("%w: %w", broker.ErrTooLarge, err)
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.InvalidArgument:
		msg := strings.ToLower(st.Message())
		if strings.Contains(msg, "too large") || strings.Contains(msg, "size") || strings.Contains(msg, "exceed") || strings.Contains(msg, "too long") {
			return fmt.Errorf("%w: %w", broker.ErrTooLarge, err)
		}
		return fmt.Errorf("%w: %w", broker.ErrPermanent, err)
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%w: %w", broker.ErrNotAuthorized, err)
	}
	return err
}

// Close flushes and stops every publisher. The client stays open.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	pubs := p.pubs
	p.pubs = map[string]*pubsub.Publisher{}
	p.mu.Unlock()
	for _, pub := range pubs {
		pub.Stop()
	}
	return nil
}

// ErrUnreachable is wrapped by Probe when Pub/Sub did not answer within
// the probe's timeout.
var ErrUnreachable = errors.New("did not answer")

// ErrRefused is wrapped by Probe when the endpoint refused the connection
// (nothing listens there): reported at once, not as an endpoint that "did
// not answer".
var ErrRefused = errors.New("refused the connection")

// ErrNoConnection is wrapped by Probe when the connection failed at once
// for another reason than a refusal (a host name that does not resolve, a
// network that is unreachable), before the probe's timeout.
var ErrNoConnection = errors.New("could not connect")

// ErrNotAuthorized is wrapped by Probe when Pub/Sub refused the client's
// credentials (Unauthenticated, PermissionDenied); it is
// broker.ErrNotAuthorized.
var ErrNotAuthorized = broker.ErrNotAuthorized

// Probe makes one cheap call (GetTopic of a topic that need not exist, no
// client-side retry) within timeout, so that a command fails at start-up
// with a clear error when Pub/Sub cannot be reached (wrapping ErrRefused
// for a connection refused, ErrNoConnection for another connection failure
// before timeout, ErrUnreachable for no answer within timeout) or refuses
// the credentials (ErrNotAuthorized), instead of
// retrying until a distant deadline. Any answer of the service,
// NotFound included, means it is reachable.
func Probe(ctx context.Context, c *pubsub.Client, project string, timeout time.Duration) error {
	_, err := probe(ctx, c, "projects/"+project+"/topics/brighter-probe", timeout)
	return err
}

// ProbeTopic is Probe made with a GetTopic of topic (an id in the
// client's project, or a full name) instead of a topic that need not
// exist, for a caller that asks next whether topic exists (makeChannels
// validate): known holds the probe's answer, {full name: whether topic
// exists}, for ChannelOptions.KnownTopics, when the answer said (the topic
// was found, or NotFound); nil otherwise. Its errors are Probe's, in
// the same time. A PermissionDenied may be the topic's alone (a
// topic in another project, a policy on the topic): the probe is then
// made again as Probe makes it, and its error is Probe's.
func ProbeTopic(ctx context.Context, c *pubsub.Client, topic string, timeout time.Duration) (known map[string]bool, err error) {
	name := topicName(c.Project(), topic)
	answer, err := probe(ctx, c, name, timeout)
	switch {
	case status.Code(answer) == codes.PermissionDenied && ctx.Err() == nil:
		return nil, Probe(ctx, c, c.Project(), timeout)
	case err != nil:
		return nil, err
	case answer == nil:
		return map[string]bool{name: true}, nil
	case status.Code(answer) == codes.NotFound:
		return map[string]bool{name: false}, nil
	}
	return nil, nil
}

// probe makes Probe's one call, a GetTopic of topic (a full name) within
// timeout and without retry, and returns its answer (nil when the topic
// exists) and Probe's error for it (nil when the answer means Pub/Sub is
// reachable).
func probe(ctx context.Context, c *pubsub.Client, topic string, timeout time.Duration) (answer, failure error) {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.TopicAdminClient.GetTopic(pctx, &pubsubpb.GetTopicRequest{Topic: topic},
		gax.WithRetry(func() gax.Retryer { return nil }))
	if err == nil {
		return nil, nil
	}
	if ctx.Err() != nil {
		return err, ctx.Err()
	}
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied:
		return err, fmt.Errorf("%w: %w", ErrNotAuthorized, err)
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		if status.Code(err) == codes.Unavailable && pctx.Err() == nil {
			// gRPC reports a failed dial as Unavailable at once, its cause
			// only in the status message (no wrapped error to test).
			if strings.Contains(status.Convert(err).Message(), "connection refused") {
				return err, fmt.Errorf("%w: %w", ErrRefused, err)
			}
			return err, fmt.Errorf("%w: %w", ErrNoConnection, err)
		}
		return err, fmt.Errorf("%w within %s: %w", ErrUnreachable, timeout, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return err, fmt.Errorf("%w within %s: %w", ErrUnreachable, timeout, err)
	}
	return err, nil // any other answer (NotFound above all) means it is reachable
}
