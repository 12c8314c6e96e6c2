package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/message"
)

// The three transports' channels publish raw wire messages (WireChannel, for
// the hostile-message corpus); the memory transport has no wire, so it defers
// the row that needs one.
var (
	_ WireChannel = (*sqsChannel)(nil)
	_ WireChannel = (*pubsubChannel)(nil)
	_ WireChannel = (*rocketChannel)(nil)
)

// init stops the test binary's shared Pub/Sub emulator after the tests:
// the Pub/Sub fixtures start it lazily (gcptest.Start), and without this
// the Java process outlives the binary. StopShared is idempotent.
func init() {
	emulators = append(emulators, func() (func(), error) { return gcptest.StopShared, nil })
}

// rawSeq makes FIFO deduplication ids unique within the test binary.
var rawSeq atomic.Int64

// SendWire encodes m as Brighter's SQS or SNS producer would, edits it and
// sends it with the AWS SDK directly (SendMessage, or SNS Publish for the
// SNS configurations).
func (ch *sqsChannel) SendWire(t testing.TB, m *message.Message, edit func(w *Wire)) {
	t.Helper()
	ctx, cancel := sendContext(t)
	defer cancel()
	m.Header.Topic = ch.routingKey
	var target string
	var out sqs.Outgoing
	var err error
	if ch.f.sns {
		target = ch.topicARN(t)
		out, err = sqs.EncodeSNS(m, target, nil)
	} else {
		q, qerr := ch.c.SQS.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(sqs.QueueName(ch.opts.Queue, ch.f.fifo))})
		if qerr != nil {
			t.Fatalf("queue url: %v", qerr)
		}
		target = aws.ToString(q.QueueUrl)
		out, err = sqs.EncodeSQS(m, target, nil)
	}
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	w := &Wire{Body: []byte(out.Body), Attrs: out.Attributes}
	if edit != nil {
		edit(w)
	}
	group := out.GroupID
	if group == "" {
		group = "raw"
	}
	dedup := fmt.Sprintf("raw-%d-%d", time.Now().UnixNano(), rawSeq.Add(1))
	if ch.f.sns {
		in := &sns.PublishInput{TopicArn: aws.String(target), Message: aws.String(string(w.Body)), MessageAttributes: map[string]snstypes.MessageAttributeValue{}}
		for k, v := range w.Attrs {
			if v != "" {
				in.MessageAttributes[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
		}
		if ch.f.fifo {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(dedup)
		}
		if _, err := ch.c.SNS.Publish(ctx, in); err != nil {
			t.Fatalf("raw publish: %v", err)
		}
		return
	}
	in := &awssqs.SendMessageInput{QueueUrl: aws.String(target), MessageBody: aws.String(string(w.Body)), MessageAttributes: map[string]sqstypes.MessageAttributeValue{}}
	for k, v := range w.Attrs {
		if v != "" {
			in.MessageAttributes[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	if ch.f.fifo {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(dedup)
	}
	if _, err := ch.c.SQS.SendMessage(ctx, in); err != nil {
		t.Fatalf("raw send: %v", err)
	}
}

// topicARN finds the channel's SNS topic by name.
func (ch *sqsChannel) topicARN(t testing.TB) string {
	t.Helper()
	ctx, cancel := sendContext(t)
	defer cancel()
	suffix := ":" + sqs.TopicName(ch.opts.Topic, ch.f.fifo)
	p := sns.NewListTopicsPaginator(ch.c.SNS, &sns.ListTopicsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("list topics: %v", err)
		}
		for _, tp := range page.Topics {
			if strings.HasSuffix(aws.ToString(tp.TopicArn), suffix) {
				return aws.ToString(tp.TopicArn)
			}
		}
	}
	t.Fatalf("no SNS topic named %s", suffix[1:])
	return ""
}

// StampCount sets the bag's handled-count (SQS carries the stamped count in
// the bag, as Brighter does).
func (ch *sqsChannel) StampCount(w *Wire, text string) {
	bag := map[string]any{}
	_ = json.Unmarshal([]byte(w.Attrs[sqs.AttrBag]), &bag)
	bag[sqs.BagHandledCount] = text
	b, _ := json.Marshal(bag)
	w.Attrs[sqs.AttrBag] = string(b)
}

// SendWire encodes m as Brighter's Pub/Sub producer would, edits it and
// publishes it with the Pub/Sub client directly.
func (c *pubsubChannel) SendWire(t testing.TB, m *message.Message, edit func(w *Wire)) {
	t.Helper()
	ctx, cancel := sendContext(t)
	defer cancel()
	m.Header.Topic = c.topic
	enc := gcp.Encode(m)
	w := &Wire{Body: enc.Data, Attrs: enc.Attributes}
	if edit != nil {
		edit(w)
	}
	attrs := map[string]string{}
	for k, v := range w.Attrs {
		if v != "" {
			attrs[k] = v
		}
	}
	pub := c.f.client.Publisher(c.topic)
	defer pub.Stop()
	pm := &pubsub.Message{Data: w.Body, Attributes: attrs}
	if c.f.ordering {
		pub.EnableMessageOrdering = true
		pm.OrderingKey = enc.OrderingKey
	}
	if _, err := pub.Publish(ctx, pm).Get(ctx); err != nil {
		t.Fatalf("raw publish: %v", err)
	}
}

// StampCount sets the HandledCount attribute.
func (c *pubsubChannel) StampCount(w *Wire, text string) { w.Attrs[gcp.AttrHandledCount] = text }

// SendWire encodes m as Brighter's RocketMQ producer would, edits its
// properties and body and sends it with the RocketMQ client directly.
func (c *rocketChannel) SendWire(t testing.TB, m *message.Message, edit func(w *Wire)) {
	t.Helper()
	ctx, cancel := sendContext(t)
	defer cancel()
	m.Header.Topic = c.topic
	enc := rocketmq.Encode(m, c.topic, "", time.Now())
	w := &Wire{Body: enc.Body, Attrs: map[string]string{}}
	for k, v := range enc.GetProperties() {
		w.Attrs[k] = v
	}
	if edit != nil {
		edit(w)
	}
	out := &rmq.Message{Topic: c.topic, Body: w.Body}
	for k, v := range w.Attrs {
		if v != "" {
			out.AddProperty(k, v)
		}
	}
	out.SetKeys(enc.GetKeys()...)
	start := func() (rmq.Producer, error) {
		p, err := rmq.NewProducer(&rmq.Config{Endpoint: c.conn.Endpoint,
			Credentials: &credentials.SessionCredentials{AccessKey: c.conn.AccessKey, AccessSecret: c.conn.SecretKey}}, rmq.WithTopics(c.topic))
		if err == nil {
			err = p.Start()
		}
		return p, err
	}
	p, err := start()
	// The client's start-up asks for the topic's route within a deadline
	// of its own, which a heavily loaded machine can miss: the set-up
	// failing, not a row, so the start is tried again (twice at most).
	for try := 1; err != nil && try <= 2 && strings.Contains(err.Error(), "DeadlineExceeded"); try++ {
		t.Logf("raw producer: start %d missed its deadline, trying again: %v", try, err)
		p, err = start()
	}
	if err != nil {
		t.Fatalf("raw producer: %v", err)
	}
	defer func() { _ = p.GracefulStop() }()
	if _, err := p.Send(ctx, out); err != nil {
		t.Fatalf("raw send: %v", err)
	}
}

// StampCount sets the HandledCount property.
func (c *rocketChannel) StampCount(w *Wire, text string) { w.Attrs[rocketmq.PropHandledCount] = text }

// Deferred defers the row that needs a wire: the memory transport carries
// *message.Message values, so no stamped count travels as text.
func (f *memoryFixture) Deferred(behaviour string) (string, bool) {
	if behaviour == rowStampedLimit {
		return "the memory transport has no wire format", true
	}
	return "", false
}
