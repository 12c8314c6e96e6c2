package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"cloud.google.com/go/pubsub/v2"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/live"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// LiveLookupTimeout bounds each SQS, SNS, Pub/Sub and RocketMQ look-up of
// `lint --live`, its retries included (the SDK's retries of an endpoint
// that accepts and never answers would otherwise run out the whole
// --live-timeout): the Pub/Sub probe's 5s. An endpoint that lets one look-up run out is not
// asked again in the run: every later look-up there fails at once with
// that error, so an unreachable endpoint costs a run about 5s.
const LiveLookupTimeout = 5 * time.Second

// liveSQS keeps the SQS clients of one `lint --live` run: made on first
// use, one per file's AWS connection.
type liveSQS struct {
	mu  sync.Mutex
	sqs map[config.AWSConnection]*sqs.Clients
	// unanswered keeps, per connection, the first look-up that got no
	// answer (or a refused connection): later ones fail at once with it.
	unanswered map[config.AWSConnection]error
}

func (c *liveSQS) sqsFor(ctx context.Context, f *config.File) (*sqs.Clients, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn := f.Connections.AWS
	if err, ok := c.unanswered[conn]; ok {
		return nil, err
	}
	if cl, ok := c.sqs[conn]; ok {
		return cl, nil
	}
	cl, err := sqs.NewClientsWith(ctx, sqs.Connection{Region: conn.Region, Endpoint: conn.Endpoint, EndpointFrom: sqsEndpointFrom(f), Profile: conn.Profile, CallDeadline: LiveLookupTimeout})
	if err != nil {
		return nil, err
	}
	c.sqs[conn] = cl
	return cl, nil
}

// note returns err, a look-up's error on f's connection, as it is; when
// the endpoint did not answer it within LiveLookupTimeout (ctx, the run's,
// still live) or refused the connection, the connection's later look-ups
// fail at once with it.
func (c *liveSQS) note(ctx context.Context, f *config.File, err error) error {
	if err == nil || ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED)) {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.unanswered[f.Connections.AWS]; !ok {
		c.unanswered[f.Connections.AWS] = fmt.Errorf("not asked: an earlier look-up there got no answer: %w", err)
	}
	return err
}

// notingSQS is the SQS client of the --live prober, whose errors it
// notes (liveSQS.note).
type notingSQS struct {
	live.SQSAPI
	note func(ctx context.Context, err error) error
}

// GetQueueUrl calls the client and notes its error.
func (n notingSQS) GetQueueUrl(ctx context.Context, in *awssqs.GetQueueUrlInput, opts ...func(*awssqs.Options)) (*awssqs.GetQueueUrlOutput, error) {
	out, err := n.SQSAPI.GetQueueUrl(ctx, in, opts...)
	return out, n.note(ctx, err)
}

// GetQueueAttributes calls the client and notes its error.
func (n notingSQS) GetQueueAttributes(ctx context.Context, in *awssqs.GetQueueAttributesInput, opts ...func(*awssqs.Options)) (*awssqs.GetQueueAttributesOutput, error) {
	out, err := n.SQSAPI.GetQueueAttributes(ctx, in, opts...)
	return out, n.note(ctx, err)
}

// liveGCP keeps the Pub/Sub clients of one `lint --live` run: made on
// first use, one per project and emulator host, and closed by close.
// Each of their calls is cut off after deadline, and an endpoint that let
// one run out is not asked again.
type liveGCP struct {
	deadline time.Duration
	mu       sync.Mutex
	gcp      map[string]*pubsub.Client
	// gcpErr keeps, per project and emulator host, the start-up probe's
	// failure, so that every subscription there reports it at once
	// rather than probing an unreachable endpoint again.
	gcpErr map[string]error
	// unanswered keeps, per emulator host ("" for the real service), the
	// error of the first call cut off there: later calls fail at once
	// with it. It has its own lock: calls are made under mu (the probe).
	umu        sync.Mutex
	unanswered map[string]error
}

