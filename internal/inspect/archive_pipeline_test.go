package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// receiveLog wraps a consumer and records each Receive: the timeout asked
// for, how many messages came back, and how many removes had returned when
// it began. With dropFirst, the first receive that brings messages makes
// them visible again and answers empty: the early empty answer of a busy
// broker, which must not end a scan early.
type receiveLog struct {
	broker.Consumer
	mu        sync.Mutex
	calls     []receiveCall
	removed   int
	dropFirst bool
}

type receiveCall struct {
	wait    time.Duration
	got     int
	removed int
}

func (r *receiveLog) Receive(ctx context.Context, wait time.Duration) ([]*message.Message, error) {
	r.mu.Lock()
	call := receiveCall{wait: wait, removed: r.removed}
	r.mu.Unlock()
	ms, err := r.Consumer.Receive(ctx, wait)
	r.mu.Lock()
	drop := r.dropFirst && len(ms) > 0
	if drop {
		r.dropFirst = false
	}
	r.mu.Unlock()
	if drop {
		for _, m := range ms {
			if err := r.Consumer.Requeue(ctx, m, 0); err != nil {
				return nil, fmt.Errorf("injected early empty: release %s: %w", m.Header.MessageID, err)
			}
		}
		ms = nil
	}
	r.mu.Lock()
	call.got = len(ms)
	r.calls = append(r.calls, call)
	r.mu.Unlock()
	return ms, err
}

func (r *receiveLog) Acknowledge(ctx context.Context, m *message.Message) error {
	err := r.Consumer.Acknowledge(ctx, m)
	r.mu.Lock()
	r.removed++
	r.mu.Unlock()
	return err
}

// tail is the last n calls.
func (r *receiveLog) tail(n int) []receiveCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[max(len(r.calls)-n, 0):]
}

// fifoGroupDLQ makes an SQS FIFO queue and its dead-letter queue holding n
// routed copies g00.. of one message group, customer-9; it returns the
// dead-letter queue's name as made and as SQS names it (.fifo).
func fifoGroupDLQ(t *testing.T, c *sqs.Clients, n int) (dlq, dn string) {
	t.Helper()
	queue, dlq := uniq("fifo-orders"), uniq("fifo-dlq")
	makeQueues(t, c, queue, dlq, true)
	qn := sqs.QueueName(queue, true)
	for i := range n {
		deadLetter(t, c, dlq, fmt.Sprintf("g%02d", i), qn, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, 3, true, "customer-9")
	}
	return dlq, sqs.QueueName(dlq, true)
}

// groupInOrder reads the synced archive and fails unless it holds g00 ..
// g<n-1> of group customer-9, in that order; it returns them.
func groupInOrder(t *testing.T, buf *syncedBuffer, n int) []*message.Message {
	t.Helper()
	ms, err := inspect.ReadArchive(strings.NewReader(buf.synced), "archive")
	if err != nil || len(ms) != n {
		t.Fatalf("archive holds %d, %v", len(ms), err)
	}
	for i, m := range ms {
		if want := fmt.Sprintf("g%02d", i); m.Header.MessageID != want || m.Header.PartitionKey != "customer-9" {
			t.Fatalf("line %d: %s in group %q, want %s in customer-9", i+1, m.Header.MessageID, m.Header.PartitionKey, want)
		}
	}
	return ms
}

// shortPollSource is the dlq command's SQS source: 1 s long polls,
// ShortPoll set.
func shortPollSource(k broker.Consumer, name string) *inspect.Source {
	src := source(k, name)
	src.ShortPoll = true
	return src
}

