package sqs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// receiveN reads exactly n messages from k (in the order the queue hands
// them out) within 20 s, acknowledging each, and then checks nothing more
// is there.
func receiveN(t *testing.T, k *Consumer, n int) []*message.Message {
	t.Helper()
	ctx := context.Background()
	var got []*message.Message
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		ms, err := k.Receive(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			got = append(got, m)
			if err := k.Acknowledge(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != n {
		t.Fatalf("%s: received %d messages, want %d", k.QueueName(), len(got), n)
	}
	assertEmpty(t, k, time.Second)
	return got
}

// TestSendBatch_SameWireFormatAsSend_R18 sends 25 messages to two queues,
// interleaved, in one SendBatch: each queue gets its own, and each reads
// back with the header and bag Send would have written (replay
// publishes in batches without changing the wire format).
func TestSendBatch_SameWireFormatAsSend_R18(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	qa, qb := uniq("batch-a"), uniq("batch-b")
	ka := setup(t, c, ChannelOptions{Queue: qa}, ConsumerOptions{})
	kb := setup(t, c, ChannelOptions{Queue: qb}, ConsumerOptions{})
	var ms []*message.Message
	want := map[string]*message.Message{}
	for i := range 25 {
		m := sample()
		m.Header.MessageID = fmt.Sprintf("batch-%d", i)
		m.Header.Topic = qa
		if i%2 == 1 {
			m.Header.Topic = qb
		}
		ms = append(ms, m)
		want[m.Header.MessageID] = m.Clone()
	}
	p := NewProducer(c, ProducerOptions{})
	var _ broker.BatchProducer = p
	for i, err := range p.SendBatch(context.Background(), ms) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for _, tc := range []struct {
		k *Consumer
		n int
	}{{ka, 13}, {kb, 12}} {
		for _, got := range receiveN(t, tc.k, tc.n) {
			w := want[got.Header.MessageID]
			if w == nil || w.Header.Topic != tc.k.QueueName() {
				t.Fatalf("%s received %s, not one of its own", tc.k.QueueName(), got.Header.MessageID)
			}
			w.Header.Topic = got.Header.Topic // the wire's topic is the queue URL's name
			assertSameHeader(t, w, got)
			if string(got.Body) != string(w.Body) {
				t.Errorf("body %q, want %q", got.Body, w.Body)
			}
		}
	}
}

// TestSendBatch_FIFOKeepsGroupAndOrder: a batch of 23 to a FIFO queue keeps
// each message's group (partition key) and deduplication id, and one
// group's messages arrive in the order given, across several batch calls.
func TestSendBatch_FIFOKeepsGroupAndOrder(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("batch-fifo")
	k := setup(t, c, ChannelOptions{Queue: q, Fifo: true}, ConsumerOptions{})
	var ms []*message.Message
	for i := range 23 {
		m := newMessage(q)
		m.Header.MessageID = fmt.Sprintf("fifo-%02d", i)
		m.Header.PartitionKey = "group-9"
		m.Header.Bag["messageDeduplicationId"] = fmt.Sprintf("dedup-%d", i)
		ms = append(ms, m)
	}
	for i, err := range NewProducer(c, ProducerOptions{Fifo: true}).SendBatch(context.Background(), ms) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	got := receiveN(t, k, len(ms))
	for i, m := range got {
		if m.Header.MessageID != ms[i].Header.MessageID || m.Header.PartitionKey != "group-9" {
			t.Fatalf("message %d: %s in group %q, want %s in group-9", i, m.Header.MessageID, m.Header.PartitionKey, ms[i].Header.MessageID)
		}
	}
}

// TestSendBatch_SNSTopic publishes a batch to an SNS topic with
// PublishBatch; the subscribed queue receives each message.
func TestSendBatch_SNSTopic(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, topic := uniq("batch-sns-q"), uniq("batch.sns")
	k := setup(t, c, ChannelOptions{Queue: q, Topic: topic}, ConsumerOptions{})
	var ms []*message.Message
	ids := map[string]bool{}
	for i := range 12 {
		m := sample()
		m.Header.MessageID = fmt.Sprintf("sns-%d", i)
		m.Header.Topic = topic
		ms = append(ms, m)
		ids[m.Header.MessageID] = true
	}
	for i, err := range NewProducer(c, ProducerOptions{SNS: true}).SendBatch(context.Background(), ms) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for _, m := range receiveN(t, k, len(ms)) {
		if !ids[m.Header.MessageID] || m.Header.Subject != "subj" || m.Header.CorrelationID != "corr-1" || m.Header.HandledCount != 2 {
			t.Errorf("got %s subject %q corr %q count %d", m.Header.MessageID, m.Header.Subject, m.Header.CorrelationID, m.Header.HandledCount)
		}
		delete(ids, m.Header.MessageID)
	}
}

// TestSendBatch_OneErrorPerMessage: in one batch, a message that cannot be
// encoded (too many attributes) and messages to a queue that does not exist
// fail, each with its own error, while the rest are published.
func TestSendBatch_OneErrorPerMessage(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q, missing := uniq("batch-mixed"), uniq("batch-missing")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	// Two extra attributes: a plain message carries 9, one with subject,
	// reply-to and correlation id would carry 12.
	p := NewProducer(c, ProducerOptions{MakeChannels: broker.MakeValidate, Attributes: map[string]string{"x-a": "1", "x-b": "2"}})
	ok1, ok2 := newMessage(q), newMessage(q)
	big := sample()
	big.Header.Topic = q
	lost := newMessage(missing)
	errs := p.SendBatch(context.Background(), []*message.Message{ok1, big, lost, ok2})
	if errs[0] != nil || errs[3] != nil {
		t.Fatalf("plain messages failed: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], ErrTooManyAttributes) {
		t.Errorf("message with 12 attributes: %v, want ErrTooManyAttributes", errs[1])
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), missing) {
		t.Errorf("message to a missing queue: %v, want an error naming %s", errs[2], missing)
	}
	got := receiveN(t, k, 2)
	if ids := got[0].Header.MessageID + "," + got[1].Header.MessageID; !strings.Contains(ids, ok1.Header.MessageID) || !strings.Contains(ids, ok2.Header.MessageID) {
		t.Errorf("received %s, want %s and %s", ids, ok1.Header.MessageID, ok2.Header.MessageID)
	}
}

// TestSendBatch_CallFails_EveryEntryFails injects a failure on the
// SendMessageBatch call: every message of the batch reports it, and nothing
// reaches the queue.
func TestSendBatch_CallFails_EveryEntryFails(t *testing.T) {
	t.Parallel()
	c := testClients(t)
	q := uniq("batch-fault")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{})
	fc, _ := faultyClients(t, func(op, _ string) error {
		if op == "SendMessageBatch" {
			return errInjected
		}
		return nil
	})
	ms := []*message.Message{newMessage(q), newMessage(q), newMessage(q)}
	for i, err := range NewProducer(fc, ProducerOptions{}).SendBatch(context.Background(), ms) {
		if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), ms[i].Header.MessageID) {
			t.Errorf("message %d: %v, want the injected fault naming its id", i, err)
		}
	}
	assertEmpty(t, k, time.Second)
}

// TestBatchChunks_BoundEntriesAndBytesInOrder: at most MaxBatchEntries entries
// and MaxBatchBytes bytes a call, in order; an entry larger than the limit goes
// alone.
func TestBatchChunks_BoundEntriesAndBytesInOrder(t *testing.T) {
	var es []batchEntry[int]
	sizes := []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, MaxBatchBytes - 1, 2, MaxBatchBytes + 5, 3}
	for i, s := range sizes {
		es = append(es, batchEntry[int]{i: i, size: s, entry: i})
	}
	var shape []string
	for _, c := range chunks(es) {
		var ids []string
		for _, e := range c {
			ids = append(ids, fmt.Sprint(e.i))
		}
		shape = append(shape, strings.Join(ids, ","))
	}
	want := "0,1,2,3,4,5,6,7,8,9|10,11|12|13|14" // 10+11 is exactly the limit
	if got := strings.Join(shape, "|"); got != want {
		t.Errorf("chunks %s, want %s", got, want)
	}
}