// cutOff is the unary interceptor of the clients of one endpoint, host
// (named as where): each call has a deadline of c.deadline (an earlier
// one of the caller's stands); a call that runs it out while the caller's
// context is live fails with DeadlineExceeded naming the endpoint and the
// deadline, and every later call there fails at once with that error
// (codes.DeadlineExceeded: the client does not retry it).
func (c *liveGCP) cutOff(host, where string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		c.umu.Lock()
		err, ok := c.unanswered[host]
		c.umu.Unlock()
		if ok {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, c.deadline)
		defer cancel()
		err = invoker(cctx, method, req, reply, cc, opts...)
		if err == nil || ctx.Err() != nil || cctx.Err() == nil {
			return err
		}
		msg := fmt.Sprintf("Pub/Sub at %s did not answer within %s: the look-up was cut off", where, c.deadline)
		c.umu.Lock()
		defer c.umu.Unlock()
		if _, ok := c.unanswered[host]; !ok {
			c.unanswered[host] = status.Error(codes.DeadlineExceeded, "not asked: an earlier look-up there got no answer: "+msg)
		}
		return status.Error(codes.DeadlineExceeded, msg)
	}
}

func (c *liveGCP) gcpFor(ctx context.Context, f *config.File, project string) (*pubsub.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	host := f.Connections.GCP.EmulatorHost
	key := project + "@" + host
	if cl, ok := c.gcp[key]; ok {
		return cl, nil
	}
	if err, ok := c.gcpErr[key]; ok {
		return nil, err
	}
	cl, err := gcpConnect(ctx, project, f.Connections.GCP, grpc.WithChainUnaryInterceptor(c.cutOff(host, gcpEndpointSource(f))))
	if err != nil {
		return nil, err
	}
	// The probe consume and dlq make: a refused or silent endpoint fails
	// at once or within 5s, naming it and its source, instead of the
	// client's retries running out the whole --live-timeout.
	if err := gcp.Probe(ctx, cl, project, gcpProbeTimeout); err != nil {
		_ = cl.Close()
		err = fmt.Errorf("Pub/Sub at %s: %w", gcpEndpointSource(f), err)
		c.gcpErr[key] = err
		return nil, err
	}
	c.gcp[key] = cl
	return cl, nil
}

func (c *liveGCP) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.gcp {
		_ = cl.Close()
	}
}

// subscriptionProject is the Pub/Sub project of s.
func subscriptionProject(f *config.File, s *config.Subscription) string {
	if s.GCP != nil && s.GCP.ProjectID != "" {
		return s.GCP.ProjectID
	}
	return f.Connections.GCP.ProjectID
}

// Live returns the SQS prober of native limits and channel validator of
// one lint --live run; their clients need no closing.
func (t *SQS) Live() (live.Prober, live.ChannelValidator, func()) {
	c := &liveSQS{sqs: map[config.AWSConnection]*sqs.Clients{}, unanswered: map[config.AWSConnection]error{}}
	prober := live.SQS{Client: func(ctx context.Context, f *config.File) (live.SQSAPI, error) {
		cl, err := c.sqsFor(ctx, f)
		if err != nil {
			return nil, err
		}
		return notingSQS{SQSAPI: cl.SQS, note: func(ctx context.Context, err error) error { return c.note(ctx, f, err) }}, nil
	}}
	validator := live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
		cl, err := c.sqsFor(ctx, f)
		if err != nil {
			// Not looked up: named by the subscription's queue (the
			// validation's own errors name what it looked up).
			return fmt.Errorf("queue %s: %w", sqs.QueueName(s.ChannelName, s.SQS != nil && s.SQS.QueueType == config.QueueFIFO), err)
		}
		_, err = validateSQSChannels(ctx, cl, s, broker.MakeValidate)
		return LiveMissing(c.note(ctx, f, err))
	})
	return prober, validator, func() {}
}

// Live returns the Pub/Sub prober of native limits and channel validator
// of one lint --live run, and a function that closes their clients. Each
// call is cut off after t.LookupTimeout (LiveLookupTimeout when 0), and an
// endpoint that did not answer one is not asked again in the run.
func (t *GCP) Live() (live.Prober, live.ChannelValidator, func()) {
	c := &liveGCP{deadline: cmp.Or(t.LookupTimeout, LiveLookupTimeout), gcp: map[string]*pubsub.Client{}, gcpErr: map[string]error{}, unanswered: map[string]error{}}
	validator := live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
		cl, err := c.gcpFor(ctx, f, subscriptionProject(f, s))
		if err != nil {
			return err
		}
		return LiveMissing(validateGCPChannels(ctx, cl, s, broker.MakeValidate, nil, gcpOnEmulator(f), slog.New(slog.NewTextHandler(io.Discard, nil))))
	})
	return live.GCP{Client: c.gcpFor}, validator, c.close
}

