package sqs

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

func TestWireFormatRoundTripThroughQueue_R18_R2(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("wire")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	m := sample()
	m.Header.Topic = q
	m.Header.HandledCount = 0
	send(t, c, ProducerOptions{}, m)
	got := receiveOne(t, k, 10*time.Second)
	want := m.Clone()
	assertSameHeader(t, want, got)
	if got.Header.Topic != q {
		t.Errorf("topic %q, want %q", got.Header.Topic, q)
	}
	if got.Header.HandledCount != 0 || got.DeliveryAttempt != 1 {
		t.Errorf("first delivery presented %d (attempt %d), want 0 (R-2)", got.Header.HandledCount, got.DeliveryAttempt)
	}
	if err := k.Requeue(context.Background(), got, 0); err != nil {
		t.Fatal(err)
	}
	raw := rawReceive(t, c, q)
	for _, name := range []string{"id", "cloudeventheaders", "topic", "message-type", "content-type", "timestamp", "bag", "correlation-id", "reply-to", "subject"} {
		if _, ok := raw.MessageAttributes[name]; !ok {
			t.Errorf("attribute %q missing on the wire", name)
		}
	}
	if bag := aws.ToString(raw.MessageAttributes["bag"].StringValue); !strings.Contains(bag, `"handled-count":"0"`) {
		t.Errorf("bag on the wire = %s, want handled-count as the string \"0\"", bag)
	}
}

func TestDeliveryCountZeroThenIncreasingAcrossRequeues_AC2_AC1(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("count")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	send(t, c, ProducerOptions{}, newMessage(q))
	ctx := context.Background()
	var counts []int
	for range 4 {
		m := receiveOne(t, k, 10*time.Second)
		counts = append(counts, m.Header.HandledCount)
		if err := k.Requeue(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	if counts[0] != 0 {
		t.Errorf("first delivery presented %d, want 0 (AC-2)", counts[0])
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] <= counts[i-1] || counts[i] < i {
			t.Errorf("counts %v: delivery %d is not strictly greater and >= %d (AC-1, R-3)", counts, i+1, i)
		}
	}
}

func TestDeliveryCountIncreasesAcrossVisibilityLapse_AC42(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("lapse")
	k := setup(t, c, ChannelOptions{Queue: q, VisibilityTimeout: time.Second}, ConsumerOptions{})
	send(t, c, ProducerOptions{}, newMessage(q))
	first := receiveOne(t, k, 10*time.Second)
	// No requeue, no acknowledge: the visibility timeout lapses.
	second := receiveOne(t, k, 10*time.Second)
	if first.Header.HandledCount != 0 || second.Header.HandledCount <= first.Header.HandledCount {
		t.Fatalf("counts %d then %d, want 0 then greater (AC-42)", first.Header.HandledCount, second.Header.HandledCount)
	}
	if second.Receipt == first.Receipt {
		t.Error("the receipt handle did not change across receives")
	}
}

func TestRequeueDelayIsHonoured_R1(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("delay")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	send(t, c, ProducerOptions{}, newMessage(q))
	m := receiveOne(t, k, 10*time.Second)
	start := time.Now()
	if err := k.Requeue(context.Background(), m, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, k, time.Second)
	again := receiveOne(t, k, 10*time.Second)
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("redelivered after %s, want about the 2 s requeue delay", el)
	}
	if again.Header.HandledCount != 1 {
		t.Errorf("count after one requeue = %d, want 1", again.Header.HandledCount)
	}
}

