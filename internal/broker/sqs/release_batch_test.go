package sqs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// holdN receives until n messages have arrived (or within elapses), holding
// them (nothing is acknowledged).
func holdN(t *testing.T, k *Consumer, n int, within time.Duration) []*message.Message {
	t.Helper()
	var got []*message.Message
	deadline := time.Now().Add(within)
	for len(got) < n && time.Now().Before(deadline) {
		ms, err := k.Receive(context.Background(), time.Second)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		got = append(got, ms...)
	}
	if len(got) != n {
		t.Fatalf("received %d messages, want %d", len(got), n)
	}
	return got
}

// ReleaseBatch makes held messages visible again at once, ten per
// ChangeMessageVisibilityBatch call; an entry the broker refuses (a
// message already removed, so its receipt is no longer in flight) gets its
// own error wrapping broker.ErrStaleReceipt while the others of its call
// are released; the released ones are received again at once, where their
// two-minute visibility timeout would otherwise hide them.
func TestReleaseBatch_TenPerCall_RefusedEntryReported(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	c, _ := faultyClients(t, func(op, _ string) error {
		mu.Lock()
		calls[op]++
		mu.Unlock()
		return nil
	})
	q := uniq("release-batch")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: MaxBufferSize, VisibilityTimeout: 2 * time.Minute})
	for range 12 {
		send(t, c, ProducerOptions{}, newMessage(q))
	}
	ms := holdN(t, k, 12, 20*time.Second)
	gone := ms[3]
	if err := k.Acknowledge(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clear(calls)
	mu.Unlock()
	errs := k.ReleaseBatch(context.Background(), ms)
	if len(errs) != len(ms) {
		t.Fatalf("%d errors for %d messages", len(errs), len(ms))
	}
	for i, err := range errs {
		if i == 3 {
			if !errors.Is(err, broker.ErrStaleReceipt) {
				t.Errorf("release of the removed message: %v, want an error wrapping ErrStaleReceipt", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("release of message %d: %v", i, err)
		}
	}
	mu.Lock()
	batch, single := calls["ChangeMessageVisibilityBatch"], calls["ChangeMessageVisibility"]
	mu.Unlock()
	if batch != 2 || single != 0 {
		t.Errorf("ChangeMessageVisibilityBatch %d calls, ChangeMessageVisibility %d; want 2 and 0 for 12 messages", batch, single)
	}
	back := holdN(t, k, 11, 10*time.Second)
	for _, m := range back {
		if m.Header.MessageID == gone.Header.MessageID {
			t.Errorf("the removed message %s came back", gone.Header.MessageID)
		}
	}
}

// A failed ChangeMessageVisibilityBatch call fails every entry of that
// call, and those messages stay hidden (nothing was released).
func TestReleaseBatch_CallFails_EveryEntryFailsAndStaysHidden(t *testing.T) {
	c, _ := faultyClients(t, func(op, _ string) error {
		if op == "ChangeMessageVisibilityBatch" {
			return errInjected
		}
		return nil
	})
	q := uniq("release-batch-fail")
	k := setup(t, c, ChannelOptions{Queue: q}, ConsumerOptions{BufferSize: MaxBufferSize, VisibilityTimeout: 2 * time.Minute})
	for range 3 {
		send(t, c, ProducerOptions{}, newMessage(q))
	}
	ms := holdN(t, k, 3, 20*time.Second)
	for i, err := range k.ReleaseBatch(context.Background(), ms) {
		if !errors.Is(err, errInjected) {
			t.Errorf("message %d: %v, want the injected fault", i, err)
		}
	}
	assertEmpty(t, k, time.Second)
}
