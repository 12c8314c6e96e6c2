package sqs

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// sizedMessage returns a message for queueURL whose SendMessage request is
// exactly size bytes as SQS counts them (body plus attribute names, data
// types and values), padding its body.
func sizedMessage(t *testing.T, queueURL, topic string, size int) *message.Message {
	t.Helper()
	m := newMessage(topic)
	in, err := encodeSendInput(queueURL, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	pad := size - sendSize(in) + len(m.Body) // the body is replaced
	body := `{"pad":"` + strings.Repeat("x", pad-len(`{"pad":""}`)) + `"}`
	m.Body = []byte(body)
	if in, err = encodeSendInput(queueURL, m, nil); err != nil {
		t.Fatal(err)
	}
	if got := sendSize(in); got != size {
		t.Fatalf("sized message is %d bytes, want %d", got, size)
	}
	return m
}

// TestCheckLimitsCountsBodyAndAttributes: SQS's 1 MiB counts the
// body and every attribute's name, data type ("String") and value; one byte
// over is refused with broker.ErrTooLarge naming the size and the limit, the
// limit itself fits, and an attribute name over 256 bytes is refused.
func TestCheckLimitsCountsBodyAndAttributes(t *testing.T) {
	max := limits.SQS.MaxMessageBytes
	attr := map[string]types.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("vv")}}
	in := func(body int) *sqs.SendMessageInput {
		return &sqs.SendMessageInput{MessageBody: aws.String(strings.Repeat("b", body)), MessageAttributes: attr}
	}
	const attrBytes = len("k") + len("String") + len("vv")
	if err := checkLimits("at", in(max-attrBytes)); err != nil {
		t.Errorf("exactly at the limit: %v", err)
	}
	err := checkLimits("over", in(max-attrBytes+1))
	if !errors.Is(err, broker.ErrTooLarge) || !errors.Is(err, broker.ErrPermanent) {
		t.Fatalf("one byte over = %v, want broker.ErrTooLarge", err)
	}
	for _, want := range []string{"over", strconv.Itoa(max + 1), strconv.Itoa(max)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q (the message, its size and the limit)", err, want)
		}
	}
	long := &sqs.SendMessageInput{MessageBody: aws.String("{}"), MessageAttributes: map[string]types.MessageAttributeValue{
		strings.Repeat("n", 257): {DataType: aws.String("String"), StringValue: aws.String("v")}}}
	if err := checkLimits("long", long); !errors.Is(err, broker.ErrTooLarge) {
		t.Errorf("257-byte attribute name = %v, want broker.ErrTooLarge", err)
	}
}

// TestSendOverSizeLimitRefusedBeforeTheCall (fauxqs): a message
// whose body plus attributes is one byte over SQS's 1 MiB is refused by
// Send and by SendBatch as broker.ErrTooLarge without any SendMessage
// call, and nothing reaches the queue; the batch's other message is sent.
func TestSendOverSizeLimitRefusedBeforeTheCall(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	c, _ := faultyClients(t, func(op, _ string) error {
		if strings.HasPrefix(op, "SendMessage") {
			sends.Add(1)
		}
		return nil
	})
	q := uniq("size")
	setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	url := queueURL(t, c, q)
	big := sizedMessage(t, url, q, limits.SQS.MaxMessageBytes+1)
	p := NewProducer(c, ProducerOptions{})
	err := p.Send(context.Background(), big)
	if !errors.Is(err, broker.ErrTooLarge) || !strings.Contains(err.Error(), big.Header.MessageID) {
		t.Fatalf("Send = %v, want broker.ErrTooLarge naming %s", err, big.Header.MessageID)
	}
	if n := sends.Load(); n != 0 {
		t.Errorf("%d SendMessage calls for a message over the limit, want none (refused before the call)", n)
	}
	small := newMessage(q)
	errs := p.SendBatch(context.Background(), []*message.Message{big, small})
	if len(errs) != 2 || !errors.Is(errs[0], broker.ErrTooLarge) || errs[1] != nil {
		t.Fatalf("SendBatch = %v, want [ErrTooLarge, nil]", errs)
	}
	got := readAll(t, c, q)
	if len(got) != 1 || got[0].Header.MessageID != small.Header.MessageID {
		t.Errorf("queue holds %d messages, want only %s", len(got), small.Header.MessageID)
	}
}

