package inspect_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// syncedBuffer is an archive file: what Write wrote, and what the last
// sync made durable.
type syncedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	synced  string
	fail    error
	syncs   int
	removed []string
}

func (b *syncedBuffer) Write(p []byte) (int, error) {
	if b.fail != nil {
		return 0, b.fail
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncedBuffer) sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.syncs++
	b.synced = b.buf.String()
	return nil
}

// mustBeSynced is a consumer whose Acknowledge fails the test unless the
// message's line was synced before: archive removes only what is on disk.
type mustBeSynced struct {
	broker.Consumer
	t   *testing.T
	buf *syncedBuffer
}

func (c mustBeSynced) Acknowledge(ctx context.Context, m *message.Message) error {
	c.buf.mu.Lock()
	ok := strings.Contains(c.buf.synced, `{"id":"`+m.Header.MessageID+`",`)
	c.buf.removed = append(c.buf.removed, m.Header.MessageID)
	c.buf.mu.Unlock()
	if !ok {
		c.t.Errorf("%s removed before its line was synced", m.Header.MessageID)
	}
	return c.Consumer.Acknowledge(ctx, m)
}

// TestArchive_WritesSyncsThenRemoves (fauxqs): each selected
// message is written (every field, rejection metadata included), synced,
// and only then removed; the others stay.
func TestArchive_WritesSyncsThenRemoves(t *testing.T) {
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	buf := &syncedBuffer{}
	src := source(mustBeSynced{reader(t, c, dlq, false), t, buf}, dlq)
	sum, err := inspect.Archive(context.Background(), src, inspect.Filter{Topics: []string{a}}, buf, buf.sync)
	if err != nil || sum.Archived != 3 || sum.Skipped != 2 || sum.Failed != 0 {
		t.Fatalf("archive: %+v %v", sum, err)
	}
	if len(buf.removed) != 3 || buf.syncs == 0 {
		t.Fatalf("removed %v after %d syncs", buf.removed, buf.syncs)
	}
	ms, err := inspect.ReadArchive(strings.NewReader(buf.buf.String()), "archive")
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedIDs(ms); got != "m1 m2 m3" {
		t.Fatalf("archive holds %q, want m1 m2 m3", got)
	}
	for _, m := range ms {
		d := inspect.Describe(m)
		if d.OriginalTopic != a || d.NativeRedrive || m.Header.Bag["tenant"] != "acme" || m.Header.CorrelationID != "corr-"+m.Header.MessageID {
			t.Fatalf("archived %s lost fields: %+v %+v", m.Header.MessageID, d, m.Header)
		}
	}
	if got := sortedIDs(peekJSON(t, source(reader(t, c, dlq, false), dlq), inspect.Filter{})); got != "m4 m5" {
		t.Fatalf("the DLQ holds %q, want m4 m5", got)
	}
}

// TestArchive_RemoveFails_InBothPlaces: a remove that fails leaves
// the message in the DLQ and in the file, counted as failed.
func TestArchive_RemoveFails_InBothPlaces(t *testing.T) {
	c := clients(t)
	dlq, _, _ := seedDLQ(t, c)
	fc := faultyClients(t, func(op string) error {
		if strings.HasPrefix(op, "DeleteMessage") {
			return errors.New("injected: connection reset before DeleteMessage")
		}
		return nil
	})
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), source(reader(t, fc, dlq, false), dlq), inspect.Filter{IDs: []string{"m1"}}, buf, buf.sync)
	if err != nil || sum.Failed != 1 || sum.Archived != 0 {
		t.Fatalf("archive: %+v %v", sum, err)
	}
	if !strings.Contains(buf.synced, `{"id":"m1",`) {
		t.Fatalf("m1 is not in the archive: %q", buf.synced)
	}
	if n := visible(t, c, dlq); n != 5 {
		t.Fatalf("the DLQ shows %d visible, want 5 (m1 kept and released)", n)
	}
}

// TestArchive_WriteFails_LosesNothing: a write that fails stops the
// archive with an error and removes nothing.
func TestArchive_WriteFails_LosesNothing(t *testing.T) {
	c := clients(t)
	dlq, _, _ := seedDLQ(t, c)
	buf := &syncedBuffer{fail: errors.New("injected: no space left on device")}
	sum, err := inspect.Archive(context.Background(), source(reader(t, c, dlq, false), dlq), inspect.Filter{}, buf, buf.sync)
	if err == nil || !strings.Contains(err.Error(), "no space left") || sum.Archived != 0 {
		t.Fatalf("archive: %+v %v, want the write error", sum, err)
	}
	if n := visible(t, c, dlq); n != 5 {
		t.Fatalf("the DLQ shows %d visible, want all 5 released", n)
	}
}

