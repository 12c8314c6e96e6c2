package memory

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ConsumerOptions configure a Consumer.
type ConsumerOptions struct {
	// Queue is the queue to read.
	Queue string
	// BufferSize is how many messages one Receive returns at most (1..10;
	// 0 means 1).
	BufferSize int
	// VisibilityTimeout is how long a received message stays invisible
	// before it is delivered again; 0 means DefaultVisibilityTimeout.
	VisibilityTimeout time.Duration
	// DeadLetter and Invalid are the rejection destinations (queue names).
	DeadLetter, Invalid string
	// MaxReceiveCount and NativeDeadLetter model a native redrive policy
	// (SQS maxReceiveCount): a message received MaxReceiveCount times is
	// moved, unchanged and without rejection metadata, to NativeDeadLetter on
	// its next receive. 0 means no native redrive.
	MaxReceiveCount  int
	NativeDeadLetter string
	// StopWhenEmpty makes Receive return an MT_QUIT message once the queue
	// holds nothing at all (ready, delayed or in flight), so a pump over
	// captured messages ends by itself.
	StopWhenEmpty bool
	// Logger receives the consumer's records; nil means slog.Default().
	Logger *slog.Logger
}

// Consumer reads one queue of a Broker. It implements broker.Consumer,
// broker.BatchAcknowledger and broker.LeaseExtender.
type Consumer struct {
	b      *Broker
	opts   ConsumerOptions
	router broker.Router
}

var (
	_ broker.Consumer          = (*Consumer)(nil)
	_ broker.BatchAcknowledger = (*Consumer)(nil)
	_ broker.LeaseExtender     = (*Consumer)(nil)
)

type publisher struct{ b *Broker }

func (p publisher) Publish(ctx context.Context, dest string, m *message.Message) error {
	return p.b.Publish(ctx, dest, m)
}

