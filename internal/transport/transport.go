// Package transport joins the commands to the transports: one value per
// transport (sqs, gcp, rocketmq, memory) implementing Transport, kept in a
// Registry keyed by the subscriptions file's transport name. It holds the
// wiring consume, send, dlq and lint --live need (opening a subscription's
// consumer or producer after makeChannels, the dlq reader and producer,
// the live lint probes, endpoint and credential resolution), so that the
// commands call no broker SDK themselves.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker, internal/broker/gcp, internal/broker/memory,
// internal/broker/rocketmq, internal/broker/sqs, internal/config,
// internal/lint/live, internal/message, internal/redact
//
// Must not import: internal/pump, internal/handler, internal/cmd/...,
// github.com/spf13/cobra
package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/message"
)

// Channel is one subscription's consumer, ready to pump.
type Channel struct {
	// Consumer receives the channel's messages.
	Consumer broker.Consumer
	// Close closes the consumer (and, for memory, writes memory.output).
	Close func(ctx context.Context) error
	// ShortPoll is inspect.Source.ShortPoll for a dlq scan
	// over consumer: true when its waiting receive that returns nothing
	// has asked every server (an SQS long poll).
	ShortPoll bool
	// Held is, for a dlq scan, how many messages of the destination another
	// reader held invisible when this one opened it, as the broker
	// estimates it (SQS ApproximateNumberOfMessagesNotVisible, which may
	// still count holds that have lapsed: fauxqs counts them until the
	// queue's next receive): 0 when none or when the transport cannot tell
	// (Pub/Sub, RocketMQ, memory).
	Held int64
}

// CommandLinePath is the Path of the config.File dlq makes for a
// destination given by URL: its connection comes from flags and the
// environment, and errors naming an endpoint say so.
const CommandLinePath = "(command line)"

// DefaultURLReaderGroup is the RocketMQ reader group of a rocketmq:// URL
// without ?group= and without --group.
const DefaultURLReaderGroup = "brighter-dlq-reader"

// LogHeldUnknown is the stable message of the Warn record a dlq reader
// logs when it cannot count the messages another reader holds.
const LogHeldUnknown = "dlq: could not count the messages another reader holds"

// Target is the destination a dlq command reads: a subscription's
// dead-letter, invalid-message or native redrive destination, or one named
// by URL (then F and S are synthesised from flags and environment).
type Target struct {
	// F is the subscriptions file (or the one made for a URL).
	F *config.File
	// S is the subscription the destination belongs to.
	S *config.Subscription
	// Dest is the destination's channel name as the subscriptions file
	// writes it (the transport applies its own naming, e.g. SQS QueueName).
	Dest string
	// URL names the destination in output and in replayedFrom.
	URL string
	// Group is the RocketMQ consumer group the destination is read with
	// (never the subscription's own group); "" for other transports.
	Group string
	// EndpointFrom names where a RocketMQ destination given by URL got its
	// endpoint (the --rocketmq-endpoint flag or ROCKETMQ_ENDPOINT), for
	// errors; "" for the subscriptions file.
	EndpointFrom string
}

// ReadOptions say how a dlq command reads.
type ReadOptions struct {
	// Visibility is how long each received message stays invisible while a
	// scan runs (released at once when it ends).
	Visibility time.Duration
	// Wait is how long one receive waits (RocketMQ: the consumer's long
	// polling AwaitDuration, fixed when the consumer is made).
	Wait time.Duration
	// Rewrite is set by replay: the memory transport writes its file back
	// when the reader is closed.
	Rewrite bool
}

// URLOptions are the dlq flags and environment a destination named by URL
// takes its connection from.
type URLOptions struct {
	// Endpoint is --endpoint (SQS: an http(s) URL; Pub/Sub: HOST:PORT).
	Endpoint string
	// Region and Profile are --region and --profile (SQS).
	Region, Profile string
	// SNS is --sns: replays from an SQS URL publish to SNS topics.
	SNS bool
	// Group is --group (RocketMQ reader group).
	Group string
	// RocketMQEndpoint is --rocketmq-endpoint.
	RocketMQEndpoint string
	// Env reads an environment variable ("" when unset); nil reads none.
	Env func(name string) string
}

// EnvVar is the environment variable name through Env ("" when Env is nil
// or the variable is unset).
func (o URLOptions) EnvVar(name string) string {
	if o.Env == nil {
		return ""
	}
	return o.Env(name)
}

// UsageError is an error in what the user asked for (a flag, a URL, the
// subscriptions file): the commands exit with their usage code (2).
type UsageError struct{ Err error }

// Error is the wrapped error's text.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap is the wrapped error.
func (e *UsageError) Unwrap() error { return e.Err }

// MessageRefused reports whether err, from a producer's Send, says the
// message itself cannot be carried as it is, whatever the broker's state:
// a body SQS or SNS cannot carry (empty or not UTF-8 text,
// sqs.ErrBodyNotText), characters SQS refused (sqs.ErrInvalidChars), more
// message attributes than they allow (sqs.ErrTooManyAttributes), or a
// message over the broker's size limits (broker.ErrTooLarge). For send,
// whose message is the user's input, that is a usage error.
func MessageRefused(err error) bool {
	return errors.Is(err, sqs.ErrBodyNotText) || errors.Is(err, sqs.ErrInvalidChars) || errors.Is(err, sqs.ErrTooManyAttributes) || errors.Is(err, broker.ErrTooLarge)
}

