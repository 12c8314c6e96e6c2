package inspect_test

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// seedCopies fills a new dead-letter queue with two stored copies of dup
// (same id, same rejection time: a message restored twice) and one of
// single, all from topic; it returns the queue and the group id of dup.
func seedCopies(t *testing.T, c *sqs.Clients, topic string) (dlq, group string) {
	t.Helper()
	dlq = uniq("dlq-copies")
	makeQueues(t, c, topic, dlq, false)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	at := time.Now()
	stamp := func(id, why string) *message.Message {
		m := message.New(id, topic, message.MTCommand, []byte(`{"id":"`+id+`"}`))
		return message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: why}, at)
	}
	dup := stamp("dup", "card declined")
	for _, m := range []*message.Message{dup, dup, stamp("single", "no stock")} {
		if err := p.Send(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	return dlq, inspect.GroupOf(dup).ID()
}

// TestCopies_StatsCountEveryStoredCopy: two stored copies with the same id
// and rejection time are two messages to stats and peek, not one.
func TestCopies_StatsCountEveryStoredCopy(t *testing.T) {
	t.Parallel()
	c := clients(t)
	topic := uniq("copies-topic")
	dlq, group := seedCopies(t, c, topic)
	st, counts, err := inspect.Collect(context.Background(), source(reader(t, c, dlq, false), dlq), inspect.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.Read != 3 || counts.Scanned != 3 {
		t.Fatalf("stats total %d read %d scanned %d, want 3 copies each", st.Total, st.Read, counts.Scanned)
	}
	for _, g := range st.Groups {
		if g.ID == group && g.Count != 2 {
			t.Fatalf("the duplicated group counts %d, want 2", g.Count)
		}
	}
	if ms := peekJSON(t, source(reader(t, c, dlq, false), dlq), inspect.Filter{}); len(ms) != 3 {
		t.Fatalf("peek shows %d messages, want 3 copies", len(ms))
	}
}

// TestCopies_ArchiveByGroupTakesEveryCopy: archiving a group whose message
// has two stored copies archives and removes both; nothing is left behind.
func TestCopies_ArchiveByGroupTakesEveryCopy(t *testing.T) {
	t.Parallel()
	c := clients(t)
	dlq, group := seedCopies(t, c, uniq("copies-topic"))
	buf := &syncedBuffer{}
	sum, err := inspect.Archive(context.Background(), source(reader(t, c, dlq, false), dlq), inspect.Filter{GroupIDs: []string{group}}, buf, buf.sync)
	if err != nil || sum.Archived != 2 || sum.Failed != 0 {
		t.Fatalf("archive --group-id: %+v %v; want both copies archived", sum, err)
	}
	if got := sortedIDs(peekJSON(t, source(reader(t, c, dlq, false), dlq), inspect.Filter{})); got != "single" {
		t.Fatalf("the DLQ holds %q after archiving the group, want only single", got)
	}
}

// TestCopies_ReplayRemovesEveryCopyPublishesOnce: replaying an id with two
// stored copies of one failure publishes it once and removes both copies
// (the second reported as a duplicate), with or without a journal.
func TestCopies_ReplayRemovesEveryCopyPublishesOnce(t *testing.T) {
	t.Parallel()
	c := clients(t)
	topic := uniq("copies-topic")
	dlq, _ := seedCopies(t, c, topic)
	var outs []inspect.Outcome
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{IDs: []string{"dup"}}, inspect.ReplayOptions{Progress: progressFunc(func(o inspect.Outcome) { outs = append(outs, o) })})
	if err != nil || sum.Replayed != 2 || sum.Failed != 0 {
		t.Fatalf("replay: %+v %v; want both copies handled", sum, err)
	}
	dups := 0
	for _, o := range outs {
		if o.Duplicate {
			dups++
		}
	}
	if dups != 1 {
		t.Fatalf("outcomes %+v, want one copy reported a duplicate", outs)
	}
	if got := sortedIDs(peekJSON(t, source(reader(t, c, dlq, false), dlq), inspect.Filter{})); got != "single" {
		t.Fatalf("the DLQ holds %q after the replay, want only single", got)
	}
	if got := drain(t, c, topic, false, 1); len(got) != 1 {
		t.Fatalf("the destination got %d copies, want 1", len(got))
	}
	time.Sleep(500 * time.Millisecond) // a window for what must NOT happen: a second copy arriving
	if n := depth(t, c, topic); n != 0 {
		t.Fatalf("the destination holds %d more copies, want the failure published once", n)
	}
}

type progressFunc func(inspect.Outcome)

func (f progressFunc) Done(o inspect.Outcome) { f(o) }
