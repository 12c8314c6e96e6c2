package inspect_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
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
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// endpoint is the fauxqs emulator shared by every test of this binary.
var endpoint string

// waitBoundParallel is how many of this package's parallel tests (the SQS
// and Pub/Sub ones; the RocketMQ ones are serial, see rocketmq_test.go) run
// at once: they wait on visibility timeouts and ack deadlines, not on the
// CPU.
const waitBoundParallel = 8

func TestMain(m *testing.M) {
	if err := pumptest.WaitBoundParallel(waitBoundParallel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := sqstest.RunTests(m, "inspect", &endpoint)
	gcptest.StopShared() // the Pub/Sub tests' Google emulator, if one started
	os.Exit(code)
}

func clients(t testing.TB) *sqs.Clients {
	t.Helper()
	return sqs.NewClientsFromConfig(sqstest.Config(), endpoint)
}

// faultClient fails the SQS operations fault chooses (by X-Amz-Target)
// before they leave the process, and counts the calls of each operation.
type faultClient struct {
	inner aws.HTTPClient
	fault func(op string) error
	mu    sync.Mutex
	calls map[string]int
}

// count returns how many calls of op were made (failed ones included).
func (f *faultClient) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *faultClient) Do(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	f.mu.Lock()
	f.calls[op]++
	f.mu.Unlock()
	if err := f.fault(op); err != nil {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		return nil, err
	}
	return f.inner.Do(r)
}

func faultyClients(t testing.TB, fault func(op string) error) *sqs.Clients {
	t.Helper()
	c, _ := countingClients(t, fault)
	return c
}

// countingClients is faultyClients that also returns the fault client, to
// count calls by operation.
func countingClients(t testing.TB, fault func(op string) error) (*sqs.Clients, *faultClient) {
	t.Helper()
	fc := &faultClient{inner: awshttp.NewBuildableClient(), fault: fault, calls: map[string]int{}}
	cfg := sqstest.Config()
	cfg.HTTPClient = fc
	cfg.RetryMaxAttempts = 1
	return sqs.NewClientsFromConfig(cfg, endpoint), fc
}

var seq atomic.Int64

func uniq(base string) string {
	return fmt.Sprintf("%s-%d-%d", base, time.Now().UnixNano()%1_000_000_000, seq.Add(1))
}

// makeQueues creates a subscription's queue and its dead-letter queue.
func makeQueues(t testing.TB, c *sqs.Clients, queue, dlq string, fifo bool) {
	t.Helper()
	if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: queue, DeadLetter: dlq, Fifo: fifo}).EnsureChannels(context.Background()); err != nil {
		t.Fatalf("make channels: %v", err)
	}
}

// reader is the transport's ordinary consumer over a destination, as the
// dlq command builds it.
func reader(t testing.TB, c *sqs.Clients, queue string, fifo bool) *sqs.Consumer {
	t.Helper()
	k, err := sqs.NewConsumer(c, sqs.ConsumerOptions{Queue: queue, Fifo: fifo, BufferSize: sqs.MaxBufferSize, VisibilityTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func source(k broker.Consumer, name string) *inspect.Source {
	return &inspect.Source{Consumer: k, Name: "sqs://" + name, Wait: time.Second}
}

// depth is the queue's visible + in-flight + delayed count.
func depth(t testing.TB, c *sqs.Clients, queue string) int {
	t.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
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

// visible is the queue's visible count only.
func visible(t testing.TB, c *sqs.Clients, queue string) int {
	t.Helper()
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	return n
}

// waitDepth polls until the queue holds want messages or within elapses.
func waitDepth(t testing.TB, c *sqs.Clients, queue string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := depth(t, c, queue)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", queue, got, want)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not a wait for a condition
	}
}

// deadLetter puts a routed copy on the dead-letter queue exactly as the
// Router writes it (message.Stamp, then the transport's producer).
func deadLetter(t testing.TB, c *sqs.Clients, dlq, id, topic string, rej message.Rejection, count int, fifo bool, group string) {
	t.Helper()
	m := message.New(id, topic, message.MTCommand, []byte(`{"id":"`+id+`"}`))
	m.Header.CorrelationID = "corr-" + id
	m.Header.HandledCount = count
	m.Header.PartitionKey = group
	m.Header.Bag["tenant"] = "acme"
	if fifo {
		// The DLQ itself deduplicates by content: each seeded copy is distinct.
		m.Header.Bag[inspect.KeyDeduplicationID] = uniq("seed")
	}
	routed := message.Stamp(m, dlq, rej, time.Now())
	if err := sqs.NewProducer(c, sqs.ProducerOptions{Fifo: fifo, MakeChannels: broker.MakeValidate}).Send(context.Background(), routed); err != nil {
		t.Fatalf("dead-letter %s: %v", id, err)
	}
}

// drain receives every message of a queue (removing them) within the
// deadline, waiting for want of them.
func drain(t testing.TB, c *sqs.Clients, queue string, fifo bool, want int) []*message.Message {
	t.Helper()
	k := reader(t, c, queue, fifo)
	var out []*message.Message
	deadline := time.Now().Add(15 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		ms, err := k.Receive(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out = append(out, m)
			if err := k.Acknowledge(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(out) != want {
		t.Fatalf("%s: got %d messages, want %d", queue, len(out), want)
	}
	return out
}

// peekJSON peeks the whole queue as JSON lines and decodes them back.
func peekJSON(t testing.TB, src *inspect.Source, f inspect.Filter) []*message.Message {
	t.Helper()
	var buf bytes.Buffer
	if _, err := inspect.Peek(context.Background(), src, f, inspect.NewJSONLines(&buf)); err != nil {
		t.Fatalf("peek: %v", err)
	}
	var out []*message.Message
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		m, err := message.UnmarshalRecordJSON(line)
		if err != nil {
			t.Fatalf("peek output is not a record: %v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}

func ids(ms []*message.Message) map[string]*message.Message {
	out := map[string]*message.Message{}
	for _, m := range ms {
		out[m.Header.MessageID] = m
	}
	return out
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
