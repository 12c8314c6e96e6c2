package gcp

import (
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// TestReject_RedrivenCopyIsDeadLetteredAgain (both consumers, emulator): a
// copy dead-lettered to orders.DLQ and republished to orders with its
// attributes (an operator moving it back; Pub/Sub has no redrive to source
// of its own) is dead-lettered again when rejected again, with its new
// reason and orders.DLQ twice on its path, not held as a rejection cycle
// (docs/adr/0004 decision 12). The consumer names its topic by its full
// name, the destination by its id: Resolve makes them comparable. A
// subscription whose dead-letter topic is its own topic under its full
// name still holds a message that comes back to it.
func TestReject_RedrivenCopyIsDeadLetteredAgain(t *testing.T) {
	forModes(t, func(t *testing.T, md mode, e *env) {
		e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, DeadLetterTopic: "orders.DLQ"})
		c := e.consumer(t, md, ConsumerOptions{Subscription: "orders-sub", Topic: topicName(e.project, "orders"), DeadLetterTopic: "orders.DLQ"})
		e.send(t, "orders", newMsg("rd-1"))
		if res := c.Reject(ctxT(t, 10*time.Second), receiveOne(t, c, 10*time.Second), message.Rejection{Reason: message.ReasonDeliveryError, Description: "first"}); res.Err != nil || res.Released {
			t.Fatalf("first rejection %+v, want routed", res)
		}
		dead := e.pullRaw(t, "orders.DLQ", 10*time.Second)
		if _, err := e.client.TopicAdminClient.Publish(ctxT(t, 10*time.Second), &pubsubpb.PublishRequest{Topic: topicName(e.project, "orders"),
			Messages: []*pubsubpb.PubsubMessage{{Data: dead.Data, Attributes: dead.Attributes}}}); err != nil {
			t.Fatalf("move back to orders: %v", err)
		}
		back := receiveOne(t, c, 10*time.Second)
		if got := message.RejectionPath(back); got != "orders.DLQ" {
			t.Fatalf("moved-back copy's path %q, want orders.DLQ", got)
		}
		if res := c.Reject(ctxT(t, 10*time.Second), back, message.Rejection{Reason: message.ReasonDeliveryError, Description: "second"}); res.Err != nil || res.Released || res.Destination != "orders.DLQ" {
			t.Fatalf("rejection of the redriven copy %+v, want routed to orders.DLQ", res)
		}
		hasAttrs(t, e.pullRaw(t, "orders.DLQ", 10*time.Second), map[string]string{AttrID: "rd-1", message.KeyRejectionPath: "orders.DLQ,orders.DLQ", "rejectionMessage": "second"})

		e.channels(t, ChannelOptions{Topic: "loop", Subscription: "loop-sub", RequeueCount: -1})
		lc := e.consumer(t, md, ConsumerOptions{Subscription: "loop-sub", Topic: "loop", DeadLetterTopic: topicName(e.project, "loop")})
		e.send(t, "loop", newMsg("loop-1"))
		if res := lc.Reject(ctxT(t, 10*time.Second), receiveOne(t, lc, 10*time.Second), message.Rejection{Reason: message.ReasonDeliveryError}); res.Err != nil || res.Released {
			t.Fatalf("first rejection on loop %+v, want routed", res)
		}
		res := lc.Reject(ctxT(t, 10*time.Second), receiveOne(t, lc, 10*time.Second), message.Rejection{Reason: message.ReasonDeliveryError})
		if !errors.Is(res.Err, broker.ErrRejectionCycle) {
			t.Fatalf("rejection of the copy back on loop %+v, want held as a cycle", res)
		}
	})
}
