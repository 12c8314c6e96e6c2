package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// batchN is how many messages the batched-replay tests dead-letter: three
// full batches.
const batchN = 30

// seedBatch dead-letters batchN routed copies on a fresh DLQ; message i's
// original topic is dest(i).
func seedBatch(t *testing.T, c *sqs.Clients, dlq string, dest func(i int) string) {
	t.Helper()
	for i := range batchN {
		deadLetter(t, c, dlq, fmt.Sprintf("b%02d", i), dest(i), message.Rejection{Reason: message.ReasonDeliveryError, Description: "timed out"}, 3, false, "")
	}
}

// TestReplay_Batched_EachMessageOnce_FewerCalls_R5: thirty messages are
// replayed with SendMessageBatch and DeleteMessageBatch (one worker, so the
// scan's batches of ten reach it together): each arrives once, the DLQ is
// empty, and the replay took fewer publish and remove calls than messages
// (the replay throughput target of docs/performance.md rests on it).
func TestReplay_Batched_EachMessageOnce_FewerCalls_R5(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("batch-dest"), uniq("batch-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedBatch(t, c, dlq, func(int) string { return dest })
	cc, calls := countingClients(t, func(string) error { return nil })
	src := source(reader(t, cc, dlq, false), dlq)
	p := sqs.NewProducer(cc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{Workers: 1})
	if err != nil || sum.Replayed != batchN || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v; want %d replayed", sum, err, batchN)
	}
	got := ids(drain(t, c, dest, false, batchN))
	for i := range batchN {
		if m := got[fmt.Sprintf("b%02d", i)]; m == nil || m.Header.HandledCount != 0 {
			t.Fatalf("b%02d: %+v, want it once with its budget from 0", i, m)
		}
	}
	if n := depth(t, c, dlq); n != 0 {
		t.Fatalf("DLQ holds %d, want 0", n)
	}
	sends, sendBatches := calls.count("SendMessage"), calls.count("SendMessageBatch")
	deletes, deleteBatches := calls.count("DeleteMessage"), calls.count("DeleteMessageBatch")
	if sendBatches == 0 || deleteBatches == 0 || sends+sendBatches >= batchN || deletes+deleteBatches >= batchN {
		t.Fatalf("calls: SendMessage %d, SendMessageBatch %d, DeleteMessage %d, DeleteMessageBatch %d; want batches and fewer calls than %d messages",
			sends, sendBatches, deletes, deleteBatches, batchN)
	}
}

// TestReplay_Batched_SomePublishesFail_LosesNothing: half the messages name
// an original topic whose queue does not exist; within the same batches the
// others are replayed, the failures stay in the DLQ, visible at once.
func TestReplay_Batched_SomePublishesFail_LosesNothing(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, missing, dlq := uniq("batch-dest"), uniq("batch-missing"), uniq("batch-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedBatch(t, c, dlq, func(i int) string {
		if i%2 == 1 {
			return missing
		}
		return dest
	})
	src := source(reader(t, c, dlq, false), dlq)
	src.Logger = discardLogger()
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{Workers: 1})
	if err != nil || sum.Replayed != batchN/2 || sum.Failed != batchN/2 {
		t.Fatalf("summary %+v, %v; want %d replayed and %d failed", sum, err, batchN/2, batchN/2)
	}
	for id := range ids(drain(t, c, dest, false, batchN/2)) {
		var i int
		if _, err := fmt.Sscanf(id, "b%d", &i); err != nil || i%2 != 0 {
			t.Errorf("destination got %s, want only the even ones", id)
		}
	}
	if n := visible(t, c, dlq); n != batchN/2 {
		t.Fatalf("%d visible in the DLQ, want the %d failures released at once", n, batchN/2)
	}
}

// TestReplay_Batched_RemoveFails_BothPlacesNeverNeither injects a failure on
// every remove (DeleteMessageBatch and DeleteMessage): every message is
// published and stays in the DLQ, visible again, and is counted as failed.
func TestReplay_Batched_RemoveFails_BothPlacesNeverNeither(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("batch-dest"), uniq("batch-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedBatch(t, c, dlq, func(int) string { return dest })
	injected := errors.New("injected: connection reset before the delete")
	fc := faultyClients(t, func(op string) error {
		if op == "DeleteMessageBatch" || op == "DeleteMessage" {
			return injected
		}
		return nil
	})
	src := source(reader(t, fc, dlq, false), dlq)
	src.Logger = discardLogger()
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{Workers: 1})
	if err != nil || sum.Replayed != 0 || sum.Failed != batchN {
		t.Fatalf("summary %+v, %v; want %d failed", sum, err, batchN)
	}
	drain(t, c, dest, false, batchN)
	if n := visible(t, c, dlq); n != batchN {
		t.Fatalf("%d visible in the DLQ, want all %d released at once", n, batchN)
	}
}

// TestReplay_Batched_PublishFails_StaysInDLQ injects a failure on every
// publish (SendMessageBatch and SendMessage): nothing reaches the
// destination and every message is back in the DLQ, visible.
func TestReplay_Batched_PublishFails_StaysInDLQ(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("batch-dest"), uniq("batch-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedBatch(t, c, dlq, func(int) string { return dest })
	injected := errors.New("injected: connection reset before the publish")
	fc := faultyClients(t, func(op string) error {
		if op == "SendMessageBatch" || op == "SendMessage" {
			return injected
		}
		return nil
	})
	src := source(reader(t, c, dlq, false), dlq)
	src.Logger = discardLogger()
	p := sqs.NewProducer(fc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != 0 || sum.Failed != batchN {
		t.Fatalf("summary %+v, %v; want %d failed", sum, err, batchN)
	}
	if n := depth(t, c, dest); n != 0 {
		t.Fatalf("destination holds %d, want 0", n)
	}
	if n := visible(t, c, dlq); n != batchN {
		t.Fatalf("%d visible in the DLQ, want all %d", n, batchN)
	}
}