// TestArchive_ShortPoll_OverlapsSyncsFirstProvesEnd (fauxqs): with
// ShortPoll (the SQS dlq source) the next receive, a short poll, runs while
// the previous receive is written, synced and removed; still every message
// is removed only after its line is synced, all 45 are archived, and the
// end is proved by an empty 1 s long poll and an empty short poll, both
// made after every remove returned.
func TestArchive_ShortPoll_OverlapsSyncsFirstProvesEnd(t *testing.T) {
	c := clients(t)
	dlq := uniq("arch-pipe")
	makeQueues(t, c, dlq, "", false)
	const n = 45
	seedMany(t, c, dlq, "orders", n)
	buf := &syncedBuffer{}
	log := &receiveLog{Consumer: mustBeSynced{reader(t, c, dlq, false), t, buf}}
	sum, err := inspect.Archive(context.Background(), shortPollSource(log, dlq), inspect.Filter{}, buf, buf.sync)
	if err != nil || sum.Archived != n || sum.Failed != 0 {
		t.Fatalf("archive: %+v %v, want %d archived", sum, err, n)
	}
	ms, err := inspect.ReadArchive(strings.NewReader(buf.synced), "archive")
	if err != nil || len(ms) != n {
		t.Fatalf("the archive holds %d records (%v), want %d", len(ms), err, n)
	}
	if d := depth(t, c, dlq); d != 0 {
		t.Fatalf("the DLQ still holds %d", d)
	}
	overlapped := false
	for _, call := range log.tail(len(log.calls)) {
		if call.wait == 0 && call.got > 0 && call.removed < n {
			overlapped = true
		}
	}
	if !overlapped {
		t.Errorf("no short poll brought messages while the archive went on: receives %+v", log.calls)
	}
	end := log.tail(2)
	if len(end) != 2 || end[0] != (receiveCall{wait: time.Second, removed: n}) || end[1] != (receiveCall{wait: 0, removed: n}) {
		t.Fatalf("the archive ended on %+v; want an empty 1s long poll then an empty short poll, both after all %d removes", end, n)
	}
}

// TestArchive_ShortPoll_FIFOGroupInFlightNotMissed (fauxqs): one
// SQS FIFO message group of 15 (stock fauxqs hands out one message of a
// group a receive). The short poll made while the previous message is
// still being removed comes back empty because the group is held back;
// the archive must not count that as the end. Every message is archived,
// in order.
func TestArchive_ShortPoll_FIFOGroupInFlightNotMissed(t *testing.T) {
	c := clients(t)
	const n = 15
	dlq, dn := fifoGroupDLQ(t, c, n)
	log := &receiveLog{Consumer: reader(t, c, dlq, true)}
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), shortPollSource(log, dn), inspect.Filter{}, buf, buf.sync)
	if err != nil || sum.Archived != n || sum.Failed != 0 {
		t.Fatalf("archive: %+v %v, want %d archived; receives %+v", sum, err, n, log.calls)
	}
	groupInOrder(t, buf, n)
	if d := depth(t, c, dn); d != 0 {
		t.Fatalf("the DLQ still holds %d", d)
	}
}

// TestArchive_ShortPoll_EarlyEmptyConfirmed (fauxqs): a long poll
// that answers empty although the queue holds messages (a busy broker,
// injected) does not end the archive: the confirming short poll finds them.
func TestArchive_ShortPoll_EarlyEmptyConfirmed(t *testing.T) {
	c := clients(t)
	dlq, _, _ := seedDLQ(t, c)
	log := &receiveLog{Consumer: reader(t, c, dlq, false), dropFirst: true}
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), shortPollSource(log, dlq), inspect.Filter{}, buf, buf.sync)
	if err != nil || sum.Archived != 5 {
		t.Fatalf("archive: %+v %v, want all 5 archived after the early empty answer; receives %+v", sum, err, log.calls)
	}
	if log.calls[0].got != 0 {
		t.Fatalf("no early empty answer was injected: %+v", log.calls)
	}
}

// TestArchive_ShortPoll_SyncFailsMidway_LosesNothing (fauxqs): the
// second receive's sync fails while the third receive is already in hand:
// the archive stops with the error, what was synced is removed, and the
// rest (the failed receive's and the one read ahead) is released, visible.
func TestArchive_ShortPoll_SyncFailsMidway_LosesNothing(t *testing.T) {
	c := clients(t)
	dlq := uniq("arch-pipe-fail")
	makeQueues(t, c, dlq, "", false)
	const n = 35
	seedMany(t, c, dlq, "orders", n)
	buf := &syncedBuffer{}
	syncs := 0
	sync := func() error {
		if syncs++; syncs == 2 {
			return errors.New("injected: input/output error")
		}
		return buf.sync()
	}
	log := &receiveLog{Consumer: mustBeSynced{reader(t, c, dlq, false), t, buf}}
	sum, err := inspect.Archive(context.Background(), shortPollSource(log, dlq), inspect.Filter{}, buf, sync)
	if err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("archive: %+v %v, want the sync error", sum, err)
	}
	ms, rerr := inspect.ReadArchive(strings.NewReader(buf.synced), "archive")
	if rerr != nil || sum.Archived != len(ms) || sum.Archived == 0 {
		t.Fatalf("archived %d, the synced file holds %d (%v)", sum.Archived, len(ms), rerr)
	}
	if v := visible(t, c, dlq); v != n-sum.Archived {
		t.Fatalf("the DLQ shows %d visible, want %d (all not archived released at once)", v, n-sum.Archived)
	}
}

