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

// endPolls fails t unless the receives after the last one that brought
// messages are short polls, then exactly one empty long poll of wait made
// after all n removes, then an empty short poll.
func endPolls(t *testing.T, log *receiveLog, n int) {
	t.Helper()
	calls := log.tail(len(log.calls))
	last := -1
	for i, call := range calls {
		if call.got > 0 {
			last = i
		}
	}
	after := calls[last+1:]
	long := 0
	for _, call := range after {
		if call.got > 0 || (call.wait > 0 && call.wait != time.Second) {
			t.Fatalf("receives after the last messages: %+v", after)
		}
		if call.wait > 0 {
			long++
		}
	}
	end := log.tail(2)
	if long != 1 || len(end) != 2 || end[0] != (receiveCall{wait: time.Second, removed: n}) || end[1] != (receiveCall{wait: 0, removed: n}) {
		t.Fatalf("the scan ended on %+v (%d long polls after the last messages); want one empty 1s long poll then an empty short poll, both after all %d removes; receives %+v", end, long, n, log.calls)
	}
}

// TestReplay_ShortPoll_EndProvedByOneLongPollThenShort (fauxqs): on an
// SQS source (ShortPoll) the replay receives with short polls once it has
// handed messages to its workers, and proves the DLQ empty with one empty
// long poll made after every remove, confirmed by an empty short poll: not
// by two long polls (what `--wait`'s help promises).
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
	endPolls(t, log, n)
}

// TestReplay_Copy_ShortPoll_EndStillNeedsALongPoll (fauxqs): a replay
// --copy removes nothing, so no settle reports a remove; still the empty
// short poll made after its last hand-over does not count towards the
// end: the end is one empty long poll, confirmed by a short poll (two short
// polls sample only some SQS servers and prove nothing).
func TestReplay_Copy_ShortPoll_EndStillNeedsALongPoll(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("copy-end-dest"), uniq("copy-end-dlq")
	makeQueues(t, c, dest, dlq, false)
	const n = 15
	seedMany(t, c, dlq, dest, n)
	log := &receiveLog{Consumer: reader(t, c, dlq, false)}
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), shortPollSource(log, dlq), dlq, p, inspect.Filter{}, inspect.ReplayOptions{Copy: true})
	if err != nil || sum.Replayed != n {
		t.Fatalf("replay --copy: %+v %v, want %d replayed", sum, err, n)
	}
	endPolls(t, log, 0)
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

// TestReplay_HighRate_StillBatchesOfTen: a --rate of 200 a second paces
// batches of ten (a tenth of a second's worth), taking ten tokens per
// send: the limit costs no extra requests, the same at most four
// SendMessageBatch and DeleteMessageBatch calls for thirty messages and no
// single ones, and the publishes still keep to the rate (thirty at 200 a
// second, ten admitted at once: at least 0.1 s).
func TestReplay_HighRate_StillBatchesOfTen(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dest, dlq := uniq("rate-dest"), uniq("rate-dlq")
	makeQueues(t, c, dest, dlq, false)
	seedMany(t, c, dlq, dest, batchN)
	cc, calls := countingClients(t, func(string) error { return nil })
	src := source(reader(t, cc, dlq, false), dlq)
	src.ShortPoll = true
	p := sqs.NewProducer(cc, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	start := time.Now()
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{Rate: 200})
	took := time.Since(start)
	if err != nil || sum.Replayed != batchN || sum.Failed != 0 {
		t.Fatalf("summary %+v, %v; want %d replayed", sum, err, batchN)
	}
	if got := ids(drain(t, c, dest, false, batchN)); len(got) != batchN {
		t.Fatalf("%d distinct messages arrived, want %d", len(got), batchN)
	}
	sends, sendBatches := calls.count("SendMessage"), calls.count("SendMessageBatch")
	deletes, deleteBatches := calls.count("DeleteMessage"), calls.count("DeleteMessageBatch")
	if sends != 0 || deletes != 0 || sendBatches > 4 || deleteBatches > 4 {
		t.Fatalf("calls at --rate 200: SendMessage %d, SendMessageBatch %d, DeleteMessage %d, DeleteMessageBatch %d; want no single calls and at most 4 batches of each for %d messages",
			sends, sendBatches, deletes, deleteBatches, batchN)
	}
	if least := time.Duration(batchN-10) * time.Second / 200; took < least {
		t.Fatalf("%d messages at 200 a second took %v, want at least %v", batchN, took, least)
	}
}