// TestRoutedCopyOverSizeLimitStaysOnSource (fauxqs, both pump
// variants): a message exactly at SQS's 1 MiB is rejected; its routed copy
// (the original plus rejection metadata) is over the limit even with the
// rejection message shortened, so it is refused before any SendMessage to
// the dead-letter queue, the original stays on its source queue (released
// with the longest delay), unrouted and not lost, and the Router logs an
// Error naming it.
func TestRoutedCopyOverSizeLimitStaysOnSource(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			var dlqSends atomic.Int64
			q, dlq := uniq("size-src-"+string(v)), uniq("size-dlq-"+string(v))
			c, _ := faultyClients(t, func(op, body string) error {
				if strings.HasPrefix(op, "SendMessage") && strings.Contains(body, dlq) {
					dlqSends.Add(1)
				}
				return nil
			})
			sink, logger := newSink()
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: 30 * time.Second, Logger: logger})
			m := sizedMessage(t, queueURL(t, c, q), q, limits.SQS.MaxMessageBytes)
			send(t, c, ProducerOptions{}, m)
			r := pumptest.Start(t, k, pumptest.Options(v, 1), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Reject, Reason: strings.Repeat("why ", 100)}
			})
			pumptest.WaitUntil(t, 30*time.Second, "the routing refused", func() bool {
				_, ok := sink.find(slog.LevelError, broker.LogRoutingPermanent)
				return ok
			})
			r.Stop(t)
			rec, _ := sink.find(slog.LevelError, broker.LogRoutingPermanent)
			if rec.Attrs["message_id"] != m.Header.MessageID || !strings.Contains(rec.Attrs["error"], strconv.Itoa(limits.SQS.MaxMessageBytes)) {
				t.Errorf("Error record %v: want message_id %s and an error naming the %d-byte limit", rec.Attrs, m.Header.MessageID, limits.SQS.MaxMessageBytes)
			}
			if n := dlqSends.Load(); n != 0 {
				t.Errorf("%d SendMessage calls to the dead-letter queue, want none (refused before the call)", n)
			}
			if n := depth(t, c, q); n != 1 {
				t.Errorf("source holds %d messages, want the original (never lost)", n)
			}
			if n := depth(t, c, dlq); n != 0 {
				t.Errorf("dead-letter queue holds %d messages, want none", n)
			}
			if n := r.Handled()[m.Header.MessageID]; n != 1 {
				t.Errorf("handled %d times, want 1", n)
			}
		})
	}
}

// TestRoutedCopyOverDestinationMaximumMessageSizeStaysOnSource
// (fauxqs, both pump variants): the dead-letter queue's own
// MaximumMessageSize (1,024 bytes, SQS's smallest) is below the source's;
// brighter does not check it (the producer does not know it, ADR 0005
// decision 10) and SQS refuses the routed copy ("Message must be shorter
// than"), which classifySend makes broker.ErrTooLarge: the original stays
// on its source, unrouted and not lost, with an Error naming it.
func TestRoutedCopyOverDestinationMaximumMessageSizeStaysOnSource(t *testing.T) {
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			c := testClients(t)
			q, dlq := uniq("dsize-src-"+string(v)), uniq("dsize-dlq-"+string(v))
			sink, logger := newSink()
			k := setup(t, c, ChannelOptions{Queue: q, DeadLetter: dlq}, ConsumerOptions{BufferSize: 1, VisibilityTimeout: 30 * time.Second, Logger: logger})
			if _, err := c.SQS.SetQueueAttributes(context.Background(), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(queueURL(t, c, dlq)),
				Attributes: map[string]string{string(types.QueueAttributeNameMaximumMessageSize): "1024"}}); err != nil {
				t.Fatal(err)
			}
			m := sizedMessage(t, queueURL(t, c, q), q, 2048)
			send(t, c, ProducerOptions{}, m)
			r := pumptest.Start(t, k, pumptest.Options(v, 1), func(context.Context, *message.Message) pump.Result {
				return pump.Result{Outcome: pump.Reject, Reason: "poison"}
			})
			pumptest.WaitUntil(t, 30*time.Second, "the routing refused", func() bool {
				_, ok := sink.find(slog.LevelError, broker.LogRoutingPermanent)
				return ok
			})
			r.Stop(t)
			rec, _ := sink.find(slog.LevelError, broker.LogRoutingPermanent)
			if rec.Attrs["message_id"] != m.Header.MessageID || !strings.Contains(rec.Attrs["error"], "shorter than") {
				t.Errorf("Error record %v: want message_id %s and SQS's refusal", rec.Attrs, m.Header.MessageID)
			}
			if n := depth(t, c, q); n != 1 {
				t.Errorf("source holds %d messages, want the original (never lost)", n)
			}
			if n := depth(t, c, dlq); n != 0 {
				t.Errorf("dead-letter queue holds %d messages, want none", n)
			}
		})
	}
}

