package sqs

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"
)

// Receive asks SQS for every message attribute and for exactly the system
// attributes Decode reads, so a FIFO message still comes with its group id
// (the partition key), its deduplication id (kept in the bag) and its
// receive count (the delivery count), and a message that names no time
// gets its send time; the other system attributes ("All") are not asked
// for.
func TestReceiveAsksForTheSystemAttributesDecodeReads(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []receiveAsk
	c, _ := faultyClients(t, func(op, body string) error {
		if op == "ReceiveMessage" {
			var a receiveAsk
			if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Errorf("ReceiveMessage body %q: %v", body, err)
			}
			mu.Lock()
			asked = append(asked, a)
			mu.Unlock()
		}
		return nil
	})
	q := uniq("sysattrs")
	k := setup(t, c, ChannelOptions{Queue: q, Fifo: true}, ConsumerOptions{})
	m0 := newMessage(q)
	m0.Header.PartitionKey = "group-3"
	m0.Header.Bag[AttrMessageDeduplicationID] = "dedup-3"
	send(t, testClients(t), ProducerOptions{Fifo: true}, m0)
	m := receiveOne(t, k, 10*time.Second)
	if m.Header.PartitionKey != "group-3" {
		t.Errorf("partition key %q, want group-3 (MessageGroupId)", m.Header.PartitionKey)
	}
	if d, _ := m.Header.Bag.String(AttrMessageDeduplicationID); d != "dedup-3" {
		t.Errorf("bag %s %q, want dedup-3 (MessageDeduplicationId)", AttrMessageDeduplicationID, d)
	}
	if m.DeliveryAttempt != 1 || m.Header.HandledCount != 0 {
		t.Errorf("attempt %d, handled count %d, want 1 and 0 (ApproximateReceiveCount)", m.DeliveryAttempt, m.Header.HandledCount)
	}
	if v, _ := m.Header.Bag.String("tenant"); v != "acme" {
		t.Errorf("bag tenant %q, want acme (the message attributes)", v)
	}

	raw := uniq("sysattrs-raw")
	kr := setup(t, c, ChannelOptions{Queue: raw}, ConsumerOptions{})
	before := time.Now().Add(-time.Second)
	rawSend(t, testClients(t), raw, "not brighter", nil)
	// The time under test: decoded more than a second after the send, a
	// timestamp taken at decode instead of from SentTimestamp falls outside
	// [before, after].
	time.Sleep(1100 * time.Millisecond)
	after := time.Now().Add(-100 * time.Millisecond)
	got := receiveOne(t, kr, 10*time.Second)
	if ts := got.Header.Timestamp; ts.Before(before) || ts.After(after) {
		t.Errorf("timestamp %s of a message naming no time, want its send time (SentTimestamp) between %s and %s", ts, before, after)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no ReceiveMessage seen")
	}
	want := []string{"ApproximateReceiveCount", "MessageDeduplicationId", "MessageGroupId", "SentTimestamp"}
	for _, a := range asked {
		sys := slices.Sorted(slices.Values(a.MessageSystemAttributeNames))
		if !slices.Equal(sys, want) {
			t.Errorf("ReceiveMessage asked for system attributes %v, want %v", a.MessageSystemAttributeNames, want)
		}
		if !slices.Equal(a.MessageAttributeNames, []string{"All"}) {
			t.Errorf("ReceiveMessage asked for message attributes %v, want [All]", a.MessageAttributeNames)
		}
	}
}

// receiveAsk is what a ReceiveMessage request asks for.
type receiveAsk struct {
	MessageAttributeNames       []string
	MessageSystemAttributeNames []string
}
