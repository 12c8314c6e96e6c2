package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// GCP wires subscriptions with transport: gcp (Google Cloud
// Pub/Sub, pull or streaming pull). One client is made per project and
// command, from connections.gcp: emulatorHost when set, else the client
// library's own PUBSUB_EMULATOR_HOST handling, else the real service with
// Application Default Credentials.
type GCP struct {
	// LookupTimeout cuts off each call of `lint --live` (Live); 0 means
	// LiveLookupTimeout.
	LookupTimeout time.Duration
	mu            sync.Mutex
	clients       map[string]*pubsub.Client
	calls         broker.CallCounter
}

// CountingCalls makes the clients t makes from now on count every Pub/Sub
// call they send into c (CallCounting); it returns t.
func (t *GCP) CountingCalls(c broker.CallCounter) Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = c
	return t
}

var (
	_ Transport         = (*GCP)(nil)
	_ Transport         = (*GCP)(nil)
	_ ReplaySourceAsker = (*GCP)(nil)
)

// gcpConnect makes the client of project for connections.gcp c, with dial
// added to its connections' gRPC options. An explicit emulator host gets
// one plain-text connection without credentials, made when the first call
// needs it and shared by the client's two admin clients (the library
// dials one for each and starts connecting both at once, even the one a
// consumer never calls: work a consume's start-up paid for before its
// first receive). Any other endpoint is dialled by the library: a pool of
// GOMAXPROCS connections, up to four, for each admin client (one each
// with PUBSUB_EMULATOR_HOST).
func gcpConnect(ctx context.Context, project string, c config.GCPConnection, dial ...grpc.DialOption) (*pubsub.Client, error) {
	if c.EmulatorHost == "" {
		opts := make([]option.ClientOption, len(dial))
		for i, d := range dial {
			opts[i] = option.WithGRPCDialOption(d)
		}
		return gcp.Connect(ctx, project, opts...)
	}
	// passthrough: the host is dialled as given, as the library dials it
	// (a name that does not resolve fails the dial, not a resolver).
	conn, err := grpc.NewClient("passthrough:///"+c.EmulatorHost, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// What the library's admin clients set on the connections they dial.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
	}, dial...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to Pub/Sub project %q: %w", project, err)
	}
	cl, err := gcp.Connect(ctx, project, option.WithGRPCConn(conn), option.WithoutAuthentication(), option.WithTelemetryDisabled())
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return cl, nil
}

// gcpProbeTimeout bounds the start-up probe of a Pub/Sub endpoint (without
// it an unreachable Pub/Sub made send and consume wait 60 s and then say
// only "context deadline exceeded").
const gcpProbeTimeout = 5 * time.Second

// gcpEndpointSource names the Pub/Sub endpoint a command dials and where
// it came from, for errors: dlq's --endpoint flag (a destination given by
// URL), the subscriptions file, PUBSUB_EMULATOR_HOST or the real service.
func gcpEndpointSource(f *config.File) string {
	c := f.Connections.GCP
	if c.EmulatorHost != "" && f.Path == CommandLinePath {
		if c.EmulatorHost == os.Getenv("PUBSUB_EMULATOR_HOST") {
			return c.EmulatorHost + " (the --endpoint flag, equal to PUBSUB_EMULATOR_HOST)"
		}
		return c.EmulatorHost + " (the --endpoint flag)"
	}
	if c.EmulatorHost != "" {
		if c.EmulatorHost == os.Getenv("PUBSUB_EMULATOR_HOST") {
			return c.EmulatorHost + " (connections.gcp.emulatorHost in the subscriptions file, equal to PUBSUB_EMULATOR_HOST)"
		}
		return c.EmulatorHost + " (connections.gcp.emulatorHost in the subscriptions file)"
	}
	if h := os.Getenv("PUBSUB_EMULATOR_HOST"); h != "" {
		return h + " (PUBSUB_EMULATOR_HOST)"
	}
	return "pubsub.googleapis.com:443 (the real service, Application Default Credentials)"
}

// gcpOnEmulator reports whether the commands' Pub/Sub client for f talks
// to an emulator: connections.gcp.emulatorHost (or dlq's --endpoint) is
// set, or PUBSUB_EMULATOR_HOST, which the client library honours.
func gcpOnEmulator(f *config.File) bool {
	return f.Connections.GCP.EmulatorHost != "" || os.Getenv("PUBSUB_EMULATOR_HOST") != ""
}