// liveRocketMQ keeps what one `lint --live` run learnt of its RocketMQ
// endpoints: each look-up (the group's maximum delivery attempts, the channel
// validation) is cut off after deadline, and an endpoint that let one run
// out is not asked again.
type liveRocketMQ struct {
	deadline time.Duration
	mu       sync.Mutex
	// unanswered keeps, per endpoint, the error of the first look-up cut
	// off there, or of its refused connection: later ones fail at once
	// with it.
	unanswered map[string]error
	// dialled holds the endpoints whose connection was tried (refused).
	dialled map[string]bool
}

// refused reports, once per endpoint, whether conn's endpoint (host:port)
// refuses a TCP connection, as an error naming it and where it came from
// and wrapping syscall.ECONNREFUSED, and records it so that later look-ups
// there fail at once with it. The RocketMQ client would otherwise retry
// its dial until the look-up's deadline and report a refusal as a
// look-up cut off. Any other outcome of the dial (accepted, a timeout, an
// endpoint list the dial cannot name) is nil: the look-up itself says.
func (c *liveRocketMQ) refused(ctx context.Context, conn rocketmq.Connection) error {
	c.mu.Lock()
	tried := c.dialled[conn.Endpoint]
	c.dialled[conn.Endpoint] = true
	c.mu.Unlock()
	if tried {
		return nil
	}
	if _, _, err := net.SplitHostPort(conn.Endpoint); err != nil {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	nc, err := (&net.Dialer{}).DialContext(dctx, "tcp", conn.Endpoint)
	if err == nil {
		_ = nc.Close()
		return nil
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return nil
	}
	return c.remember(conn, fmt.Errorf("RocketMQ at %s (%s) refused the connection: %w", conn.Endpoint, conn.EndpointFrom, err))
}

// remember records err, the first look-up on conn's endpoint that got no
// answer, so that later look-ups there fail at once with it, and returns
// err.
func (c *liveRocketMQ) remember(conn rocketmq.Connection, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.unanswered[conn.Endpoint]; !ok {
		c.unanswered[conn.Endpoint] = fmt.Errorf("not asked: an earlier look-up there got no answer: %w", err)
	}
	return err
}

// lookup runs fn, a look-up on conn's endpoint, with a deadline of
// c.deadline, unless the endpoint refused its connection (refused: the
// error says so at once). When the deadline (not the run's ctx) ended it, the error
// names the endpoint, where it came from and the deadline, wrapping
// context.DeadlineExceeded, and every later look-up there fails at once
// with it.
func (c *liveRocketMQ) lookup(ctx context.Context, conn rocketmq.Connection, fn func(ctx context.Context) error) error {
	c.mu.Lock()
	err, ok := c.unanswered[conn.Endpoint]
	c.mu.Unlock()
	if ok {
		return err
	}
	if err := c.refused(ctx, conn); err != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	err = fn(lctx)
	if err == nil || ctx.Err() != nil || lctx.Err() == nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return c.remember(conn, fmt.Errorf("RocketMQ at %s (%s) did not answer within %s: the look-up was cut off: %w", conn.Endpoint, conn.EndpointFrom, c.deadline, context.DeadlineExceeded))
}

// Live returns the RocketMQ prober (the group's maximum delivery attempts) and
// channel validator of one lint --live run; they keep no clients. Each
// look-up is cut off after t.LookupTimeout (LiveLookupTimeout when 0), and
// an endpoint that did not answer one is not asked again in the run.
func (t RocketMQ) Live() (live.Prober, live.ChannelValidator, func()) {
	c := &liveRocketMQ{deadline: cmp.Or(t.LookupTimeout, LiveLookupTimeout), unanswered: map[string]error{}, dialled: map[string]bool{}}
	prober := live.RocketMQ{
		Connection: func(f *config.File) rocketmq.Connection { return rocketmqConnection(f, "") },
		MaxDeliveryAttempts: func(ctx context.Context, conn rocketmq.Connection, group, topic string) (n int, err error) {
			err = c.lookup(ctx, conn, func(ctx context.Context) error {
				n, err = rocketmq.GroupMaxDeliveryAttempts(ctx, conn, group, topic)
				return err
			})
			return n, err
		},
	}
	validator := live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
		return LiveMissing(c.lookup(ctx, rocketmqConnection(f, ""), func(ctx context.Context) error {
			return validateRocketMQChannels(ctx, f, s, broker.MakeValidate, slog.New(slog.NewTextHandler(io.Discard, nil)))
		}))
	})
	return prober, validator, func() {}
}

