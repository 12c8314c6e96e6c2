package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/config"
)

// memoryTransport wires the in-memory transport: one broker per process,
// shared by every memory subscription, seeded from memory.seed and dumped
// to memory.output at stop.
type memoryTransport struct {
	once sync.Once
	b    *memory.Broker
}

func (t *memoryTransport) Broker() *memory.Broker {
	t.once.Do(func() { t.b = memory.NewBroker(false) })
	return t.b
}

func (t *memoryTransport) Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*openedChannel, error) {
	b := t.Broker()
	m := s.Memory
	if m.Seed != "" {
		fh, err := os.Open(m.Seed)
		if err != nil {
			return nil, usageErr(fmt.Errorf("memory.seed: %w", err))
		}
		n, err := b.Load(ctx, fh, s.ChannelName)
		fh.Close()
		if err != nil {
			return nil, usageErr(fmt.Errorf("memory.seed %s: %w", m.Seed, err))
		}
		logger.Info("memory channel seeded", "file", m.Seed, "messages", n, "queue", s.ChannelName)
	}
	c := b.NewConsumer(memory.ConsumerOptions{
		Queue: s.ChannelName, BufferSize: s.BufferSize, VisibilityTimeout: m.VisibilityTimeout,
		DeadLetter: s.DeadLetterRoutingKey, Invalid: s.InvalidMessageRoutingKey,
		StopWhenEmpty: m.StopWhenEmpty, Logger: logger,
	})
	closeFn := func(ctx context.Context) error {
		if m.Output == "" {
			return nil
		}
		out, err := os.Create(m.Output)
		if err != nil {
			return fmt.Errorf("memory.output: %w", err)
		}
		return errors.Join(b.Dump(out), out.Close())
	}
	return &openedChannel{Consumer: c, Close: closeFn}, nil
}

func (t *memoryTransport) Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	return nil, usageErr(errors.New("the memory transport lives inside one consume process: add messages to its memory.seed file instead"))
}