// client returns the command's client for the subscription's project,
// made and probed (gcp.Probe) on its first use.
func (t *GCP) client(ctx context.Context, f *config.File, s *config.Subscription) (*pubsub.Client, error) {
	c, _, err := t.probedClient(ctx, f, s, "")
	return c, err
}

// probedClient is client; when it makes the client and topic is not "",
// its probe is a GetTopic of topic (gcp.ProbeTopic), and known is what
// the probe's answer said about topic (nil when the client was made
// before, or the answer said nothing about it).
func (t *GCP) probedClient(ctx context.Context, f *config.File, s *config.Subscription, topic string) (c *pubsub.Client, known map[string]bool, err error) {
	project := f.Connections.GCP.ProjectID
	if s.GCP != nil && s.GCP.ProjectID != "" {
		project = s.GCP.ProjectID
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[project]; c != nil {
		return c, nil, nil
	}
	var dial []grpc.DialOption
	if t.calls != nil {
		dial = gcp.CountCalls(t.calls)
	}
	c, err = gcpConnect(ctx, project, f.Connections.GCP, dial...)
	if err != nil {
		return nil, nil, err
	}
	if topic == "" {
		err = gcp.Probe(ctx, c, project, gcpProbeTimeout)
	} else {
		known, err = gcp.ProbeTopic(ctx, c, topic, gcpProbeTimeout)
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("Pub/Sub at %s: %w", gcpEndpointSource(f), err)
	}
	if t.clients == nil {
		t.clients = map[string]*pubsub.Client{}
	}
	t.clients[project] = c
	return c, known, nil
}

// CloseClients closes every client made for a project, and forgets them.
func (t *GCP) CloseClients() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for project, c := range t.clients {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close Pub/Sub client of project %s: %w", project, err))
		}
	}
	t.clients = nil
	return errors.Join(errs...)
}

// gcpChannelOptions maps a subscription to the transport's channel options
// (makeChannels, the subscription's settings, its DeadLetterPolicy and the
// two rejection topics).
func gcpChannelOptions(s *config.Subscription, logger *slog.Logger) gcp.ChannelOptions {
	g := s.GCP
	o := gcp.ChannelOptions{
		Topic:                 s.RoutingKey,
		Subscription:          s.ChannelName,
		MakeChannels:          broker.MakeChannels(s.MakeChannels),
		AckDeadline:           g.AckDeadline,
		EnableMessageOrdering: g.EnableMessageOrdering,
		RequeueDelay:          s.RequeueDelay,
		MaxRequeueDelay:       g.MaxRequeueDelay,
		RequeueCount:          s.RequeueCount,
		DeadLetterTopic:       s.DeadLetterRoutingKey,
		InvalidTopic:          s.InvalidMessageRoutingKey,
		Labels:                g.Labels,
		Logger:                logger,
	}
	if p := g.DeadLetterPolicy; p != nil {
		o.DeadLetterPolicy = &gcp.DeadLetterPolicy{
			Topic: p.Topic, Subscription: p.Subscription, MaxDeliveryAttempts: p.MaxDeliveryAttempts,
			AckDeadline: p.AckDeadline, PublisherMember: p.PublisherMember, SubscriberMember: g.SubscriberMember,
		}
	}
	return o
}

// gcpConsumer makes the pull or stream consumer of sub on c; ackDeadline is
// its ConsumerOptions.AckDeadline (the pull consumer's lease).
func gcpConsumer(c *pubsub.Client, s *config.Subscription, sub string, ackDeadline time.Duration, bufferSize int, routes bool, logger *slog.Logger) broker.Consumer {
	pub := gcp.NewProducer(c, gcp.ProducerOptions{EnableMessageOrdering: s.GCP.EnableMessageOrdering, PublishTimeout: s.CallTimeout})
	o := gcp.ConsumerOptions{
		Subscription: sub, Topic: s.RoutingKey, BufferSize: bufferSize, NoOfPerformers: s.NoOfPerformers,
		AckDeadline: ackDeadline, MaxExtension: s.GCP.MaxExtension, Logger: logger,
	}
	if routes {
		o.DeadLetterTopic, o.InvalidTopic = s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey
	}
	if s.GCP.Mode == config.GCPModePull {
		return gcp.NewPullConsumer(c, pub, o)
	}
	return gcp.NewStreamConsumer(c, pub, o)
}

