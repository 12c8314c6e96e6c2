package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"cloud.google.com/go/pubsub/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/live"
)

// liveClients are the broker clients of one `lint --live` run: made on
// first use, one per file's AWS connection and one per Pub/Sub project and
// emulator host, and closed by close.
type liveClients struct {
	mu  sync.Mutex
	sqs map[config.AWSConnection]*sqs.Clients
	gcp map[string]*pubsub.Client
	// gcpErr keeps, per project and emulator host, the start-up probe's
	// failure, so that every subscription there reports it at once
	// rather than probing an unreachable endpoint again.
	gcpErr map[string]error
}

func (c *liveClients) sqsFor(ctx context.Context, f *config.File) (*sqs.Clients, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conn := f.Connections.AWS
	if cl, ok := c.sqs[conn]; ok {
		return cl, nil
	}
	cl, err := sqs.NewClientsWith(ctx, sqs.Connection{Region: conn.Region, Endpoint: conn.Endpoint, EndpointFrom: sqsEndpointFrom(f), Profile: conn.Profile})
	if err != nil {
		return nil, err
	}
	c.sqs[conn] = cl
	return cl, nil
}

func (c *liveClients) gcpFor(ctx context.Context, f *config.File, project string) (*pubsub.Client, error) {
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
	cl, err := gcp.Connect(ctx, project, gcpClientOptions(f.Connections.GCP)...)
	if err != nil {
		return nil, err
	}
	// The probe consume and dlq make: a refused or silent endpoint fails
	// at once or within 5s, naming it and its source, instead of the
	// client's retries running out the whole --live-timeout (new-user
	// defect 3).
	if err := gcp.Probe(ctx, cl, project, gcpProbeTimeout); err != nil {
		_ = cl.Close()
		err = fmt.Errorf("Pub/Sub at %s: %w", gcpEndpointSource(f), err)
		c.gcpErr[key] = err
		return nil, err
	}
	c.gcp[key] = cl
	return cl, nil
}

func (c *liveClients) close() {
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

// liveCheckers returns the --live probers (native limits: SQS, Pub/Sub,
// the RocketMQ group's maximum deliveries)
// and channel validators (SQS, Pub/Sub, RocketMQ), and a function that
// closes their clients. The validators run the validation `consume` runs
// at start-up with makeChannels: validate (validateChannels), so the two
// agree.
func liveCheckers() (map[config.Transport]live.Prober, map[config.Transport]live.ChannelValidator, func()) {
	c := &liveClients{sqs: map[config.AWSConnection]*sqs.Clients{}, gcp: map[string]*pubsub.Client{}, gcpErr: map[string]error{}}
	probers := map[config.Transport]live.Prober{
		config.TransportSQS: live.SQS{Client: func(ctx context.Context, f *config.File) (live.SQSAPI, error) {
			cl, err := c.sqsFor(ctx, f)
			if err != nil {
				return nil, err
			}
			return cl.SQS, nil
		}},
		config.TransportGCP:      live.GCP{Client: c.gcpFor},
		config.TransportRocketMQ: live.RocketMQ{Connection: func(f *config.File) rocketmq.Connection { return rocketmqConnection(f, "") }},
	}
	validators := map[config.Transport]live.ChannelValidator{
		config.TransportSQS: live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
			cl, err := c.sqsFor(ctx, f)
			if err != nil {
				return err
			}
			return liveMissing(validateSQSChannels(ctx, cl, s, broker.MakeValidate))
		}),
		config.TransportGCP: live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
			cl, err := c.gcpFor(ctx, f, subscriptionProject(f, s))
			if err != nil {
				return err
			}
			return liveMissing(validateGCPChannels(ctx, cl, s, broker.MakeValidate, slog.New(slog.NewTextHandler(io.Discard, nil))))
		}),
		config.TransportRocketMQ: live.ValidateFunc(func(ctx context.Context, f *config.File, s *config.Subscription) error {
			return liveMissing(validateRocketMQChannels(ctx, f, s, broker.MakeValidate, slog.New(slog.NewTextHandler(io.Discard, nil))))
		}),
	}
	return probers, validators, c.close
}

// liveMissing marks a validation error that names missing channels (each
// transport's sentinel) as live.ErrMissingChannel, its text unchanged.
func liveMissing(err error) error {
	if errors.Is(err, sqs.ErrMissingChannels) || errors.Is(err, gcp.ErrChannelMissing) || errors.Is(err, rocketmq.ErrTopicMissing) {
		return missingChannel{err}
	}
	return err
}

// missingChannel is an error that names missing channels.
type missingChannel struct{ error }

func (m missingChannel) Unwrap() error        { return m.error }
func (m missingChannel) Is(target error) bool { return target == live.ErrMissingChannel }

// validateSQSChannels applies makeChannels mk to s's SQS (and SNS)
// infrastructure: consume's start-up (with the file's makeChannels) and
// lint --live (with validate) both call it.
func validateSQSChannels(ctx context.Context, c *sqs.Clients, s *config.Subscription, mk broker.MakeChannels) error {
	co := sqsChannelOptions(s)
	co.MakeChannels = mk
	if err := sqs.NewChannelMaker(c, co).EnsureChannels(ctx); err != nil {
		return fmt.Errorf("channels: %w", err)
	}
	return nil
}

// validateGCPChannels applies makeChannels mk to s's Pub/Sub topics and
// subscriptions (consume's start-up and lint --live).
func validateGCPChannels(ctx context.Context, c *pubsub.Client, s *config.Subscription, mk broker.MakeChannels, logger *slog.Logger) error {
	o := gcpChannelOptions(s, logger)
	o.MakeChannels = mk
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
