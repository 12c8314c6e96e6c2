package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
)

// TestReplay_Batched_OneSendOneDeletePerReceive: with the default four
// workers, the messages of one receive (no partition key) are published
// with one SendMessageBatch and removed with one DeleteMessageBatch, not
// spread over the workers in smaller batches: thirty messages take at most
// four of each (three receives of ten, one split allowed), and no single
// SendMessage or DeleteMessage. Every message arrives and the DLQ is empty.
func TestReplay_Batched_OneSendOneDeletePerReceive(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("batch-dest"), uniq("batch-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedMany(t, c, dlq, dest, batchN)
	cc, calls := countingClients(t, func(string) error { return nil })
	src := source(reader(t, cc, dlq, false), dlq)
	src.ShortPoll = true
	p := sqs.NewProducer(cc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != batchN || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v; want %d replayed", sum, err, batchN)
	}
	if got := ids(drain(t, c, dest, false, batchN)); len(got) != batchN {
		t.Fatalf("%d distinct messages arrived, want %d", len(got), batchN)
	}
	if n := depth(t, c, dlq); n != 0 {
		t.Fatalf("DLQ holds %d, want 0", n)
	}
	sends, sendBatches := calls.count("SendMessage"), calls.count("SendMessageBatch")
	deletes, deleteBatches := calls.count("DeleteMessage"), calls.count("DeleteMessageBatch")
	if sends != 0 || deletes != 0 || sendBatches > 4 || deleteBatches > 4 {
		t.Fatalf("calls: SendMessage %d, SendMessageBatch %d, DeleteMessage %d, DeleteMessageBatch %d; want no single calls and at most 4 batches of each for %d messages",
			sends, sendBatches, deletes, deleteBatches, batchN)
	}
}

// TestReplay_ShortPoll_EndProvedByOneLongPollThenShort (fauxqs): on an
// SQS source (ShortPoll) the replay receives with short polls while moves
// are under way, and proves the DLQ empty with one empty long poll made
// after every remove, confirmed by an empty short poll: not by two long
// polls (what `--wait`'s help promises).
func TestReplay_ShortPoll_EndProvedByOneLongPollThenShort(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("end-dest"), uniq("end-dlq")
	makeQueues(t, c, dest, dlq, false)
	const n = 45
	seedMany(t, c, dlq, dest, n)
	log := &receiveLog{Consumer: reader(t, c, dlq, false)}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), shortPollSource(log, dlq), dlq, p, inspect.Filter{}, inspect.ReplayOptions{})
	if err != nil || sum.Replayed != n {
		t.Fatalf("replay: %+v %v, want %d replayed", sum, err, n)
	}
	long := 0
	for _, call := range log.tail(len(log.calls)) {
		if call.wait > 0 && call.removed == n {
			long++
		}
	}
	end := log.tail(2)
	if long != 1 || len(end) != 2 || end[0] != (receiveCall{wait: time.Second, removed: n}) || end[1] != (receiveCall{wait: 0, removed: n}) {
		t.Fatalf("the replay ended on %+v (%d long polls after the last remove); want one empty 1s long poll then an empty short poll, both after all %d removes; receives %+v", end, long, n, log.calls)
	}
}

// TestPeek_ReleasesTenPerCall (fauxqs): a peek of 25 messages releases
// them at its end with three ChangeMessageVisibilityBatch calls, no single
// ChangeMessageVisibility, and all 25 are visible again at once (their
// visibility timeout is two minutes: only the release can show them).
func TestPeek_ReleasesTenPerCall(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq := uniq("peek-rel")
	makeQueues(t, c, dlq, "", false)
	const n = 25
	seedMany(t, c, dlq, "orders", n)
	cc, calls := countingClients(t, func(string) error { return nil })
	src := source(reader(t, cc, dlq, false), dlq)
	src.ShortPoll = true
	if got := peekJSON(t, src, inspect.Filter{}); len(got) != n {
		t.Fatalf("peek showed %d, want %d", len(got), n)
	}
	if single, batch := calls.count("ChangeMessageVisibility"), calls.count("ChangeMessageVisibilityBatch"); single != 0 || batch != 3 {
		t.Fatalf("ChangeMessageVisibility %d, ChangeMessageVisibilityBatch %d; want 0 and 3 for %d held messages", single, batch, n)
	}
	if v := visible(t, c, dlq); v != n {
		t.Fatalf("%d visible after the peek, want all %d released", v, n)
	}
}
