package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/config"
)

// openedChannel is one subscription's consumer, ready to pump.
type openedChannel struct {
	Consumer broker.Consumer
	Close    func(ctx context.Context) error
	// ShortPoll is inspect.Source.ShortPoll for a dlq scan
	// over consumer: true when its waiting receive that returns nothing
	// has asked every server (an SQS long poll).
	ShortPoll bool
	// Held is, for a dlq scan, how many messages of the destination another
	// reader Held invisible when this one opened it (SQS
	// ApproximateNumberOfMessagesNotVisible): 0 when none or when the
	// transport cannot tell (Pub/Sub, RocketMQ, memory).
	Held int64
}

// transportFactory turns a subscription of one transport into a consumer
// (after makeChannels) and a producer. Each transport's wiring lives in its
// own transport_<name>.go file.
type transportFactory interface {
	// Open applies makeChannels and returns the subscription's consumer.
	Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*openedChannel, error)
	// Producer returns a Producer in the transport's wire format.
	Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error)
}

// transports maps a transport name to its factory.
type transports map[config.Transport]transportFactory

// clientCloser is a factory that keeps broker clients across the channels
// it opens (Pub/Sub: one client per project); closeClients closes them.
type clientCloser interface {
	CloseClients() error
}

// closeClients closes the clients every factory keeps, logging a failure
// at Error. consume calls it once its channels are closed: a stopped
// consume leaves no connection (and so no streaming pull the broker still
// feeds) behind, even when the process goes on (issue 15: a restart in the
// same process found its messages held by the first start's stream).
func (ts transports) closeClients(logger *slog.Logger) {
	for name, f := range ts {
		if c, ok := f.(clientCloser); ok {
			if err := c.CloseClients(); err != nil {
				logger.Error("close broker clients failed", "transport", string(name), "error", err)
			}
		}
	}
}

// defaultTransports returns a fresh set of factories (no shared state
// between commands or tests).
func defaultTransports() transports {
	return transports{
		config.TransportMemory:   &memoryTransport{},
		config.TransportSQS:      &sqsTransport{},
		config.TransportRocketMQ: rocketmqTransport{},
		config.TransportGCP:      &gcpTransport{},
	}
}

func (t transports) get(s *config.Subscription) (transportFactory, error) {
	f, ok := t[s.Transport]
	if !ok {
		return nil, usageErr(fmt.Errorf("%s: subscription %s: transport %q is not available in this build", s.Pos("transport"), s.Name, s.Transport))
	}
	return f, nil
}
