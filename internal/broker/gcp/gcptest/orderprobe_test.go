package gcptest_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/option"

	"github.com/brightergo/brighter/internal/broker/gcp/gcptest"
)

// orderProbeKeys ordering keys of orderProbeMessages messages each are what
// the ordering probe publishes.
const (
	orderProbeKeys     = 8
	orderProbeMessages = 4
)

// TestEmulatorOrderedNackRedeliveryProbe records, with no brighter
// code (the plain Pub/Sub client's streaming Receive), the order in which
// Google's emulator redelivers the Nacked messages of one ordering key, the
// measurement behind the Deferred StreamOrdering cells of R-4/ordered-deferral and
// R-4/ack-hold (internal/conformance/gcp_test.go). Eight keys of four
// messages each are published in order to a subscription with
// enableMessageOrdering; the callback Nacks each message on its first
// delivery (a key's message 0 first: a deferral, then the rest, held back
// behind it, as brighter's stream consumer releases them) and Acks it on
// its second. Pub/Sub promises that a key's messages are redelivered in
// publish order after a Nack ("Ordering messages": the nacked message and
// the key's later ones are redelivered, in order); the client delivers a
// key's messages to the callback one at a time, in the order it got them.
//
// Recorded on 0.8.20, 2026-12-04: one key per run, the second deliveries
// came back [2 3 0 1], [3 0 1 2] and [0 1 2 3] in three runs; eight keys per
// run, 0, 1 and 0 of the 8 keys came back in publish order in three runs
// (e.g. [3 1 0 2]). The emulator redelivers a key's Nacked messages in the
// order the client's Nack (ModifyAckDeadline 0) batches list them, not in
// publish order. The test
// fails when every key comes back in publish order (then the Deferred reason
// is stale: run the StreamOrdering cells again) or a message does not come
// back; it logs the orders seen.
func TestEmulatorOrderedNackRedeliveryProbe(t *testing.T) {
	t.Parallel()
	client, srv := gcptest.Start(t, "orderprobe", nil, func(ctx context.Context, project string, opts ...option.ClientOption) (*pubsub.Client, error) {
		return pubsub.NewClient(ctx, project, opts...)
	})
	ctx := t.Context()
	topic := "projects/" + srv.Project + "/topics/order-probe"
	sub := "projects/" + srv.Project + "/subscriptions/order-probe-sub"
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 10, EnableMessageOrdering: true}); err != nil {
		t.Fatal(err)
	}
	pub := client.Publisher(topic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	for k := range orderProbeKeys {
		for i := range orderProbeMessages {
			if _, err := pub.Publish(ctx, &pubsub.Message{Data: []byte(strconv.Itoa(k*orderProbeMessages + i)), OrderingKey: "k" + strconv.Itoa(k)}).Get(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu     sync.Mutex
		seen   = map[int]int{}
		second = make([][]int, orderProbeKeys) // per key, its messages' second deliveries in order
		done   int
	)
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	s := client.Subscriber(sub)
	s.ReceiveSettings.NumGoroutines = 1
	err := s.Receive(rctx, func(_ context.Context, m *pubsub.Message) {
		n, _ := strconv.Atoi(string(m.Data))
		mu.Lock()
		defer mu.Unlock()
		seen[n]++
		if seen[n] == 1 {
			m.Nack()
			return
		}
		m.Ack()
		if seen[n] == 2 {
			k := n / orderProbeMessages
			second[k] = append(second[k], n%orderProbeMessages)
			if done++; done == orderProbeKeys*orderProbeMessages {
				cancel()
			}
		}
	})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	inOrder := 0
	for _, got := range second {
		if slices.IsSorted(got) {
			inOrder++
		}
	}
	t.Logf("%s: second deliveries per key %v (each published 0..%d): %d of %d keys in publish order", emulatorJar(), second, orderProbeMessages-1, inOrder, orderProbeKeys)
	if done != orderProbeKeys*orderProbeMessages {
		t.Fatalf("only %d of %d Nacked messages came back within 60 s", done, orderProbeKeys*orderProbeMessages)
	}
	if inOrder == orderProbeKeys {
		t.Errorf("the emulator redelivered every key's Nacked messages in publish order: the Deferred StreamOrdering reason of R-4/ordered-deferral and R-4/ack-hold is stale; run those cells")
	}
}