// Open applies makeChannels to s's topics and subscriptions and returns
// its pull or streaming-pull consumer.
func (t *GCP) Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*Channel, error) {
	mk := broker.MakeChannels(s.MakeChannels)
	probe := ""
	if mk == broker.MakeValidate {
		// validate's first call, whether the topic exists, is the probe.
		probe = s.RoutingKey
	}
	c, known, err := t.probedClient(ctx, f, s, probe)
	if err != nil {
		return nil, err
	}
	if err := validateGCPChannels(ctx, c, s, mk, known, gcpOnEmulator(f), logger); err != nil {
		return nil, missingFix(err, s)
	}
	ackDeadline := s.GCP.AckDeadline
	if s.GCP.Mode == config.GCPModePull {
		// The lease the pump keeps is what the subscription really grants:
		// one made elsewhere may hold a message for less.
		ackDeadline = gcp.PullLease(ctx, c, s.ChannelName, ackDeadline, logger)
	}
	consumer := gcpConsumer(c, s, s.ChannelName, ackDeadline, s.BufferSize, true, logger)
	return &Channel{Consumer: consumer, Close: consumer.Close}, nil
}

// Producer publishes to Pub/Sub topics with the project's client.
func (t *GCP) Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.client(ctx, f, s)
	if err != nil {
		return nil, err
	}
	return sendProducer{Producer: gcp.NewProducer(c, gcp.ProducerOptions{EnableMessageOrdering: s.GCP.EnableMessageOrdering}), project: c.Project()}, nil
}

// ErrSendTopicMissing is wrapped by the error of a send to a Pub/Sub topic
// that does not exist: a producer never creates a topic (makeChannels
// create makes them when a consume opens the subscription).
var ErrSendTopicMissing = errors.New("Pub/Sub topic does not exist")

// sendProducer is send's Pub/Sub producer: a publish the service answers
// NotFound fails with an error wrapping ErrSendTopicMissing that names the
// topic's full name and how to make it, not a bare "rpc error: code =
// NotFound".
type sendProducer struct {
	broker.Producer
	project string
}

// Send publishes m; a missing topic's error says how to make the topic.
func (p sendProducer) Send(ctx context.Context, m *message.Message) error {
	err := p.Producer.Send(ctx, m)
	if status.Code(err) != codes.NotFound {
		return err
	}
	name := m.Header.Topic
	if !strings.HasPrefix(name, "projects/") {
		name = "projects/" + p.project + "/topics/" + name
	}
	return fmt.Errorf("%w: %s: send does not create topics: run brighter consume on this subscriptions file once "+
		"(makeChannels: create, the default, creates the subscription's topic), or create the topic "+
		"(gcloud pubsub topics create %s --project %s): %w", ErrSendTopicMissing, name, path.Base(name), gcpProject(name, p.project), err)
}

// gcpProject is the project of a full topic name projects/P/topics/T, else
// project.
func gcpProject(name, project string) string {
	if rest, ok := strings.CutPrefix(name, "projects/"); ok {
		if p, _, ok := strings.Cut(rest, "/"); ok {
			return p
		}
	}
	return project
}

// Addresses is the pubsub:// scheme.
func (t *GCP) Addresses() broker.AddressScheme { return gcp.URLScheme{} }

// dlqOpenTimeout bounds the GetSubscription a dlq reader opens with.
const dlqOpenTimeout = 10 * time.Second

// DLQReader reads the destination with the ordinary consumer (so routed
// copies present their stamped count, R-28): a rejection topic is read
// through the subscription of the same id that makeChannels creates, the
// native target through the DeadLetterPolicy's subscription. dlq never
// rejects, so the reader has no routes.
func (t *GCP) DLQReader(ctx context.Context, tg *Target, o ReadOptions, logger *slog.Logger) (*Channel, error) {
	c, err := t.client(ctx, tg.F, tg.S)
	if err != nil {
		return nil, err
	}
	s := *tg.S
	g := config.GCP{}
	if s.GCP != nil {
		g = *s.GCP
	}
	g.Mode = config.GCPModePull // a scan must not hold a stream's leases
	s.GCP = &g
	// A subscription that does not exist is an open failure, as a missing
	// SQS queue is, not a failed receive: nothing is read, and a replay
	// keeps no journal for it. Any other answer (no pubsub.subscriptions.get)
	// is left for the receive to report.
	gctx, cancel := context.WithTimeout(ctx, dlqOpenTimeout)
	_, gerr := c.SubscriptionAdminClient.GetSubscription(gctx, &pubsubpb.GetSubscriptionRequest{Subscription: gcp.SubscriptionName(c.Project(), tg.Dest)})
	cancel()
	if status.Code(gerr) == codes.NotFound {
		return nil, fmt.Errorf("GetSubscription: %w", gerr)
	}
	consumer := gcpConsumer(c, &s, tg.Dest, s.GCP.AckDeadline, 10, false, logger)
	return &Channel{Consumer: consumer, Close: consumer.Close}, nil
}

