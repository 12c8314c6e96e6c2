package memory

import (
	"bufio"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
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
	c.router = broker.Router{DeadLetter: opts.DeadLetter, Invalid: opts.Invalid, Source: opts.Queue, Publisher: publisher{b}, Settler: c, Logger: opts.Logger}
	return c
}
