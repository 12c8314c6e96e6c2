package dlqtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/broker/sqs/sqstest"
	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/message"
)

// DLQRun runs `brighter dlq ARGS...` as a process in a temporary
// directory, with the test environment's AWS settings, and returns its exit
// code, stdout and stderr.
func DLQRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.BrighterExit(t, t.TempDir(), append([]string{"dlq"}, args...)...)
}

// WriteYAML writes a subscriptions file into a temporary directory.
func WriteYAML(t *testing.T, yaml string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "brighter.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// RedriveSubscriptions writes a subscriptions file reaching fauxqs by conn
// (from FauxqsQueues) with one SQS subscription "orders" on queue source,
// whose redrivePolicy moves a message to queue target after 5 receives;
// with routed, target is also its deadLetterRoutingKey (the pump's
// dead-letter destination). It returns the file's path.
func RedriveSubscriptions(t *testing.T, conn []string, source, target string, routed bool) string {
	t.Helper()
	dlk := ""
	if routed {
		dlk = "\n    deadLetterRoutingKey: " + target
	}
	return WriteYAML(t, fmt.Sprintf(`connections:
  aws:
    region: %s
    endpoint: %s
subscriptions:
  - name: orders
    transport: sqs
    channelName: %s%s
    makeChannels: assume
    handler: {type: builtin, name: ack}
    sqs:
      redrivePolicy:
        deadLetterQueue: %s
        maxReceiveCount: 5
`, conn[3], conn[1], source, dlk, target))
}

// FauxqsQueues makes the standard queues NAME-RUN on the shared fauxqs, RUN
// being prefix and a number unique to the call, and returns RUN, a producer
// that sends to existing queues, and the flags that reach fauxqs.
func FauxqsQueues(t *testing.T, prefix string, names ...string) (string, broker.Producer, []string) {
	t.Helper()
	emu := cmdtest.SharedSQS(t)
	run := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	c := sqs.NewClientsFromConfig(sqstest.Config(), emu.Endpoint)
	for _, n := range names {
		if err := sqs.NewChannelMaker(c, sqs.ChannelOptions{Queue: n + "-" + run}).EnsureChannels(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return run, sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate}), []string{"--endpoint", emu.Endpoint, "--region", sqstest.Region}
}

// FauxqsDLQ is a dead-letter queue, dlq-RUN, and the destination its
// messages were routed from, dest-RUN, made on the shared fauxqs for one
// test (NewFauxqsDLQ), with what the test needs to fill and read them.
type FauxqsDLQ struct {
	// Run names the queues: the prefix given and a number unique to the
	// call (FauxqsQueues).
	Run string
	// DLQ and Dest are the queues' names.
	DLQ, Dest string
	// Conn are the flags that reach fauxqs.
	Conn []string
	p    broker.Producer
}

// NewFauxqsDLQ makes the queues dlq-RUN and dest-RUN, RUN being prefix and
// a number unique to the call, failing t when it cannot.
func NewFauxqsDLQ(t *testing.T, prefix string) *FauxqsDLQ {
	t.Helper()
	run, p, conn := FauxqsQueues(t, prefix, "dlq", "dest")
	return &FauxqsDLQ{Run: run, DLQ: "dlq-" + run, Dest: "dest-" + run, Conn: conn, p: p}
}

// Stamped is a routed copy for the dead-letter queue whose id is id-RUN
// and whose originalTopic is the destination (Stamped).
func (q *FauxqsDLQ) Stamped(id string) *message.Message {
	return Stamped(id+"-"+q.Run, q.Dest, q.DLQ)
}

// Send sends each of ms to its topic (a Stamped one to the dead-letter
// queue), failing t at the first error.
func (q *FauxqsDLQ) Send(t *testing.T, ms ...*message.Message) {
	t.Helper()
	for _, m := range ms {
		if err := q.p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// PeekIDs are the ids `brighter dlq peek sqs://QUEUE -o json`, run in dir,
// reads from queue (q.DLQ or q.Dest), in the order read (cmdtest.PeekIDs).
func (q *FauxqsDLQ) PeekIDs(t *testing.T, dir, queue string) []string {
	t.Helper()
	return cmdtest.PeekIDs(t, dir, append([]string{"dlq", "peek", "sqs://" + queue, "-o", "json"}, q.Conn...)...)
}

// FixedBody writes {"fixed":true}, the body an edit takes (--body-file),
// into a temporary directory and returns the file's path.
func FixedBody(t *testing.T) string {
	t.Helper()
	body := filepath.Join(t.TempDir(), "fixed.json")
	if err := os.WriteFile(body, []byte(`{"fixed":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return body
}

// HoldMessages plays another reader of the shared fauxqs's queue: it
// receives n of its messages, each held invisible for visibility (whole
// seconds), and leaves them so.
func HoldMessages(t *testing.T, queue string, n int, visibility time.Duration) {
	t.Helper()
	ctx := context.Background()
	c := sqs.NewClientsFromConfig(sqstest.Config(), cmdtest.SharedSQS(t).Endpoint)
	url, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for held := 0; held < n; {
		if time.Now().After(deadline) {
			t.Fatalf("another reader received %d of %d messages of %s in 30s", held, n, queue)
		}
		got, err := c.SQS.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: int32(min(n-held, 10)),
			VisibilityTimeout: int32(visibility / time.Second), WaitTimeSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		held += len(got.Messages)
	}
}

// QueueCount is the count name of queue that SQS estimates (through c):
// types.QueueAttributeNameApproximateNumberOfMessages, the visible
// messages, or ...NotVisible, those a reader holds; an error when it cannot
// be read. It does not fail a test itself, so a goroutine may call it.
func QueueCount(c *sqs.Clients, queue string, name types.QueueAttributeName) (int, error) {
	ctx := context.Background()
	u, err := c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		return 0, err
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl, AttributeNames: []types.QueueAttributeName{name}})
	if err != nil {
		return 0, err
	}
	v, _ := strconv.Atoi(out.Attributes[string(name)])
	return v, nil
}

// SameIDs reports whether ids are want, in any order.
func SameIDs(ids []string, want ...string) bool {
	ids, want = slices.Clone(ids), slices.Clone(want)
	slices.Sort(ids)
	slices.Sort(want)
	return slices.Equal(ids, want)
}
