package rocketmq_test

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

// A copy dead-lettered to orders.dlq and sent back to orders with its
// properties (an operator moving it back) is dead-lettered again when
// rejected again, with its new reason and orders.dlq twice on its path,
// not held as a rejection cycle (docs/adr/0004 decision 12).
func TestConsumer_RedrivenCopyIsDeadLetteredAgain(t *testing.T) {
	e := newEnv(t, "orders", "orders.dlq")
	log, _ := newLogger()
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq", Logger: log})
	e.send("orders", "rd-1")
	if res := c.Reject(e.ctx, e.receiveOne(c, 5*time.Second), message.Rejection{Reason: message.ReasonDeliveryError, Description: "first"}); res.Err != nil || res.Released {
		t.Fatalf("first rejection %+v, want routed", res)
	}
	dead := e.srv.Messages("orders.dlq")
	if len(dead) != 1 {
		t.Fatalf("orders.dlq holds %d messages, want 1", len(dead))
	}
	e.sendRaw("orders", dead[0].Properties, dead[0].Body)
	back := e.receiveOne(c, 5*time.Second)
	if got := message.RejectionPath(back); got != "orders.dlq" {
		t.Fatalf("moved-back copy's path %q, want orders.dlq", got)
	}
	if res := c.Reject(e.ctx, back, message.Rejection{Reason: message.ReasonDeliveryError, Description: "second"}); res.Err != nil || res.Released || res.Destination != "orders.dlq" {
		t.Fatalf("rejection of the redriven copy %+v, want routed to orders.dlq", res)
	}
	dead = e.srv.Messages("orders.dlq")
	if len(dead) != 2 || dead[1].Properties[message.KeyRejectionPath] != "orders.dlq,orders.dlq" || dead[1].Properties[message.KeyRejectionMessage] != "second" {
		t.Fatalf("orders.dlq holds %d messages (last %v), want the copy again with path orders.dlq,orders.dlq and reason second", len(dead), dead[len(dead)-1].Properties)
	}
}