func TestRejectToDeadLetterWithFiveKeysAndNoReceipt_R16_R18_R28(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq := uniq("rej"), uniq("rej-dlq")
	sink, log := newSink()
	k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{Logger: log})
	orig := newMessage(q)
	send(t, c, ProducerOptions{}, orig)
	ctx := context.Background()
	m := receiveOne(t, k, 10*time.Second)
	m.Header.HandledCount = 3 // as the pump leaves it when the budget of 3 runs out
	res := k.Reject(ctx, m, message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget exhausted"})
	if res.Route != broker.RouteDeadLetter || res.Destination != QueueName(dlq, false) || res.Released || res.Err != nil {
		t.Fatalf("reject = %+v", res)
	}
	if _, ok := sink.find(slog.LevelInfo, broker.LogRejected); !ok {
		t.Error("no rejection log record")
	}
	if n := depth(t, c, q); n != 0 {
		t.Errorf("source queue holds %d messages after reject, want 0", n)
	}
	raw := rawReceive(t, c, dlq)
	if strings.Contains(aws.ToString(raw.MessageAttributes["bag"].StringValue), "ReceiptHandle") {
		t.Errorf("routed copy carries a receipt handle: %s", aws.ToString(raw.MessageAttributes["bag"].StringValue))
	}
	dk, err := NewConsumer(c, ConsumerOptions{Queue: dlq})
	if err != nil {
		t.Fatal(err)
	}
	if err := dk.Release(ctx, &message.Message{Receipt: aws.ToString(raw.ReceiptHandle)}, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // read it twice through the ordinary consumer: the DLQ's own count never shows
		d := receiveOne(t, dk, 10*time.Second)
		if d.Header.MessageID != orig.Header.MessageID || d.Header.HandledCount != 3 {
			t.Errorf("DLQ read %d: id %s count %d, want %s and the stamped 3", i+1, d.Header.MessageID, d.Header.HandledCount, orig.Header.MessageID)
		}
		b := d.Header.Bag
		for key, want := range map[string]string{"originalTopic": q, "originalMessageType": "MT_COMMAND", "rejectionReason": "DeliveryError", "rejectionMessage": "budget exhausted"} {
			if got, _ := b.String(key); got != want {
				t.Errorf("%s = %q, want %q", key, got, want)
			}
		}
		if ts, _ := b.String("rejectionTimestamp"); !strings.HasSuffix(ts, "+00:00") {
			t.Errorf("rejectionTimestamp %q", ts)
		}
		if b["tenant"] != "acme" {
			t.Errorf("bag lost the original's values: %v", b)
		}
		if err := dk.Requeue(ctx, d, 0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnacceptableGoesToInvalidQueue_R16(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq, inv := uniq("unacc"), uniq("unacc-dlq"), uniq("unacc-inv")
	sink, log := newSink()
	k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq, Invalid: inv}, ConsumerOptions{Logger: log})
	id := rawSend(t, c, q, "payload", map[string]string{"bag": "[1,2]"})
	ctx := context.Background()
	m := receiveOne(t, k, 10*time.Second)
	if m.Header.MessageType != message.MTUnacceptable || m.Receipt == nil || m.Header.MessageID != id {
		t.Fatalf("undecodable message = %+v receipt %v", m.Header, m.Receipt)
	}
	if r, ok := sink.find(slog.LevelWarn, LogUndecodable); !ok || r.Attrs["message_id"] != id {
		t.Errorf("no Warning %q naming %s", LogUndecodable, id)
	}
	res := k.Reject(ctx, m, message.Rejection{Reason: message.ReasonUnacceptable, Description: "failed to parse"})
	if res.Route != broker.RouteInvalidMessage || res.Err != nil {
		t.Fatalf("reject = %+v", res)
	}
	ik, _ := NewConsumer(c, ConsumerOptions{Queue: inv})
	got := receiveOne(t, ik, 10*time.Second)
	if string(got.Body) != "payload" || got.Header.Bag["rejectionReason"] != "Unacceptable" || got.Header.MessageID != id {
		t.Errorf("invalid-queue copy: id %s body %q bag %v", got.Header.MessageID, got.Body, got.Header.Bag)
	}
	if n := depth(t, c, QueueName(dlq, false)); n != 0 {
		t.Errorf("dead-letter queue holds %d, want 0", n)
	}
}

func TestEnvelopeNotJSONIsRoutedNotDropped_R16(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq := uniq("badenv"), uniq("badenv-dlq")
	_, log := newSink()
	k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq, Envelope: true}, ConsumerOptions{Logger: log})
	rawSend(t, c, q, "this is not an SNS envelope", nil)
	m := receiveOne(t, k, 10*time.Second)
	if m.Header.MessageType != message.MTUnacceptable {
		t.Fatalf("type %v, want MT_UNACCEPTABLE", m.Header.MessageType)
	}
	res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonUnacceptable})
	if res.Route != broker.RouteDeadLetter || res.Err != nil {
		t.Fatalf("reject = %+v, want the dead-letter fallback", res)
	}
	dk, _ := NewConsumer(c, ConsumerOptions{Queue: dlq, Envelope: true})
	got := receiveOne(t, dk, 10*time.Second)
	if string(got.Body) != "this is not an SNS envelope" || got.Header.MessageType != message.MTUnacceptable {
		t.Errorf("DLQ copy read through an envelope consumer: type %v body %q", got.Header.MessageType, got.Body)
	}
}

