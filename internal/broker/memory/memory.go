package memory

import (
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// ErrStaleReceipt is returned when a message is settled with a receipt that
// no longer holds it (it was settled already, or its visibility timeout
// lapsed and it was received again). It wraps broker.ErrStaleReceipt.
var ErrStaleReceipt = fmt.Errorf("memory: %w", broker.ErrStaleReceipt)

// ErrNoQueue is returned by a publish to a queue that does not exist when the
// broker was made with RequireQueues.
var ErrNoQueue = errors.New("memory: queue does not exist")

// DefaultVisibilityTimeout is how long a received message stays invisible
// when the consumer sets no visibility timeout (30 s, as SQS).
const DefaultVisibilityTimeout = 30 * time.Second

// Fault makes a broker call fail on demand; it returns nil to let the call go
// through. The message is the one the call is about.
type Fault func(queue string, m *message.Message) error

// Broker holds named queues in memory. The zero value is not usable; call
// NewBroker. It is safe for concurrent use.
type Broker struct {
	mu            sync.Mutex
	queues        map[string]*queue
	requireQueues bool
	// stored numbers every copy stored (message.Message.StoredID).
	stored uint64

	publishFault atomic.Pointer[Fault]
	releaseFault atomic.Pointer[Fault]
	ackFault     atomic.Pointer[Fault]
	receiveFault atomic.Pointer[Fault]
	extendFault  atomic.Pointer[Fault]
}

// NewBroker makes an empty broker. With requireQueues, a publish to a queue
// that was never created with CreateQueue fails with ErrNoQueue (like a
// broker whose dead-letter queue is missing); otherwise queues spring into
// being on first use.
func NewBroker(requireQueues bool) *Broker {
	return &Broker{queues: map[string]*queue{}, requireQueues: requireQueues}
}

// SetPublishFault installs (or, with nil, removes) a fault on publishes.
func (b *Broker) SetPublishFault(f Fault) { b.publishFault.Store(&f) }

// SetReleaseFault installs a fault on releases (requeues at delay 0 made by
// rejection routing) and on Requeue.
func (b *Broker) SetReleaseFault(f Fault) { b.releaseFault.Store(&f) }

// SetAcknowledgeFault installs a fault on acknowledgements.
func (b *Broker) SetAcknowledgeFault(f Fault) { b.ackFault.Store(&f) }

// SetReceiveFault installs a fault on receives; the error is wrapped in
// broker.ErrChannelFailure. The message argument is nil.
func (b *Broker) SetReceiveFault(f Fault) { b.receiveFault.Store(&f) }

// SetExtendFault installs a fault on lease extensions (ExtendLeases), called
// once per message.
func (b *Broker) SetExtendFault(f Fault) { b.extendFault.Store(&f) }

func fire(p *atomic.Pointer[Fault], q string, m *message.Message) error {
	if f := p.Load(); f != nil && *f != nil {
		return (*f)(q, m)
	}
	return nil
}

// CreateQueue makes the queue if it does not exist. Creating twice is
// harmless.
func (b *Broker) CreateQueue(name string) {
	b.mu.Lock()
	b.queueLocked(name)
	b.mu.Unlock()
}

func (b *Broker) queueLocked(name string) *queue {
	q := b.queues[name]
	if q == nil {
		q = &queue{name: name, notify: make(chan struct{})}
		b.queues[name] = q
	}
	return q
}

// Publish stores a copy of m on the queue (its receipt dropped), visible
// after m.Header.Delay. It returns ErrNoQueue (see NewBroker) or the
// publish fault's error.
func (b *Broker) Publish(ctx context.Context, queueName string, m *message.Message) error {
	if err := fire(&b.publishFault, queueName, m); err != nil {
		return fmt.Errorf("publish to %s: %w", queueName, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[queueName]
	if q == nil {
		if b.requireQueues {
			return fmt.Errorf("publish to %s: %w", queueName, ErrNoQueue)
		}
		q = b.queueLocked(queueName)
	}
	e := &entry{msg: m.Clone(), index: -1}
	e.msg.DeliveryAttempt = 0
	b.stored++
	e.msg.StoredID = strconv.FormatUint(b.stored, 10)
	if d := m.Header.Delay; d > 0 {
		e.visibleAt = time.Now().Add(d)
		heap.Push(&q.waiting, e)
	} else {
		q.ready = append(q.ready, e)
	}
	q.signalLocked()
	return nil
}

// Depth reports how many messages the queue holds: ready, delayed and in
// flight.
func (b *Broker) Depth(queueName string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[queueName]
	if q == nil {
		return 0
	}
	return len(q.ready) - q.head + q.waiting.Len()
}

// Snapshot returns copies of every message the queue holds, in no promised
// order, with HandledCount as stored (no delivery presented).
func (b *Broker) Snapshot(queueName string) []*message.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[queueName]
	if q == nil {
		return nil
	}
	var out []*message.Message
	for _, e := range q.ready[q.head:] {
		out = append(out, e.msg.Clone())
	}
	for _, e := range q.waiting {
		out = append(out, e.msg.Clone())
	}
	return out
}

// Queues returns the names of every queue, sorted.
func (b *Broker) Queues() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := make([]string, 0, len(b.queues))
	for n := range b.queues {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Load publishes every message of a JSON-lines stream (message.Record
// shape) to queueName, or to each record's own topic when queueName is "".
// It returns how many it loaded and an error naming the line of the first
// record that does not decode.
func (b *Broker) Load(ctx context.Context, r io.Reader, queueName string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n, line := 0, 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(trimSpace(raw)) == 0 {
			continue
		}
		m, err := message.UnmarshalRecordJSON(raw)
		if err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		dest := queueName
		if dest == "" {
			dest = m.Header.Topic
		}
		if err := b.Publish(ctx, dest, m); err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("read messages: %w", err)
	}
	return n, nil
}

// Dump writes every message of every queue as JSON lines (message.Record
// shape), queues in name order, each record's topic set to its queue.
func (b *Broker) Dump(w io.Writer) error {
	for _, name := range b.Queues() {
		for _, m := range b.Snapshot(name) {
			m.Header.Topic = name
			line, err := message.MarshalRecordJSON(m)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("write messages: %w", err)
			}
		}
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

type entry struct {
	msg       *message.Message
	visibleAt time.Time
	token     uint64 // changes on every receive; a receipt holds the token it was given
	index     int    // position in the waiting heap, -1 when not there
	inFlight  bool
	done      bool
}

type receipt struct {
	q     *queue
	e     *entry
	token uint64
}

type queue struct {
	name    string
	ready   []*entry
	head    int
	waiting waitHeap // delayed and in-flight entries, by visibleAt
	notify  chan struct{}
	waiters int // receivers blocked on notify
	tokens  uint64
}

// signalLocked wakes every receiver waiting on the queue. With none waiting
// there is nobody to wake, so the channel is kept (no allocation per
// acknowledge on a busy queue).
func (q *queue) signalLocked() {
	if q.waiters == 0 {
		return
	}
	close(q.notify)
	q.notify = make(chan struct{})
}

// promoteLocked moves entries whose time has come to the ready list; an
// in-flight entry whose visibility timeout lapsed becomes receivable again.
func (q *queue) promoteLocked(now time.Time) {
	for q.waiting.Len() > 0 && !q.waiting[0].visibleAt.After(now) {
		e := heap.Pop(&q.waiting).(*entry)
		e.inFlight = false
		q.ready = append(q.ready, e)
	}
}

func (q *queue) popReadyLocked() *entry {
	if q.head >= len(q.ready) {
		return nil
	}
	e := q.ready[q.head]
	q.ready[q.head] = nil
	q.head++
	if q.head == len(q.ready) {
		q.ready, q.head = q.ready[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.ready) {
		n := copy(q.ready, q.ready[q.head:])
		clear(q.ready[n:])
		q.ready, q.head = q.ready[:n], 0
	}
	return e
}

type waitHeap []*entry

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].visibleAt.Before(h[j].visibleAt) }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waitHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *waitHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.index = -1
	*h = old[:n-1]
	return e
}

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

// NewConsumer makes a consumer of opts.Queue, creating the queue.
func (b *Broker) NewConsumer(opts ConsumerOptions) *Consumer {
	if opts.BufferSize <= 0 {
		opts.BufferSize = 1
	}
	if opts.VisibilityTimeout <= 0 {
		opts.VisibilityTimeout = DefaultVisibilityTimeout
	}
	b.CreateQueue(opts.Queue)
	c := &Consumer{b: b, opts: opts}
	c.router = broker.Router{DeadLetter: opts.DeadLetter, Invalid: opts.Invalid, Publisher: publisher{b}, Settler: c, Logger: opts.Logger}
	return c
}

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

// Producer publishes to a Broker. It implements broker.Producer.
type Producer struct{ B *Broker }

// Send publishes m to the queue named by m.Header.Topic.
func (p Producer) Send(ctx context.Context, m *message.Message) error {
	return p.B.Publish(ctx, m.Header.Topic, m)
}

// Close does nothing.
func (p Producer) Close(ctx context.Context) error { return nil }
