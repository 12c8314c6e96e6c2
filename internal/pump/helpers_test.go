package pump_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// variants is the table every pump rule runs over: every behaviour is
// proven in both variants, as the conformance ledger proves each row in
// both (docs/testing.md).
var variants = []pump.Variant{pump.Reactor, pump.Proactor}

// forEachVariant runs f once per pump variant as a subtest.
func forEachVariant(t *testing.T, f func(t *testing.T, v pump.Variant)) {
	t.Helper()
	for _, v := range variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			f(t, v)
		})
	}
}

// syncBuffer is a goroutine-safe bytes.Buffer for a slog JSON handler.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records decodes every JSON log record written so far.
func (b *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	data := append([]byte(nil), b.buf.Bytes()...)
	b.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// withMsg returns the records whose msg is msg.
func withMsg(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// env is one pump under test over the memory transport.
type env struct {
	b      *memory.Broker
	c      *memory.Consumer
	logs   *syncBuffer
	logger *slog.Logger
	events *pumptest.Events
	calls  atomic.Int64 // handler invocations

	run  context.CancelFunc
	done chan error
}

const (
	srcQueue = "orders"
	dlqQueue = "orders.dlq"
	invQueue = "orders.invalid"
)

// newEnv makes a broker and a consumer of srcQueue. copts.Queue defaults to
// srcQueue; DeadLetter and Invalid are set by the caller.
func newEnv(t *testing.T, copts memory.ConsumerOptions) *env {
	t.Helper()
	e := &env{b: memory.NewBroker(false), logs: &syncBuffer{}, events: pumptest.NewEvents()}
	e.logger = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if copts.Queue == "" {
		copts.Queue = srcQueue
	}
	if copts.Logger == nil {
		copts.Logger = e.logger
	}
	e.c = e.b.NewConsumer(copts)
	return e
}

// fastOptions are pump options with short delays for tests.
func fastOptions(v pump.Variant) pump.Options {
	return pump.Options{
		Subscription:        "test",
		Variant:             v,
		TimeOut:             5 * time.Millisecond,
		RequeueCount:        -1,
		EmptyChannelDelay:   time.Millisecond,
		ChannelFailureDelay: time.Millisecond,
		DrainTimeout:        5 * time.Second,
	}
}

// publish puts a fresh MT_COMMAND message on q.
func (e *env) publish(t *testing.T, q, id, key string) *message.Message {
	t.Helper()
	m := message.New(id, q, message.MTCommand, []byte(`{"id":"`+id+`"}`))
	m.Header.PartitionKey = key
	if err := e.b.Publish(context.Background(), q, m); err != nil {
		t.Fatalf("publish %s: %v", id, err)
	}
	return m
}

// publishMsg puts m on q.
func (e *env) publishMsg(t *testing.T, q string, m *message.Message) {
	t.Helper()
	if err := e.b.Publish(context.Background(), q, m); err != nil {
		t.Fatalf("publish %s: %v", m.Header.MessageID, err)
	}
}

// start runs a pump over e.c (or c when given) with h counted.
func (e *env) start(t *testing.T, opts pump.Options, h pump.Handler) {
	t.Helper()
	e.startWith(t, e.c, opts, h)
}

func (e *env) startWith(t *testing.T, c broker.Consumer, opts pump.Options, h pump.Handler) {
	t.Helper()
	counted := func(ctx context.Context, m *message.Message) pump.Result {
		e.calls.Add(1)
		return h(ctx, m)
	}
	p, err := pump.New(c, counted, opts, e.events, pump.LogObserver{Logger: e.logger})
	if err != nil {
		t.Fatalf("pump.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.run = cancel
	e.done = make(chan error, 1)
	go func() { e.done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-e.done:
		case <-time.After(20 * time.Second):
			t.Errorf("pump did not stop")
		}
	})
}

// wait waits for Run to return and gives its error.
func (e *env) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-e.done:
		e.done <- err // keep it for Cleanup
		return err
	case <-time.After(within):
		t.Fatalf("pump did not stop within %v", within)
	}
	return nil
}

// stop cancels the pump and waits for Run.
func (e *env) stop(t *testing.T) error {
	t.Helper()
	e.run()
	return e.wait(t, 15*time.Second)
}

// receiveAll drains q with a fresh consumer (visibility long enough to keep
// them while the test reads them).
func (e *env) receiveAll(t *testing.T, q string) []*message.Message {
	t.Helper()
	c := e.b.NewConsumer(memory.ConsumerOptions{Queue: q, BufferSize: 10, Logger: e.logger})
	var out []*message.Message
	for {
		ms, err := c.Receive(context.Background(), time.Millisecond)
		if err != nil {
			t.Fatalf("receive %s: %v", q, err)
		}
		if len(ms) == 0 {
			return out
		}
		out = append(out, ms...)
	}
}

func ack(context.Context, *message.Message) pump.Result { return pump.Result{Outcome: pump.Ack} }

func deferAlways(context.Context, *message.Message) pump.Result {
	return pump.Result{Outcome: pump.Defer}
}

// requireFiveKeys checks the rejection metadata of a routed copy.
func requireFiveKeys(t *testing.T, m *message.Message, reason string) {
	t.Helper()
	for _, k := range message.RejectionKeys {
		if _, ok := m.Header.Bag[k]; !ok {
			t.Errorf("routed copy %s lacks bag key %q; bag %v", m.Header.MessageID, k, m.Header.Bag)
		}
	}
	if got, _ := m.Header.Bag.String(message.KeyRejectionReason); got != reason {
		t.Errorf("rejectionReason = %q, want %q", got, reason)
	}
	if got, _ := m.Header.Bag.String(message.KeyOriginalTopic); got != srcQueue {
		t.Errorf("originalTopic = %q, want %q", got, srcQueue)
	}
}

// countingConsumer wraps the memory consumer to count calls and the
// messages held by the pump (received, not yet settled). It forwards
// AcknowledgeBatch so the Proactor's asynchronous settling is exercised.
type countingConsumer struct {
	*memory.Consumer
	requeues    atomic.Int64
	outstanding atomic.Int64
	maxOut      atomic.Int64
}

func (c *countingConsumer) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	return c.count(c.Consumer.Receive(ctx, d))
}

func (c *countingConsumer) count(ms []*message.Message, err error) ([]*message.Message, error) {
	n := int64(0)
	for _, m := range ms {
		if m.Header.MessageType != message.MTQuit {
			n++
		}
	}
	cur := c.outstanding.Add(n)
	for {
		old := c.maxOut.Load()
		if cur <= old || c.maxOut.CompareAndSwap(old, cur) {
			break
		}
	}
	return ms, err
}

func (c *countingConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	c.outstanding.Add(-1)
	return c.Consumer.Acknowledge(ctx, m)
}

func (c *countingConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	c.outstanding.Add(-int64(len(ms)))
	return c.Consumer.AcknowledgeBatch(ctx, ms)
}

func (c *countingConsumer) Requeue(ctx context.Context, m *message.Message, d time.Duration) error {
	c.requeues.Add(1)
	c.outstanding.Add(-1)
	return c.Consumer.Requeue(ctx, m, d)
}

func (c *countingConsumer) Reject(ctx context.Context, m *message.Message, r message.Rejection) broker.RejectResult {
	c.outstanding.Add(-1)
	return c.Consumer.Reject(ctx, m, r)
}

var _ broker.BatchAcknowledger = (*countingConsumer)(nil)

// attr returns a log record attribute as text.
func attr(rec map[string]any, k string) string {
	v, ok := rec[k]
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return strings.TrimSuffix(fmt.Sprint(v), ".0")
}