func TestNoDestinationAcknowledgesWithWarning_R17(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("nodest")
	sink, log := newSink()
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{Logger: log})
	m0 := newMessage(q)
	send(t, c, ProducerOptions{}, m0)
	m := receiveOne(t, k, 10*time.Second)
	res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if res.Route != broker.RouteNone || res.Err != nil {
		t.Fatalf("reject = %+v", res)
	}
	if r, ok := sink.find(slog.LevelWarn, broker.LogDiscarded); !ok || r.Attrs["message_id"] != m0.Header.MessageID {
		t.Errorf("no Warning %q naming the message", broker.LogDiscarded)
	}
	if n := depth(t, c, q); n != 0 {
		t.Errorf("queue holds %d after a reject with no destination, want 0", n)
	}
}

func TestFailedDeadLetterSendReleasesOriginal_R19(t *testing.T) {
	t.Parallel()
	q, dlq := uniq("sendfail"), uniq("sendfail-dlq")
	c := testClients(t)
	fc, _ := faultyClients(t, func(op, body string) error {
		if op == "SendMessage" && strings.Contains(body, dlq) {
			return errInjected
		}
		return nil
	})
	sink, log := newSink()
	k := setup(t, fc, ChannelOptions{Queue: q, DeadLetter: dlq, VisibilityTimeout: 30 * time.Second}, ConsumerOptions{Logger: log})
	m0 := newMessage(q)
	send(t, c, ProducerOptions{}, m0)
	m := receiveOne(t, k, 10*time.Second)
	res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if !res.Released || !errors.Is(res.Err, errInjected) {
		t.Fatalf("reject = %+v, want released with the injected error", res)
	}
	if r, ok := sink.find(slog.LevelError, broker.LogRoutingFailed); !ok || r.Attrs["message_id"] != m0.Header.MessageID {
		t.Errorf("no Error %q naming the message", broker.LogRoutingFailed)
	}
	// Released with ChangeMessageVisibility to the first attempt's
	// RoutingFailureDelay (1 s): back well before the 30 s timeout.
	again := receiveOne(t, k, 5*time.Second)
	if again.Header.MessageID != m0.Header.MessageID || again.Header.HandledCount <= m.Header.HandledCount {
		t.Errorf("redelivered %s with count %d, want %s with a greater count", again.Header.MessageID, again.Header.HandledCount, m0.Header.MessageID)
	}
	if n := depth(t, c, QueueName(dlq, false)); n != 0 {
		t.Errorf("dead-letter queue holds %d, want 0", n)
	}
}

func TestFailedDeleteAfterSendIsLoggedAndSettled_R16(t *testing.T) {
	t.Parallel()
	q, dlq := uniq("delfail"), uniq("delfail-dlq")
	c := testClients(t)
	fc, _ := faultyClients(t, func(op, body string) error {
		if op == "DeleteMessage" && strings.Contains(body, q) {
			return errInjected
		}
		return nil
	})
	sink, log := newSink()
	k := setup(t, fc, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{Logger: log})
	send(t, c, ProducerOptions{}, newMessage(q))
	m := receiveOne(t, k, 10*time.Second)
	res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if res.Released || !errors.Is(res.Err, errInjected) || res.Route != broker.RouteDeadLetter {
		t.Fatalf("reject = %+v", res)
	}
	if _, ok := sink.find(slog.LevelError, broker.LogAckAfterRouteFail); !ok {
		t.Errorf("no Error %q", broker.LogAckAfterRouteFail)
	}
	if n := depth(t, c, QueueName(dlq, false)); n != 1 {
		t.Errorf("dead-letter queue holds %d, want the routed copy", n)
	}
}