// overlapProducer wraps a batch producer and records how many SendBatch
// calls were under way at once. With waitForSecond, the first call waits
// (up to a deadline) until a second one has begun.
type overlapProducer struct {
	*sqs.Producer
	mu            sync.Mutex
	now, peak     int
	waitForSecond bool
	second        chan struct{}
	once          sync.Once
	calls         int
}

func (p *overlapProducer) SendBatch(ctx context.Context, ms []*message.Message) []error {
	p.mu.Lock()
	p.now++
	p.calls++
	first := p.calls == 1
	p.peak = max(p.peak, p.now)
	if p.calls == 2 {
		p.once.Do(func() { close(p.second) })
	}
	p.mu.Unlock()
	if first && p.waitForSecond {
		select {
		case <-p.second:
		case <-time.After(10 * time.Second): // a deadline for a condition, not a sleep
		}
	}
	defer func() {
		p.mu.Lock()
		p.now--
		p.mu.Unlock()
	}()
	return p.Producer.SendBatch(ctx, ms)
}

// restoreSet is n archived messages, each with the partition key key.
func restoreSet(n int, key string) []*message.Message {
	ms := make([]*message.Message, n)
	for i := range ms {
		m := message.New(fmt.Sprintf("r%02d", i), "orders", message.MTEvent, []byte(`{"i":`+fmt.Sprint(i)+`}`))
		m.Header.PartitionKey = key
		ms[i] = message.Stamp(m, "orders-dlq", message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())
	}
	return ms
}

// TestRestore_Unkeyed_BatchesAtOnce (fauxqs): messages without a
// partition key are published several batches at once; done still hears
// of each once, in the archive's order, and every one arrives.
func TestRestore_Unkeyed_BatchesAtOnce(t *testing.T) {
	c := clients(t)
	dest := uniq("restore-many")
	makeQueues(t, c, dest, "", false)
	const n = 45
	ms := restoreSet(n, "")
	p := &overlapProducer{Producer: sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate}), waitForSecond: true, second: make(chan struct{})}
	var told []string
	rs, err := inspect.Restore(context.Background(), p, ms, dest, discardLogger(), func(id string, err error) {
		if err != nil {
			t.Errorf("restore %s: %v", id, err)
		}
		told = append(told, id)
	})
	if err != nil || rs.Restored != n || rs.Failed != 0 {
		t.Fatalf("restore: %+v %v", rs, err)
	}
	if p.peak < 2 {
		t.Errorf("at most %d batch under way at once, want several", p.peak)
	}
	for i, id := range told {
		if want := fmt.Sprintf("r%02d", i); id != want {
			t.Fatalf("done heard %v, want r00..r%02d in order", told, n-1)
		}
	}
	if len(told) != n {
		t.Fatalf("done heard of %d, want %d", len(told), n)
	}
	if got := len(drain(t, c, dest, false, n)); got != n {
		t.Fatalf("the queue holds %d, want %d", got, n)
	}
}

// TestRestore_Keyed_OneBatchAtATimeInOrder (fauxqs FIFO): messages
// of one message group are published one batch at a time, and arrive in
// the archive's order.
func TestRestore_Keyed_OneBatchAtATimeInOrder(t *testing.T) {
	c := clients(t)
	queue := uniq("restore-fifo")
	makeQueues(t, c, queue, "", true)
	qn := sqs.QueueName(queue, true)
	const n = 35
	ms := restoreSet(n, "customer-9")
	p := &overlapProducer{Producer: sqs.NewProducer(c, sqs.ProducerOptions{Fifo: true, MakeChannels: broker.MakeValidate}), second: make(chan struct{})}
	rs, err := inspect.Restore(context.Background(), p, ms, qn, discardLogger(), nil)
	if err != nil || rs.Restored != n {
		t.Fatalf("restore: %+v %v", rs, err)
	}
	if p.peak != 1 {
		t.Errorf("%d batches of one message group under way at once, want 1", p.peak)
	}
	for i, m := range drain(t, c, qn, true, n) {
		if want := fmt.Sprintf("r%02d", i); m.Header.MessageID != want {
			t.Fatalf("message %d is %s, want %s", i, m.Header.MessageID, want)
		}
	}
}