// TestArchiveRestorePubSub_RoundTrip (Google's emulator): archive
// empties the dead-letter subscription into the file; restore publishes the
// file back to the dead-letter topic, rejection metadata and all.
func TestArchiveRestorePubSub_RoundTrip(t *testing.T) {
	e := newPS(t)
	dlq, _, _ := e.seed(t)
	src := e.source(dlq)
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), src, inspect.Filter{}, buf, buf.sync)
	if err != nil || sum.Archived != 5 || sum.Failed != 0 {
		t.Fatalf("archive: %+v %v", sum, err)
	}
	if left := peekJSON(t, src, inspect.Filter{}); len(left) != 0 {
		t.Fatalf("the dead-letter subscription still holds %s", sortedIDs(left))
	}
	ms, err := inspect.ReadArchive(strings.NewReader(buf.synced), "archive")
	if err != nil || len(ms) != 5 {
		t.Fatalf("read archive: %d messages, %v", len(ms), err)
	}
	var done []string
	rs, err := inspect.Restore(context.Background(), e.producer(t), ms, dlq, discardLogger(), func(id string, err error) {
		if err != nil {
			t.Errorf("restore %s: %v", id, err)
		}
		done = append(done, id)
	})
	if err != nil || rs.Restored != 5 || rs.Failed != 0 || len(done) != 5 {
		t.Fatalf("restore: %+v %v %v", rs, err, done)
	}
	st, _, err := inspect.Collect(context.Background(), src, inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 5 || st.ByReason["DeliveryError"] != 3 || st.ByReason["Unacceptable"] != 1 {
		t.Fatalf("after restore: %+v", st)
	}
}

// TestReadArchive_DamagedLine_NothingRead: a damaged line is named
// and no message is returned.
func TestReadArchive_DamagedLine_NothingRead(t *testing.T) {
	ms, err := inspect.ReadArchive(strings.NewReader("{\"id\":\"a\"}\n\n{\"id\":\n"), "f.jsonl")
	if err == nil || !strings.HasPrefix(err.Error(), "f.jsonl:3: ") || ms != nil {
		t.Fatalf("ReadArchive = %v, %v; want an error at f.jsonl:3 and no messages", ms, err)
	}
	m := message.New("b", "t", message.MTEvent, []byte{0xff, 0xfe})
	line, _ := message.MarshalRecordJSON(m)
	if !bytes.Contains(line, []byte(`"bodyEncoding":"base64"`)) {
		t.Fatalf("a body that is not UTF-8 is not base64: %s", line)
	}
	ms, err = inspect.ReadArchive(bytes.NewReader(append(line, '\n')), "f")
	if err != nil || !bytes.Equal(ms[0].Body, []byte{0xff, 0xfe}) {
		t.Fatalf("round trip of a binary body: %v %v", ms, err)
	}
}

// TestArchive_FIFOGroupBeyondOneBatch (fauxqs): archive removes as
// it goes, so it reaches every message of one SQS FIFO message group, in
// order, though SQS holds back a group's later messages while earlier ones
// are in flight.
func TestArchive_FIFOGroupBeyondOneBatch(t *testing.T) {
	c := clients(t)
	const n = 15
	dlq, dn := fifoGroupDLQ(t, c, n)
	src := source(reader(t, c, dlq, true), dn)
	src.Wait = 100 * time.Millisecond
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), src, inspect.Filter{}, buf, buf.sync)
	if err != nil || sum.Archived != n || sum.Failed != 0 {
		t.Fatalf("archive: %+v %v, want %d archived", sum, err, n)
	}
	ms := groupInOrder(t, buf, n)
	// Restored twice within SQS's five-minute deduplication window: each
	// restore gets fresh deduplication ids, so neither is dropped.
	p := sqs.NewProducer(c, sqs.ProducerOptions{Fifo: true, MakeChannels: broker.MakeValidate})
	for range 2 {
		if rs, err := inspect.Restore(context.Background(), p, ms, dn, discardLogger(), nil); err != nil || rs.Restored != n {
			t.Fatalf("restore: %+v %v", rs, err)
		}
	}
	if got := len(drain(t, c, dn, true, 2*n)); got != 2*n {
		t.Fatalf("the DLQ holds %d after two restores, want %d", got, 2*n)
	}
}
