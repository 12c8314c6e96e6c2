package transport

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

// Memory wires the in-memory transport: one broker per process,
// shared by every memory subscription, seeded from memory.seed and dumped
// to memory.output at stop.
type Memory struct {
	once sync.Once
	b    *memory.Broker
}

// Broker is the process's in-memory broker, made on first use.
func (t *Memory) Broker() *memory.Broker {
	t.once.Do(func() { t.b = memory.NewBroker(false) })
	return t.b
}

// Open checks that memory.output can be written (memory.CheckOutput; a
// UsageError when not), seeds the subscription's queue from memory.seed
// and returns its consumer; closing it dumps every queue to memory.output,
// and returns the error when that fails.
func (t *Memory) Open(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (*Channel, error) {
	b := t.Broker()
	m := s.Memory
	if m.Output != "" {
		// Checked now, not first found at stop with the messages to write.
		if err := memory.CheckOutput(m.Output); err != nil {
			return nil, usageErr(fmt.Errorf("%s: memory.output %q: %w (the messages left at stop are written there)", s.Pos("memory.output"), m.Output, err))
		}
	}
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
			discardedWarning(logger, b, s)
			return nil
		}
		out, err := os.Create(m.Output)
		if err != nil {
			return fmt.Errorf("memory.output: %w", err)
		}
		return errors.Join(b.Dump(out), out.Close())
	}
	return &Channel{Consumer: c, Close: closeFn}, nil
}

// LogMemoryDiscarded is logged (Warning) at stop for a memory
// subscription with no memory.output whose dead-letter or invalid-message
// queue holds messages: they end with the process.
const LogMemoryDiscarded = "memory transport: messages routed to this subscription's destinations are discarded with the process (no memory.output)"

// discardedWarning logs LogMemoryDiscarded for s when its dead-letter or
// invalid-message queue on b holds messages, with how many each holds.
func discardedWarning(logger *slog.Logger, b *memory.Broker, s *config.Subscription) {
	var attrs []any
	total := 0
	seen := map[string]bool{}
	for _, q := range []string{s.DeadLetterRoutingKey, s.InvalidMessageRoutingKey} {
		if q == "" || seen[q] {
			continue
		}
		seen[q] = true
		if n := b.Depth(q); n > 0 {
			total += n
			attrs = append(attrs, slog.Int(q, n))
		}
	}
	if total == 0 {
		return
	}
	logger.Warn(LogMemoryDiscarded, "messages", total, slog.Group("queues", attrs...),
		"fix", "set memory.output to a file to keep what the queues hold at stop")
}

// Producer refuses (a UsageError): the memory transport lives inside one
// consume process.
func (t *Memory) Producer(ctx context.Context, f *config.File, s *config.Subscription, logger *slog.Logger) (broker.Producer, error) {
	return nil, usageErr(errors.New("the memory transport lives inside one consume process: add messages to its memory.seed file instead"))
}

// CloseClients: the memory broker is the process's own; nothing to close.
func (t *Memory) CloseClients() error { return nil }
