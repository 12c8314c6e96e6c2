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
	consumer broker.Consumer
	close    func(ctx context.Context) error
}

// transportFactory turns a subscription of one transport into a consumer
// (after makeChannels) and a producer. Each transport's wiring lives in its
// own transport_<name>.go file.
type transportFactory interface {
	// open applies makeChannels and returns the subscription's consumer.
	open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*openedChannel, error)
	// producer returns a producer in the transport's wire format.
	producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error)
}

// transports maps a transport name to its factory.
type transports map[config.Transport]transportFactory

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