// usageErr marks err as a UsageError.
func usageErr(err error) error { return &UsageError{Err: err} }

// Transport is one transport's wiring: what consume, send, dlq and
// lint --live call.
type Transport interface {
	// Open applies makeChannels and returns the subscription's consumer.
	Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*Channel, error)
	// Producer returns a producer in the transport's wire format.
	Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error)
	// CloseClients closes the broker clients the transport keeps across
	// the channels it opens (Pub/Sub: one client per project), and forgets
	// them.
	CloseClients() error

	// Addresses is the transport's own URL scheme: dlq parses and prints
	// destinations named by URL with it.
	Addresses() broker.AddressScheme
	// ReplayFrom is the destination t reads, as a replay's producer names
	// destinations and as the subscriptions file (or URL) says: what the
	// transport's scheme resolves --to against (PublishName, Same).
	ReplayFrom(t *Target) broker.Address
	// URLTarget makes the target of a destination named by URL: arg, as
	// the transport's scheme as parsed it into a (err when it could not),
	// with the connection from o's flags and environment.
	URLTarget(o URLOptions, arg string, as broker.AddressScheme, a broker.Address, err error) (*Target, error)
	// DLQReader is the transport's ORDINARY consumer over a dead-letter /
	// invalid / native destination (so counts are the stamped ones, R-28).
	DLQReader(ctx context.Context, t *Target, o ReadOptions, logger *slog.Logger) (*Channel, error)
	// DLQProducer is a producer for replay that never creates a missing
	// destination (a replay to a topic that does not exist fails cleanly).
	DLQProducer(ctx context.Context, t *Target, logger *slog.Logger) (broker.Producer, error)

	// Live returns the transport's lint --live prober and channel
	// validator (nil when it has none) and a function that closes the
	// clients they made. The validator runs the validation Open runs at
	// start-up with makeChannels: validate, so the two agree.
	Live() (live.Prober, live.ChannelValidator, func())
}

// DryRunChecker is a Transport whose producer refuses some messages
// before any call (a body it cannot carry, a broker limit): a dry run asks
// DryRunCheck's function about each copy so that it fails what the real
// run would. SQS implements it.
type DryRunChecker interface {
	DryRunCheck(t *Target) func(*message.Message) error
}

// ReplaySourceAsker is a Transport that can ask the broker which topic a
// destination is attached to (Pub/Sub: the subscription's topic, as its
// full name projects/P/topics/T).
type ReplaySourceAsker interface {
	ReplaySource(ctx context.Context, t *Target) (string, error)
}

// RedriveSourceAsker is a Transport that can ask the broker which sources'
// own redrive policies target the destination t reads (SQS:
// ListDeadLetterSourceQueues), by the names its producer publishes to.
type RedriveSourceAsker interface {
	RedriveSources(ctx context.Context, t *Target, logger *slog.Logger) ([]string, error)
}

// CallCounting is a Transport that can count the broker calls it sends
// (brighter_broker_calls_total). CountingCalls returns the transport
// counting into c: the same one, changed, or a copy. It must be called
// before the transport opens a channel or makes a producer.
type CallCounting interface {
	CountingCalls(c broker.CallCounter) Transport
}

// Registry maps a transport name to its Transport.
type Registry map[config.Transport]Transport

// Get returns the transport of s, or a UsageError naming the subscription
// when this build has none of that name.
func (r Registry) Get(s *config.Subscription) (Transport, error) {
	t, ok := r[s.Transport]
	if !ok {
		return nil, usageErr(fmt.Errorf("%s: subscription %s: transport %q is not available in this build", s.Pos("transport"), s.Name, s.Transport))
	}
	return t, nil
}

// CloseClients closes the clients every transport keeps, logging a failure
// at Error. consume calls it once its channels are closed: a stopped
// consume leaves no connection (and so no streaming pull the broker still
// feeds) behind, even when the process goes on (a restart in the
// same process found its messages held by the first start's stream).
func (r Registry) CloseClients(logger *slog.Logger) {
	for name, t := range r {
		if err := t.CloseClients(); err != nil {
			logger.Error("close broker clients failed", "transport", string(name), "error", err)
		}
	}
}

// CountCalls makes every transport of r that can (CallCounting) count the
// broker calls it sends into c. Call it before any channel is opened.
func (r Registry) CountCalls(c broker.CallCounter) {
	for name, t := range r {
		if cc, ok := t.(CallCounting); ok {
			r[name] = cc.CountingCalls(c)
		}
	}
}

// Default returns a fresh registry of every transport of this build (no
// shared state between commands or tests).
func Default() Registry {
	return Registry{
		config.TransportMemory:   &Memory{},
		config.TransportSQS:      &SQS{},
		config.TransportRocketMQ: RocketMQ{},
		config.TransportGCP:      &GCP{},
	}
}
