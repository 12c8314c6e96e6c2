package dlqtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/brightergo/brighter/internal/broker/gcp"
)

// PubSubShared starts a Pub/Sub emulator with topic placed read by
// billing-sub and shipping-sub, both dead-lettering into shared-dlq (read
// by the subscription shared-dlq), one dead letter m1 there, and a
// subscriptions file naming billing and shipping; it returns the file, the
// emulator's address and the full name of a subscription.
func PubSubShared(t *testing.T) (file, addr string, subName func(string) string) {
	t.Helper()
	ctx := context.Background()
	client, srv, subName := PubSubTopics(t, "shared", []string{"placed", "shared-dlq"},
		map[string]string{"billing-sub": "placed", "shipping-sub": "placed", "shared-dlq": "shared-dlq"})
	pj := srv.Project
	sub := func(name string) string {
		return "  - name: " + name + "\n    transport: gcp\n    routingKey: placed\n    channelName: " + name + "-sub\n    deadLetterRoutingKey: shared-dlq\n    handler: {type: builtin, name: ack}\n"
	}
	file = WriteYAML(t, fmt.Sprintf("connections:\n  gcp:\n    projectId: %s\n    emulatorHost: %s\nsubscriptions:\n", pj, srv.Addr)+sub("billing")+sub("shipping"))
	if err := gcp.NewProducer(client, gcp.ProducerOptions{}).Send(ctx, Stamped("m1", "placed", "shared-dlq")); err != nil {
		t.Fatal(err)
	}
	return file, srv.Addr, subName
}