func TestFifoGroupIDKeptOnRoutedCopy_R18(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq := uniq("fifo"), uniq("fifo-dlq")
	k := setup(t, c, ChannelOptions{Queue: q, Fifo: true, DeadLetter: dlq}, ConsumerOptions{})
	m0 := newMessage(q)
	m0.Header.PartitionKey = "group-7"
	send(t, c, ProducerOptions{Fifo: true}, m0)
	m := receiveOne(t, k, 10*time.Second)
	if m.Header.PartitionKey != "group-7" {
		t.Fatalf("partition key %q", m.Header.PartitionKey)
	}
	res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError})
	if res.Err != nil || res.Destination != QueueName(dlq, true) {
		t.Fatalf("reject = %+v", res)
	}
	raw := rawReceive(t, c, QueueName(dlq, true))
	if g := raw.Attributes["MessageGroupId"]; g != "group-7" {
		t.Errorf("DLQ copy MessageGroupId %q, want group-7", g)
	}
}

func TestSNSEnvelopeAndRawPresentTheSameCount_R1_AC13(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	for _, envelope := range []bool{true, false} {
		q, topic := uniq("sns-q"), uniq("sns.topic")
		k := setup(t, c, ChannelOptions{Queue: q, Topic: topic, Envelope: envelope}, ConsumerOptions{})
		m0 := sample()
		m0.Header.Topic = topic
		m0.Header.HandledCount = 2
		send(t, c, ProducerOptions{SNS: true}, m0)
		m := receiveOne(t, k, 10*time.Second)
		if m.Header.HandledCount != 2 || m.Header.MessageID != m0.Header.MessageID || m.Header.Topic != TopicName(topic, false) ||
			m.Header.Subject != "subj" || m.Header.CorrelationID != "corr-1" || m.Header.Bag["tenant"] != "acme" {
			t.Errorf("envelope=%v: id %s count %d topic %q subject %q corr %q bag %v", envelope, m.Header.MessageID, m.Header.HandledCount,
				m.Header.Topic, m.Header.Subject, m.Header.CorrelationID, m.Header.Bag)
		}
		if err := k.Requeue(context.Background(), m, 0); err != nil {
			t.Fatal(err)
		}
		if again := receiveOne(t, k, 10*time.Second); again.Header.HandledCount != 3 {
			t.Errorf("envelope=%v: count after a requeue %d, want 3", envelope, again.Header.HandledCount)
		}
	}
}

func TestNonBrighterMessageDefaults(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("plain")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	id := rawSend(t, c, q, "hello", nil)
	m := receiveOne(t, k, 10*time.Second)
	if m.Header.MessageID != id || m.Header.MessageType != message.MTEvent || m.Header.HandledCount != 0 || string(m.Body) != "hello" || m.Header.Topic != q {
		t.Errorf("got %+v body %q", m.Header, m.Body)
	}
}

func TestAcknowledgeBatchDeletesAll_Proactor(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("batch")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: 10})
	for range 12 {
		send(t, c, ProducerOptions{}, newMessage(q))
	}
	ctx := context.Background()
	var got []*message.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 12 && time.Now().Before(deadline) {
		ms, err := k.Receive(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ms...)
	}
	if len(got) != 12 {
		t.Fatalf("received %d, want 12", len(got))
	}
	got = append(got, &message.Message{Header: message.Header{MessageID: "no-receipt"}})
	errs := k.AcknowledgeBatch(ctx, got)
	for i, err := range errs[:12] {
		if err != nil {
			t.Errorf("message %d: %v", i, err)
		}
	}
	if errs[12] == nil {
		t.Error("a message without a receipt was acknowledged")
	}
	if n := depth(t, c, q); n != 0 {
		t.Errorf("queue holds %d after AcknowledgeBatch, want 0", n)
	}
}

