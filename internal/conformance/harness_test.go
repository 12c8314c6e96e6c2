package conformance

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// memoryFixture proves the harness and the behaviours themselves on the
// memory transport. Its cells go to a ledger of their own, never to
// docs/conformance.md: the memory transport is not a broker.
type memoryFixture struct{ seq atomic.Int64 }

func (f *memoryFixture) Transport() string     { return "memory" }
func (f *memoryFixture) Configuration() string { return "Memory" }
func (f *memoryFixture) Ordered() bool         { return false }

// LongPolls reports true: a receive waits up to its timeout for a message
// (longPollFixture).
func (f *memoryFixture) LongPolls() bool { return true }

type memoryChannel struct {
	b                           *memory.Broker
	queue, dlq, invalid, native string
	lease                       time.Duration
	maxReceive                  int
	logger                      Setup
}

func (f *memoryFixture) Open(t *testing.T, s Setup) Channel {
	n := f.seq.Add(1)
	b := memory.NewBroker(true)
	c := &memoryChannel{b: b, queue: fmt.Sprintf("q%d", n), lease: s.Lease, maxReceive: s.NativeMaxDeliveries, logger: s}
	b.CreateQueue(c.queue)
	if c.lease == 0 {
		c.lease = time.Minute
	}
	if s.DeadLetter {
		c.dlq = c.queue + ".dlq"
		b.CreateQueue(c.dlq)
	}
	if s.MissingDeadLetter {
		c.dlq = c.queue + ".missing"
	}
	if s.DeadLetterDown {
		c.dlq = c.queue + ".dlq" // created by HealDeadLetter
	}
	if s.Invalid {
		c.invalid = c.queue + ".invalid"
		b.CreateQueue(c.invalid)
	}
	if s.NativeMaxDeliveries > 0 {
		c.native = c.queue + ".native"
		b.CreateQueue(c.native)
	}
	return c
}

func (c *memoryChannel) Consumer(t testing.TB, bufferSize int) broker.Consumer {
	return c.b.NewConsumer(memory.ConsumerOptions{Queue: c.queue, BufferSize: bufferSize, VisibilityTimeout: c.lease,
		DeadLetter: c.dlq, Invalid: c.invalid, MaxReceiveCount: c.maxReceive, NativeDeadLetter: c.native, Logger: c.logger.Logger})
}

func (c *memoryChannel) Send(t testing.TB, m *message.Message) {
	m.Header.Topic = c.queue
	if err := c.b.Publish(t.Context(), c.queue, m); err != nil {
		t.Fatal(err)
	}
}

func (c *memoryChannel) reader(q string) broker.Consumer {
	if q == "" {
		return nil
	}
	return c.b.NewConsumer(memory.ConsumerOptions{Queue: q, VisibilityTimeout: time.Minute})
}

func (c *memoryChannel) SourceTopic() string                     { return c.queue }
func (c *memoryChannel) RedeliveryBound() time.Duration          { return c.lease }
func (c *memoryChannel) DeadLetter(t testing.TB) broker.Consumer { return c.reader(c.dlq) }
func (c *memoryChannel) Invalid(t testing.TB) broker.Consumer    { return c.reader(c.invalid) }
func (c *memoryChannel) Native(t testing.TB) broker.Consumer     { return c.reader(c.native) }

// HealDeadLetter creates the dead-letter queue of a Setup.DeadLetterDown
// channel.
func (c *memoryChannel) HealDeadLetter(t testing.TB) { c.b.CreateQueue(c.dlq) }

func TestHarnessOnMemoryTransport(t *testing.T) {
	t.Parallel()
	own := NewLedger()
	t.Run("variants", func(t *testing.T) {
		for _, v := range Variants {
			t.Run(string(v), func(t *testing.T) {
				t.Parallel()
				RunAll(t, own, &memoryFixture{}, v)
			})
		}
	})
	RunConsumerRows(t, own, &memoryFixture{})
	if sk := own.Skipped(); len(sk) > 0 {
		t.Errorf("skipped cells prove nothing: %v", sk)
	}
	if out := own.Render(); testing.Verbose() {
		t.Log(out)
	}
}
