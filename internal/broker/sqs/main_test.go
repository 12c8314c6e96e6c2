package sqs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// endpoint is the fauxqs emulator shared by every test of this binary.
var endpoint string

// waitBoundParallel is how many of this package's parallel tests run at
// once: they wait on visibility timeouts, back-offs and receive waits on
// fauxqs, not on the CPU.
const waitBoundParallel = 8

// TestMain runs the package's tests on one fauxqs, waitBoundParallel at a
// time.
func TestMain(m *testing.M) {
	if err := pumptest.WaitBoundParallel(waitBoundParallel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(sqstest.RunTests(m, "sqs", &endpoint))
}

func testClients(t testing.TB) *Clients {
	t.Helper()
	return NewClientsFromConfig(sqstest.Config(), endpoint)
}

// faultClient wraps the SDK's HTTP client and fails the requests fault
// chooses (by X-Amz-Target operation and JSON body) before they leave.
type faultClient struct {
	inner aws.HTTPClient
	fault func(op, body string) error
	calls atomic.Int64
}

func (f *faultClient) Do(r *http.Request) (*http.Response, error) {
	f.calls.Add(1)
	if f.fault != nil {
		var body []byte
		if r.Body != nil {
			var err error
			if body, err = io.ReadAll(r.Body); err != nil {
				return nil, err
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
		if err := f.fault(op, string(body)); err != nil {
			return nil, err
		}
	}
	return f.inner.Do(r)
}

func faultyClients(t testing.TB, fault func(op, body string) error) (*Clients, *faultClient) {
	t.Helper()
	fc := &faultClient{inner: awshttp.NewBuildableClient(), fault: fault}
	cfg := sqstest.Config()
	cfg.HTTPClient = fc
	cfg.RetryMaxAttempts = 1
	return NewClientsFromConfig(cfg, endpoint), fc
}

var nameSeq atomic.Int64

// uniq returns a fresh queue/topic base name for one test.
func uniq(base string) string {
	return fmt.Sprintf("%s-%d-%d", base, time.Now().UnixNano()%1_000_000_000, nameSeq.Add(1))
}

// logRecord is one captured slog record.
type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// logSink is an slog.Handler that keeps every record.
type logSink struct {
	mu      sync.Mutex
	records []logRecord
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	s.mu.Lock()
	s.records = append(s.records, rec)
	s.mu.Unlock()
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

func (s *logSink) find(level slog.Level, msg string) (logRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		if r.Level == level && r.Msg == msg {
			return r, true
		}
	}
	return logRecord{}, false
}

func newSink() (*logSink, *slog.Logger) {
	s := &logSink{}
	return s, slog.New(s)
}

// setup creates a subscription's channels and its consumer.
func setup(t testing.TB, c *Clients, ch ChannelOptions, co ConsumerOptions) *Consumer {
	t.Helper()
	ctx := context.Background()
	if err := NewChannelMaker(testClients(t), ch).EnsureChannels(ctx); err != nil {
		t.Fatalf("make channels: %v", err)
	}
	co.Queue, co.Fifo, co.Envelope = ch.Queue, ch.Fifo, ch.Envelope
	if co.DeadLetter == "" {
		co.DeadLetter = ch.DeadLetter
	}
	if co.Invalid == "" {
		co.Invalid = ch.Invalid
	}
	k, err := NewConsumer(c, co)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// receiveOne polls until one message arrives or within elapses.
func receiveOne(t testing.TB, k *Consumer, within time.Duration) *message.Message {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		wait := min(time.Until(deadline), 2*time.Second)
		ms, err := k.Receive(ctx, wait)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(ms) > 1 {
			t.Fatalf("received %d messages, want 1", len(ms))
		}
		if len(ms) == 1 {
			return ms[0]
		}
	}
	t.Fatalf("no message on %s within %s", k.QueueName(), within)
	return nil
}

// assertEmpty checks that nothing is visible on the queue within wait.
func assertEmpty(t testing.TB, k *Consumer, wait time.Duration) {
	t.Helper()
	ms, err := k.Receive(context.Background(), wait)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 0 {
		t.Fatalf("%s: received %d messages (first %s, type %v), want none", k.QueueName(), len(ms), ms[0].Header.MessageID, ms[0].Header.MessageType)
	}
}

// depth is the queue's visible + in-flight + delayed count.
func depth(t testing.TB, c *Clients, queue string) int {
	t.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		v, _ := strconv.Atoi(out.Attributes[k])
		n += v
	}
	return n
}

// rawSend puts a message on a queue with the plain SDK (a producer that is
// not Brighter).
func rawSend(t testing.TB, c *Clients, queue, body string, attrs map[string]string) string {
	t.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	in := &sqs.SendMessageInput{QueueUrl: u.QueueUrl, MessageBody: aws.String(body)}
	if len(attrs) > 0 {
		in.MessageAttributes = map[string]types.MessageAttributeValue{}
		for k, v := range attrs {
			in.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	out, err := c.SQS.SendMessage(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.MessageId)
}

// rawReceive reads one message with the plain SDK, every attribute asked for.
func rawReceive(t testing.TB, c *Clients, queue string) types.Message {
	t.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, WaitTimeSeconds: 2, MaxNumberOfMessages: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 {
			return out.Messages[0]
		}
	}
	t.Fatalf("no raw message on %s", queue)
	return types.Message{}
}

func newMessage(topic string) *message.Message {
	m := message.New(fmt.Sprintf("msg-%d", nameSeq.Add(1)), topic, message.MTCommand, []byte(`{"n":1}`))
	m.Header.Bag["tenant"] = "acme"
	return m
}

func send(t testing.TB, c *Clients, opts ProducerOptions, m *message.Message) {
	t.Helper()
	if err := NewProducer(c, opts).Send(context.Background(), m); err != nil {
		t.Fatalf("send: %v", err)
	}
}

var errInjected = errors.New("injected fault")

var _ = broker.ErrChannelFailure

func sqstestConfigNoRetry() aws.Config {
	cfg := sqstest.Config()
	cfg.RetryMaxAttempts = 1
	return cfg
}