// TestReceiveErrors_MissingQueueIsFatalUnreachableIsChannelFailure: a
// receive from a queue that does not exist is a non-transient error, one
// from an unreachable endpoint is broker.ErrChannelFailure, and a buffer
// size over 10 is refused.
func TestReceiveErrors_MissingQueueIsFatalUnreachableIsChannelFailure(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	k, err := NewConsumer(c, ConsumerOptions{Queue: uniq("never-made")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.Receive(context.Background(), 0)
	if err == nil || errors.Is(err, broker.ErrChannelFailure) {
		t.Errorf("missing queue: err %v, want a non-transient error", err)
	}
	cfg := NewClientsFromConfig(sqstestConfigNoRetry(), "http://127.0.0.1:1")
	k2, _ := NewConsumer(cfg, ConsumerOptions{Queue: "q"})
	if _, err := k2.Receive(context.Background(), 0); !errors.Is(err, broker.ErrChannelFailure) {
		t.Errorf("unreachable endpoint: err %v, want ErrChannelFailure", err)
	}
	if _, err := NewConsumer(c, ConsumerOptions{Queue: "q", BufferSize: 11}); err == nil {
		t.Error("bufferSize 11 accepted")
	}
}

func TestNewClientsHonoursEndpointEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_ENDPOINT_URL_SQS", endpoint)
	ctx := context.Background()
	c, err := NewClients(ctx, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SQS.ListQueues(ctx, nil); err != nil {
		t.Errorf("AWS_ENDPOINT_URL_SQS not honoured: %v", err)
	}
	t.Setenv("AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:1")
	c, err = NewClients(ctx, "us-east-1", endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SQS.ListQueues(ctx, nil); err != nil {
		t.Errorf("explicit endpoint did not win over the environment: %v", err)
	}
}

func TestDeadLetterDepthCountsRoutedMessages(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq := uniq("depth"), uniq("depth-dlq")
	k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{DeadLetter: dlq})
	ctx := context.Background()
	if n, err := k.DeadLetterDepth(ctx); err != nil || n != 0 {
		t.Fatalf("depth of an empty dead-letter queue = %d, %v; want 0", n, err)
	}
	for range 2 {
		send(t, c, ProducerOptions{}, newMessage(q))
		m := receiveOne(t, k, 10*time.Second)
		if res := k.Reject(ctx, m, message.Rejection{Reason: message.ReasonDeliveryError}); res.Err != nil {
			t.Fatalf("reject: %v", res.Err)
		}
	}
	if n, err := k.DeadLetterDepth(ctx); err != nil || n != 2 {
		t.Fatalf("depth = %d, %v; want 2", n, err)
	}
	noDLQ := setup(t, c, ChannelOptions{Queue: uniq("depth-none")}, ConsumerOptions{})
	if _, err := noDLQ.DeadLetterDepth(ctx); !errors.Is(err, ErrNoDeadLetter) {
		t.Fatalf("depth without a dead-letter queue: %v, want ErrNoDeadLetter", err)
	}
}

// TestFifoRoutedCopiesOfTwoMessagesWithOneDeduplicationIDBothKept_R18: two
// messages received with the same deduplication id (content-based
// deduplication of equal bodies sent more than five minutes apart, played
// here by setting the received messages' id) rejected within five minutes
// both reach the FIFO dead-letter queue: the routed copy's deduplication id
// is its own (RoutedDeduplicationID), not the source's, so SQS does not
// drop the second as a duplicate while the source is acknowledged (fauxqs).
func TestFifoRoutedCopiesOfTwoMessagesWithOneDeduplicationIDBothKept_R18(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, dlq := uniq("fifo-dd"), uniq("fifo-dd-dlq")
	k := setup(t, c, ChannelOptions{Queue: q, Fifo: true, DeadLetter: dlq}, ConsumerOptions{})
	for i, g := range []string{"g1", "g2"} {
		m := newMessage(q)
		m.Header.PartitionKey = g
		m.Header.Bag[AttrMessageDeduplicationID] = "src-" + strconv.Itoa(i)
		send(t, c, ProducerOptions{Fifo: true}, m)
	}
	for range 2 {
		m := receiveOne(t, k, 10*time.Second)
		m.Header.Bag[AttrMessageDeduplicationID] = "the-same-source-id"
		if res := k.Reject(context.Background(), m, message.Rejection{Reason: message.ReasonDeliveryError}); res.Err != nil {
			t.Fatalf("reject %s: %+v", m.Header.MessageID, res)
		}
	}
	if n := depth(t, c, QueueName(dlq, true)); n != 2 {
		t.Errorf("the FIFO dead-letter queue holds %d routed copies, want 2 (one was dropped as a duplicate)", n)
	}
	a := message.New("a", q, message.MTCommand, nil)
	a.Header.Bag[AttrMessageDeduplicationID] = "d"
	b := a.Clone()
	b.Header.MessageID = "b"
	if RoutedDeduplicationID(a) != RoutedDeduplicationID(a.Clone()) || RoutedDeduplicationID(a) == RoutedDeduplicationID(b) {
		t.Errorf("RoutedDeduplicationID: one message twice must agree, two messages must differ")
	}
}