// snsSizedMessage returns a message for topicARN whose SNS Publish request
// is exactly size bytes as SNS counts them (message, subject, attribute
// names, data types and values), padding its body.
func snsSizedMessage(t *testing.T, topicARN, topic string, size int) *message.Message {
	t.Helper()
	m := newMessage(topic)
	in, err := snsPublishInput(topicARN, m, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	pad := size - publishSize(in) + len(m.Body) // the body is replaced
	m.Body = []byte(`{"pad":"` + strings.Repeat("x", pad-len(`{"pad":""}`)) + `"}`)
	return m
}

// TestPublishOverSNSLimitRefusedBeforeTheCall (fauxqs, which
// takes any size): an SNS message whose message, subject and attributes
// are one byte over SNS's 256 KiB is refused by Send and by SendBatch as
// broker.ErrTooLarge naming the message, its size and the limit, without
// any Publish call; a message exactly at the limit is published and reaches
// the subscribed queue; eleven attributes or a 257-byte attribute name are
// refused by checkSNSLimits too (the bag travels in one attribute, so a
// message's own attributes never reach eleven).
func TestPublishOverSNSLimitRefusedBeforeTheCall(t *testing.T) {
	t.Parallel()
	var publishes atomic.Int64
	c, _ := faultyClients(t, func(_, body string) error {
		if strings.Contains(body, "Action=Publish") {
			publishes.Add(1)
		}
		return nil
	})
	q, topic := uniq("sns-size-q"), uniq("sns.size")
	setup(t, c, ChannelOptions{Queue: q, Topic: topic}, ConsumerOptions{})
	p := NewProducer(c, ProducerOptions{SNS: true})
	arn, err := p.topics.arn(context.Background(), TopicName(topic, false))
	if err != nil {
		t.Fatal(err)
	}
	max := limits.SNS.MaxMessageBytes
	big := snsSizedMessage(t, arn, topic, max+1)
	err = p.Send(context.Background(), big)
	if !errors.Is(err, broker.ErrTooLarge) {
		t.Fatalf("Send of %d bytes = %v, want broker.ErrTooLarge", max+1, err)
	}
	for _, want := range []string{big.Header.MessageID, strconv.Itoa(max + 1), strconv.Itoa(max)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q (the message, its size and the limit)", err, want)
		}
	}
	if n := publishes.Load(); n != 0 {
		t.Errorf("%d Publish calls for a message over the limit, want none (refused before the call)", n)
	}
	at := snsSizedMessage(t, arn, topic, max)
	errs := p.SendBatch(context.Background(), []*message.Message{big, at})
	if len(errs) != 2 || !errors.Is(errs[0], broker.ErrTooLarge) || errs[1] != nil {
		t.Fatalf("SendBatch = %v, want [ErrTooLarge, nil] (exactly at the limit fits)", errs)
	}
	var got []*message.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(got) == 0 && time.Now().Before(deadline) {
		got = readAll(t, c, q)
	}
	if len(got) != 1 || got[0].Header.MessageID != at.Header.MessageID {
		t.Errorf("queue holds %d messages, want only %s (the one at the limit)", len(got), at.Header.MessageID)
	}
	in := &sns.PublishInput{Message: aws.String("{}"), MessageAttributes: map[string]snstypes.MessageAttributeValue{
		strings.Repeat("n", 257): {DataType: aws.String("String"), StringValue: aws.String("v")}}}
	if err := checkSNSLimits("long", in); !errors.Is(err, broker.ErrTooLarge) {
		t.Errorf("257-byte attribute name = %v, want broker.ErrTooLarge", err)
	}
	in.MessageAttributes = map[string]snstypes.MessageAttributeValue{}
	for i := range limits.SNS.MaxAttributes + 1 {
		in.MessageAttributes["a"+strconv.Itoa(i)] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("v")}
	}
	if err := checkSNSLimits("eleven", in); !errors.Is(err, broker.ErrTooLarge) {
		t.Errorf("%d attributes = %v, want broker.ErrTooLarge", len(in.MessageAttributes), err)
	}
	if n := publishes.Load(); n != 1 {
		t.Errorf("%d Publish/PublishBatch calls, want 1 (the batch's message at the limit)", n)
	}
}