// Live: the memory transport has nothing to probe.
func (t *Memory) Live() (live.Prober, live.ChannelValidator, func()) { return nil, nil, func() {} }

// LiveCheckers returns the --live probers (native limits: SQS, Pub/Sub,
// the RocketMQ consumer group's maximum delivery attempts) and channel validators (SQS,
// Pub/Sub, RocketMQ) of the registry's transports, and a function that
// closes their clients. The validators run the validation Open runs at
// start-up with makeChannels: validate (validateSQSChannels,
// validateGCPChannels, validateRocketMQChannels), so the two agree.
func (r Registry) LiveCheckers() (map[config.Transport]live.Prober, map[config.Transport]live.ChannelValidator, func()) {
	probers := map[config.Transport]live.Prober{}
	validators := map[config.Transport]live.ChannelValidator{}
	var closers []func()
	for name, t := range r {
		p, v, c := t.Live()
		if p != nil {
			probers[name] = p
		}
		if v != nil {
			validators[name] = v
		}
		closers = append(closers, c)
	}
	return probers, validators, func() {
		for _, c := range closers {
			c()
		}
	}
}

// LiveMissing marks a validation error that names missing channels (each
// transport's sentinel) as live.ErrMissingChannel, its text unchanged.
func LiveMissing(err error) error {
	if errors.Is(err, sqs.ErrMissingChannels) || errors.Is(err, gcp.ErrChannelMissing) || errors.Is(err, rocketmq.ErrTopicMissing) {
		return missingChannel{err}
	}
	return err
}

// missingChannel is an error that names missing channels.
type missingChannel struct{ error }

// Unwrap is the validation error.
func (m missingChannel) Unwrap() error { return m.error }

// Is reports live.ErrMissingChannel.
func (m missingChannel) Is(target error) bool { return target == live.ErrMissingChannel }

// validateSQSChannels applies makeChannels mk to s's SQS (and SNS)
// infrastructure: consume's start-up (with the file's makeChannels) and
// lint --live (with validate) both call it. It returns what was found or
// made (the queue's URL when create or validate looked it up; names only
// with assume).
func validateSQSChannels(ctx context.Context, c *sqs.Clients, s *config.Subscription, mk broker.MakeChannels) (sqs.Channels, error) {
	co := sqsChannelOptions(s)
	co.MakeChannels = mk
	cm := sqs.NewChannelMaker(c, co)
	if err := cm.EnsureChannels(ctx); err != nil {
		return cm.Result, fmt.Errorf("channels: %w", err)
	}
	return cm.Result, nil
}

// validateGCPChannels applies makeChannels mk to s's Pub/Sub topics and
// subscriptions (consume's start-up and lint --live); known is what calls
// already made answered about topics (gcp.ChannelOptions.KnownTopics);
// onEmulator says c talks to Google's emulator (gcpOnEmulator).
func validateGCPChannels(ctx context.Context, c *pubsub.Client, s *config.Subscription, mk broker.MakeChannels, known map[string]bool, onEmulator bool, logger *slog.Logger) error {
	o := gcpChannelOptions(s, logger)
	o.MakeChannels, o.KnownTopics, o.OnEmulator = mk, known, onEmulator
	if err := gcp.NewChannels(c, o).EnsureChannels(ctx); err != nil {
		return fmt.Errorf("makeChannels %s: %w", mk, err)
	}
	return nil
}

// validateRocketMQChannels applies makeChannels mk to s's RocketMQ topics:
// the subscription's and its rejection destinations (consume's start-up
// and lint --live).
func validateRocketMQChannels(ctx context.Context, f *config.File, s *config.Subscription, mk broker.MakeChannels, logger *slog.Logger) error {
	topics := []string{s.ChannelName}
	for _, t := range []string{s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey} {
		if t != "" {
			topics = append(topics, t)
		}
	}
	ch := rocketmq.Channels{Connection: rocketmqConnection(f, ""), Make: mk, Topics: topics, Logger: logger}
	if err := ch.EnsureChannels(ctx); err != nil {
		return fmt.Errorf("makeChannels %s: %w", mk, err)
	}
	return nil
}
