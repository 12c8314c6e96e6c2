package inspect_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
)

// TestReplay_MessageGroupGoesThroughOneWorkerInOrder: a replay with
// several workers publishes the messages of one message group (partition
// key: a FIFO group, an ordering key) through one worker, in the order it
// read them, so a message slow to publish is not overtaken by its group's
// later ones; a message of another group goes on beside it. The
// dead-letter destination hands out both groups' messages together (the
// memory transport, ten a receive, as a Pub/Sub subscription or an SQS
// FIFO queue may); the slow publishes are its publish fault, which holds
// each of group-a's publishes the longer the earlier its message.
func TestReplay_MessageGroupGoesThroughOneWorkerInOrder(t *testing.T) {
	t.Parallel()
	const dlq, dest, n = "orders-dlq", "orders", 5 // n per group: both groups fit one receive
	b := memory.NewBroker(false)
	for i := range n {
		for _, g := range []string{"a", "b"} {
			m := message.New(fmt.Sprintf("%s%02d", g, i), dest, message.MTCommand, []byte(`{}`))
			m.Header.PartitionKey = "group-" + g
			if err := b.Publish(context.Background(), dlq, message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, time.Now())); err != nil {
				t.Fatal(err)
			}
		}
	}
	var arrived []string // ids in the order their publish reached the destination
	b.SetPublishFault(func(queue string, m *message.Message) error {
		var i int
		if _, err := fmt.Sscanf(m.Header.MessageID, "a%02d", &i); err == nil {
			time.Sleep(time.Duration(n-i) * 100 * time.Millisecond)
		}
		return nil
	})
	src := &inspect.Source{Consumer: b.NewConsumer(memory.ConsumerOptions{Queue: dlq, BufferSize: 10, VisibilityTimeout: time.Minute}), Name: "memory://" + dlq, Wait: 100 * time.Millisecond}
	read := map[string][]string{} // per group, the ids in the order the scan read them
	record := func(m, _ *message.Message) error {
		read[m.Header.PartitionKey] = append(read[m.Header.PartitionKey], m.Header.MessageID)
		return nil
	}
	sum, err := inspect.Replay(context.Background(), src, dlq, memory.Producer{B: b}, inspect.Filter{}, inspect.ReplayOptions{Workers: 8, Transform: record})
	if err != nil || sum.Replayed != 2*n || sum.Failed != 0 {
		t.Fatalf("summary %+v %v, want %d replayed", sum, err, 2*n)
	}
	k := b.NewConsumer(memory.ConsumerOptions{Queue: dest, BufferSize: 10})
	for len(arrived) < 2*n {
		ms, err := k.Receive(context.Background(), time.Second)
		if err != nil || len(ms) == 0 {
			t.Fatalf("destination: %d of %d messages (%v)", len(arrived), 2*n, err)
		}
		for _, m := range ms {
			arrived = append(arrived, m.Header.PartitionKey+":"+m.Header.MessageID)
		}
	}
	for _, g := range []string{"group-a", "group-b"} {
		var got []string
		for _, a := range arrived {
			if key, id, _ := strings.Cut(a, ":"); key == g {
				got = append(got, id)
			}
		}
		if strings.Join(got, " ") != strings.Join(read[g], " ") || len(read[g]) != n {
			t.Errorf("%s arrived as %v, read as %v: the group's messages were spread over workers", g, got, read[g])
		}
	}
}