// Receive returns up to BufferSize visible messages, waiting at most timeout
// for the first. Each receive increments the stored message's delivery
// attempt and presents broker.PresentedCount.
func (c *Consumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	limit := c.opts.BufferSize
	if err := fire(&c.b.receiveFault, c.opts.Queue, nil); err != nil {
		return nil, fmt.Errorf("receive from %s: %w: %w", c.opts.Queue, broker.ErrChannelFailure, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		c.b.mu.Lock()
		q := c.b.queueLocked(c.opts.Queue)
		now := time.Now()
		q.promoteLocked(now)
		var out []*message.Message
		for len(out) < limit {
			e := q.popReadyLocked()
			if e == nil {
				break
			}
			if c.opts.MaxReceiveCount > 0 && e.msg.DeliveryAttempt >= c.opts.MaxReceiveCount {
				e.done = true
				moved := e.msg.Clone()
				moved.DeliveryAttempt = 0
				c.b.stored++
				moved.StoredID = strconv.FormatUint(c.b.stored, 10)
				dq := c.b.queueLocked(c.opts.NativeDeadLetter)
				dq.ready = append(dq.ready, &entry{msg: moved, index: -1})
				dq.signalLocked()
				continue
			}
			out = append(out, c.deliverLocked(q, e, now))
		}
		if len(out) > 0 {
			c.b.mu.Unlock()
			return out, nil
		}
		if c.opts.StopWhenEmpty && q.waiting.Len() == 0 {
			c.b.mu.Unlock()
			return []*message.Message{{Header: message.Header{MessageType: message.MTQuit}}}, nil
		}
		wait := time.Until(deadline)
		if q.waiting.Len() > 0 {
			if d := q.waiting[0].visibleAt.Sub(now); d < wait {
				wait = d
			}
		}
		if time.Until(deadline) <= 0 {
			c.b.mu.Unlock()
			return nil, nil
		}
		if wait <= 0 {
			c.b.mu.Unlock()
			continue
		}
		notify := q.notify
		q.waiters++
		c.b.mu.Unlock()
		t := time.NewTimer(wait)
		var done bool
		select {
		case <-ctx.Done():
			done = true
		case <-notify:
		case <-t.C:
		}
		t.Stop()
		c.b.mu.Lock()
		q.waiters--
		c.b.mu.Unlock()
		if done {
			return nil, nil
		}
	}
}

func (c *Consumer) deliverLocked(q *queue, e *entry, now time.Time) *message.Message {
	q.tokens++
	e.token = q.tokens
	e.msg.DeliveryAttempt++
	e.inFlight = true
	e.visibleAt = now.Add(c.opts.VisibilityTimeout)
	heap.Push(&q.waiting, e)
	// One allocation holds the delivered copy and its receipt; the receipt
	// travels as a pointer, so boxing it in Message.Receipt allocates
	// nothing more.
	d := &delivery{msg: *e.msg, rcpt: receipt{q: q, e: e, token: e.token}}
	m := &d.msg
	m.Header.Bag = maps.Clone(e.msg.Header.Bag)
	if m.Header.Bag == nil {
		m.Header.Bag = message.Bag{}
	}
	m.Header.HandledCount = broker.PresentedCount(e.msg.Header.HandledCount, e.msg.DeliveryAttempt, e.msg.HasRejectionMetadata())
	m.Receipt = &d.rcpt
	return m
}

// delivery is a received copy and its receipt, allocated together.
type delivery struct {
	msg  message.Message
	rcpt receipt
}

// holdLocked finds the entry a message's receipt still holds.
func (c *Consumer) holdLocked(m *message.Message) (*queue, *entry, error) {
	r, ok := m.Receipt.(*receipt)
	if !ok || r == nil {
		return nil, nil, fmt.Errorf("message %s has no memory receipt: %w", m.Header.MessageID, ErrStaleReceipt)
	}
	if r.e.done || !r.e.inFlight || r.e.token != r.token {
		return nil, nil, fmt.Errorf("message %s: %w", m.Header.MessageID, ErrStaleReceipt)
	}
	return r.q, r.e, nil
}

// Acknowledge removes the message. It returns ErrStaleReceipt or the
// acknowledge fault's error.
func (c *Consumer) Acknowledge(ctx context.Context, m *message.Message) error {
	if err := fire(&c.b.ackFault, c.opts.Queue, m); err != nil {
		return fmt.Errorf("acknowledge %s: %w", m.Header.MessageID, err)
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	q, e, err := c.holdLocked(m)
	if err != nil {
		return err
	}
	e.done = true
	if e.index >= 0 {
		heap.Remove(&q.waiting, e.index)
	}
	q.signalLocked()
	return nil
}

// AckBatchMax is 10, the most messages a batch of the pump's carries on
// SQS, which the memory transport stands in for in tests
// (broker.BatchAcknowledger).
func (c *Consumer) AckBatchMax() int { return 10 }

// AcknowledgeBatch acknowledges each message; one error per message.
func (c *Consumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = c.Acknowledge(ctx, m)
	}
	return errs
}

// Requeue makes the message visible again after delay without rewriting it.
func (c *Consumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	if err := fire(&c.b.releaseFault, c.opts.Queue, m); err != nil {
		return fmt.Errorf("requeue %s: %w", m.Header.MessageID, err)
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	q, e, err := c.holdLocked(m)
	if err != nil {
		return err
	}
	e.inFlight = false
	e.token = 0
	e.visibleAt = time.Now().Add(max(delay, 0))
	heap.Fix(&q.waiting, e.index)
	q.signalLocked()
	return nil
}

// Lease returns the visibility timeout: how long a received message stays
// invisible (broker.LeaseExtender).
func (c *Consumer) Lease() time.Duration { return c.opts.VisibilityTimeout }

// ExtendLeases makes each message invisible for d from now
// (broker.LeaseExtender). A message no longer held by its receipt gets
// ErrStaleReceipt, as does one whose lease lapsed already; the extend fault's error is returned as it is.
func (c *Consumer) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	errs := make([]error, len(ms))
	for i, m := range ms {
		if err := fire(&c.b.extendFault, c.opts.Queue, m); err != nil {
			errs[i] = fmt.Errorf("extend lease of %s: %w", m.Header.MessageID, err)
			continue
		}
		c.b.mu.Lock()
		q, e, err := c.holdLocked(m)
		if err == nil && !e.visibleAt.After(time.Now()) {
			// Its lease lapsed: anyone may receive it now (SQS says
			// MessageNotInflight).
			err = fmt.Errorf("message %s: lease lapsed: %w", m.Header.MessageID, ErrStaleReceipt)
		}
		if err == nil {
			e.visibleAt = time.Now().Add(max(d, 0))
			heap.Fix(&q.waiting, e.index)
		}
		c.b.mu.Unlock()
		errs[i] = err
	}
	return errs
}

// Release makes the message visible again after delay (broker.Settler).
func (c *Consumer) Release(ctx context.Context, m *message.Message, delay time.Duration) error {
	return c.Requeue(ctx, m, delay)
}

// Reject routes the message through the shared broker.Router.
func (c *Consumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	return c.router.Reject(ctx, m, r)
}

// Purge removes every message of the queue.
func (c *Consumer) Purge(ctx context.Context) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	q := c.b.queueLocked(c.opts.Queue)
	for _, e := range q.waiting {
		e.done = true
	}
	q.ready, q.head, q.waiting = nil, 0, nil
	return nil
}

// Close does nothing: in-flight messages are left to the broker.
func (c *Consumer) Close(ctx context.Context) error { return nil }
