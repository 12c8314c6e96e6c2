package rocketmq_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/message"
)

// Short durations keep the package's tests well under a minute.
const (
	testInvisible = 1500 * time.Millisecond
	testAwait     = 300 * time.Millisecond
)

// logBuffer is a concurrency-safe slog sink for asserting on records.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// has reports whether a record at level with msg was logged.
func (l *logBuffer) has(level slog.Level, msg string) bool {
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, "level="+level.String()) && strings.Contains(line, `msg="`+msg+`"`) {
			return true
		}
	}
	return false
}

func newLogger() (*slog.Logger, *logBuffer) {
	lb := &logBuffer{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

type env struct {
	t   *testing.T
	srv *rmqtest.Server
	ctx context.Context
	// lost counts receives that failed with a channel failure. The client
	// can drop a receive response it got (ADR 0003): the broker then counts
	// a delivery attempt nobody saw, so a count may run ahead by up to lost.
	lost int
}

func newEnv(t *testing.T, topics ...string) *env {
	t.Helper()
	rocketmq.ConfigureClientLog(t.TempDir())
	srv, err := rmqtest.Start(rmqtest.Options{})
	if err != nil {
		t.Fatalf("start rmqtest: %v", err)
	}
	t.Cleanup(srv.Close)
	for _, tp := range topics {
		srv.CreateTopic(tp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	t.Cleanup(cancel)
	return &env{t: t, srv: srv, ctx: ctx}
}

func (e *env) conn() rocketmq.Connection {
	return rocketmq.Connection{Endpoint: e.srv.Endpoint(), AccessKey: "ak", SecretKey: "sk"}
}

func (e *env) consumer(opts rocketmq.ConsumerOptions) *rocketmq.Consumer {
	e.t.Helper()
	opts.Connection = e.conn()
	if opts.InvisibleDuration == 0 {
		opts.InvisibleDuration = testInvisible
	}
	if opts.AwaitDuration == 0 {
		opts.AwaitDuration = testAwait
	}
	c, err := rocketmq.NewConsumer(e.ctx, opts)
	if err != nil {
		e.t.Fatalf("new consumer: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func (e *env) producer(topic string) *rocketmq.Producer {
	e.t.Helper()
	p, err := rocketmq.NewProducer(e.ctx, rocketmq.ProducerOptions{Connection: e.conn(), Topic: topic})
	if err != nil {
		e.t.Fatalf("new producer: %v", err)
	}
	e.t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// send publishes a fresh Brighter message with the given id to topic.
func (e *env) send(topic, id string) *message.Message {
	e.t.Helper()
	m := message.New(id, topic, message.MTCommand, []byte(`{"n":1}`))
	if err := e.producer(topic).Send(e.ctx, m); err != nil {
		e.t.Fatalf("send: %v", err)
	}
	return m
}

// sendRaw publishes with the plain client, properties as given.
func (e *env) sendRaw(topic string, props map[string]string, body []byte) {
	e.t.Helper()
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: e.srv.Endpoint(), Credentials: &credentials.SessionCredentials{}}, rmq.WithTopics(topic))
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		e.t.Fatalf("raw producer: %v", err)
	}
	defer func() { _ = p.GracefulStop() }()
	msg := &rmq.Message{Topic: topic, Body: body}
	for k, v := range props {
		msg.AddProperty(k, v)
	}
	if _, err := p.Send(e.ctx, msg); err != nil {
		e.t.Fatalf("raw send: %v", err)
	}
}

// receiveOne polls until one message arrives or the deadline passes.
func (e *env) receiveOne(c *rocketmq.Consumer, within time.Duration) *message.Message {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ms, err := c.Receive(e.ctx, time.Second)
		if e.transient(err) {
			continue
		}
		if len(ms) > 0 {
			if len(ms) != 1 {
				e.t.Fatalf("received %d messages, want 1", len(ms))
			}
			return ms[0]
		}
	}
	e.t.Fatalf("no message within %s", within)
	return nil
}

// transient reports whether err is a channel failure, which the pump backs
// off from and retries (the client reports any broken receive stream as
// "CODE=DEADLINE_EXCEEDED", seen once under CI load): the helpers retry it
// too, within their deadline. Any other error fails the test.
func (e *env) transient(err error) bool {
	e.t.Helper()
	if err == nil {
		return false
	}
	if errors.Is(err, broker.ErrChannelFailure) {
		e.t.Logf("receive (retried): %v", err)
		e.lost++
		return true
	}
	e.t.Fatalf("receive: %v", err)
	return false
}

// receiveNone asserts that nothing arrives for the given time: neither a
// receive nor the broker (which also sees answers the client lost) may
// hand anything out.
func (e *env) receiveNone(c *rocketmq.Consumer, during time.Duration) {
	e.t.Helper()
	before := e.srv.Delivered()
	deadline := time.Now().Add(during)
	for time.Now().Before(deadline) {
		ms, err := c.Receive(e.ctx, time.Second)
		if e.transient(err) {
			continue
		}
		if len(ms) > 0 {
			e.t.Fatalf("unexpected message %s (count %d)", ms[0].Header.MessageID, ms[0].Header.HandledCount)
		}
	}
	if n := e.srv.Delivered() - before; n > 0 {
		e.t.Fatalf("the broker handed out %d message(s) while nothing was due (the client lost the answer)", n)
	}
}

// count fails the test unless m presents want, or up to one more for each
// receive so far that the client lost (a delivery nobody saw still counts,
// ADR 0003).
func (e *env) count(m *message.Message, want int, what string) {
	e.t.Helper()
	if got := m.Header.HandledCount; got < want || got > want+e.lost {
		e.t.Fatalf("%s: message %s count %d, want %d (+%d for receives the client lost)", what, m.Header.MessageID, got, want, e.lost)
	}
}