// DLQProducer publishes to existing topics only: Pub/Sub never creates a
// topic on publish, so a replay to a missing topic fails with NotFound. It
// publishes with message ordering, so a replayed message keeps its ordering
// key (its partition key), as a FIFO replay keeps its message group.
func (t *GCP) DLQProducer(ctx context.Context, tg *Target, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.client(ctx, tg.F, tg.S)
	if err != nil {
		return nil, err
	}
	return gcp.NewProducer(c, gcp.ProducerOptions{EnableMessageOrdering: true}), nil
}

// ReplayFrom is the topic a replay from tg must not publish into, as the
// subscriptions file names it: the native target's deadLetterPolicy.topic;
// else the subscription's own id (a rejection topic's subscription has the
// topic's id; so, by that convention, has a subscription named by URL), in
// the subscription's project.
func (t *GCP) ReplayFrom(tg *Target) broker.Address {
	topic := tg.Dest
	if tg.S.GCP != nil && tg.S.GCP.DeadLetterPolicy != nil && tg.Dest == GCPNativeSubscription(tg.S) {
		topic = tg.S.GCP.DeadLetterPolicy.Topic
	}
	return broker.Address{Project: GCPProject(tg), Kind: broker.AddressTopic, Name: topic}
}

// ReplaySource asks Pub/Sub which topic the subscription tg reads is
// attached to (its full name, projects/P/topics/T).
func (t *GCP) ReplaySource(ctx context.Context, tg *Target) (string, error) {
	c, err := t.client(ctx, tg.F, tg.S)
	if err != nil {
		return "", err
	}
	sub, err := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: strings.TrimPrefix(tg.URL, "pubsub://")})
	if err != nil {
		return "", err
	}
	return sub.GetTopic(), nil
}

// GCPProject is the project of a Pub/Sub destination.
func GCPProject(t *Target) string {
	if t.S.GCP != nil && t.S.GCP.ProjectID != "" {
		return t.S.GCP.ProjectID
	}
	return t.F.Connections.GCP.ProjectID
}

// GCPNativeSubscription is the subscription of a Pub/Sub subscription's
// deadLetterPolicy: its subscription, else dlq-<channelName>.
func GCPNativeSubscription(s *config.Subscription) string {
	if sub := s.GCP.DeadLetterPolicy.Subscription; sub != "" {
		return sub
	}
	return "dlq-" + s.ChannelName
}

// URLTarget reads pubsub://projects/P/subscriptions/S. The emulator
// is --endpoint when given; otherwise the client library honours
// PUBSUB_EMULATOR_HOST, or reaches the service with Application Default
// Credentials.
func (t *GCP) URLTarget(o URLOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*Target, error) {
	if err == nil && a.Kind != broker.AddressSubscription {
		err = errors.New("a topic is read through one of its subscriptions")
	}
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w: want %s", redact.Quoted(arg), err, as.Forms().Read))
	}
	if o.Endpoint != "" {
		if err := checkHostPort("--endpoint", config.EmulatorHostShape, o.Endpoint, false); err != nil {
			return nil, err
		}
	}
	project, sub := a.Project, a.Name
	f := &config.File{Path: CommandLinePath}
	f.Connections.GCP = config.GCPConnection{ProjectID: project, EmulatorHost: o.Endpoint}
	s := &config.Subscription{
		Name: sub, ChannelName: sub, RoutingKey: sub, MakeChannels: config.MakeChannelsValidate,
		Transport: config.TransportGCP, GCP: &config.GCP{ProjectID: project, Mode: config.GCPModePull},
	}
	return &Target{F: f, S: s, Dest: sub, URL: as.Format(a)}, nil
}
