package rocketmq_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// A fresh message presents 0; each requeue (one ChangeInvisibleDuration,
// NFR-3) and a lapse of the invisible duration each present one more.
func TestConsumer_CountStartsAtZeroAndAdvancesPerDelivery_R1_R2_AC42(t *testing.T) {
	e := newEnv(t, "orders")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1"})
	e.send("orders", "m-1")

	m := e.receiveOne(c, 5*time.Second)
	e.count(m, 0, "first delivery")
	if m.DeliveryAttempt != m.Header.HandledCount+1 {
		t.Fatalf("first delivery: count %d attempt %d, want attempt = count + 1", m.Header.HandledCount, m.DeliveryAttempt)
	}
	for want := 1; want <= 2; want++ {
		if err := c.Requeue(e.ctx, m, 0); err != nil {
			t.Fatalf("requeue: %v", err)
		}
		m = e.receiveOne(c, 5*time.Second)
		e.count(m, want, "after a requeue")
	}
	if n := e.srv.Calls("ChangeInvisibleDuration"); n != 2 {
		t.Fatalf("ChangeInvisibleDuration calls = %d, want one per requeue (2)", n)
	}
	// Lease lapse: neither ack, requeue nor reject; the next delivery counts 3.
	start := time.Now()
	m = e.receiveOne(c, 10*time.Second)
	e.count(m, 3, "after a lapse")
	if time.Since(start) < testInvisible/2 {
		t.Fatalf("redelivered after %s, before the invisible duration lapsed", time.Since(start))
	}
	if err := c.Acknowledge(e.ctx, m); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if n := e.srv.Pending("orders", "g1"); n != 0 {
		t.Fatalf("pending after ack = %d, want 0", n)
	}
}

// Requeue with a delay hides the message for that long (one call).
func TestConsumer_RequeueDelay_R7(t *testing.T) {
	e := newEnv(t, "orders")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", InvisibleDuration: 5 * time.Second})
	e.send("orders", "m-1")
	m := e.receiveOne(c, 5*time.Second)
	const delay = 800 * time.Millisecond
	start := time.Now()
	if err := c.Requeue(e.ctx, m, delay); err != nil {
		t.Fatalf("requeue: %v", err)
	}
	m = e.receiveOne(c, 5*time.Second)
	if got := time.Since(start); got < delay-50*time.Millisecond {
		t.Fatalf("redelivered after %s, want at least %s", got, delay)
	}
	e.count(m, 1, "after a delayed requeue")
}

// Reject routes a stamped copy with the five keys to the dead-letter topic,
// then acks; reading the copy back presents the stamped count.
func TestConsumer_RejectToDeadLetterTopic_R16_R18_R28(t *testing.T) {
	e := newEnv(t, "orders", "orders.dlq")
	log, _ := newLogger()
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq", Logger: log})
	e.send("orders", "m-1")
	m := e.receiveOne(c, 5*time.Second)
	if err := c.Requeue(e.ctx, m, 0); err != nil {
		t.Fatalf("requeue: %v", err)
	}
	m = e.receiveOne(c, 5*time.Second)
	m.Header.HandledCount++ // the pump's increment before it decides to reject
	res := c.Reject(e.ctx, m, message.Rejection{Reason: message.ReasonDeliveryError, Description: "budget spent"})
	if res.Route != broker.RouteDeadLetter || res.Destination != "orders.dlq" || res.Released || res.Err != nil {
		t.Fatalf("reject result %+v", res)
	}
	if n := e.srv.Pending("orders", "g1"); n != 0 {
		t.Fatalf("source pending = %d, want 0 (acked after routing)", n)
	}
	stored := e.srv.Messages("orders.dlq")
	if len(stored) != 1 {
		t.Fatalf("dlq holds %d messages, want 1", len(stored))
	}
	for _, k := range message.RejectionKeys {
		if _, ok := stored[0].Properties[k]; !ok {
			t.Errorf("dlq copy lacks property %q: %v", k, stored[0].Properties)
		}
	}
	if got := stored[0].Properties[message.KeyRejectionReason]; got != "DeliveryError" {
		t.Errorf("rejectionReason = %q", got)
	}
	if got := stored[0].Properties[message.KeyOriginalTopic]; got != "orders" {
		t.Errorf("originalTopic = %q", got)
	}
	if got := stored[0].Properties[rocketmq.PropHandledCount]; got != "2" {
		t.Errorf("stamped HandledCount = %q, want 2", got)
	}
	// the copy presents its stamped count on every read of the DLQ.
	d := e.consumer(rocketmq.ConsumerOptions{Topic: "orders.dlq", ConsumerGroup: "ops"})
	dm := e.receiveOne(d, 5*time.Second)
	if dm.Header.MessageID != "m-1" {
		t.Fatalf("dlq read: id %s, want m-1", dm.Header.MessageID)
	}
	e.count(dm, 2, "dlq read")
	if err := d.Requeue(e.ctx, dm, 0); err != nil {
		t.Fatalf("requeue dlq copy: %v", err)
	}
	dm = e.receiveOne(d, 5*time.Second)
	e.count(dm, 2, "dlq re-read")
	if dm.DeliveryAttempt < 2 {
		t.Fatalf("dlq re-read: attempt %d, want at least 2", dm.DeliveryAttempt)
	}
}

// An undecodable message is presented as MT_UNACCEPTABLE with its receipt and
// routes to the invalid-message topic.
func TestConsumer_UndecodableGoesToInvalidTopic_R16(t *testing.T) {
	e := newEnv(t, "orders", "orders.invalid", "orders.dlq")
	log, logs := newLogger()
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq", InvalidTopic: "orders.invalid", Logger: log})
	e.sendRaw("orders", map[string]string{rocketmq.PropHandledCount: "many", rocketmq.PropID: "bad-1", "custom": "x"}, []byte("not json"))
	m := e.receiveOne(c, 5*time.Second)
	if m.Header.MessageType != message.MTUnacceptable || m.Receipt == nil || m.Header.MessageID != "bad-1" {
		t.Fatalf("got type %s id %s receipt %v", m.Header.MessageType, m.Header.MessageID, m.Receipt)
	}
	if !logs.has(slog.LevelWarn, rocketmq.LogUndecodable) {
		t.Errorf("no Warning %q in %s", rocketmq.LogUndecodable, logs)
	}
	res := c.Reject(e.ctx, m, message.Rejection{Reason: message.ReasonUnacceptable, Description: "cannot decode"})
	if res.Route != broker.RouteInvalidMessage || res.Err != nil {
		t.Fatalf("reject result %+v", res)
	}
	inv := e.srv.Messages("orders.invalid")
	if len(inv) != 1 || string(inv[0].Body) != "not json" || inv[0].Properties["custom"] != "x" {
		t.Fatalf("invalid topic holds %+v", inv)
	}
	if inv[0].Properties[message.KeyRejectionReason] != "Unacceptable" {
		t.Errorf("rejectionReason = %q", inv[0].Properties[message.KeyRejectionReason])
	}
	if len(e.srv.Messages("orders.dlq")) != 0 {
		t.Errorf("dead-letter topic got a copy")
	}
	if n := e.srv.Pending("orders", "g1"); n != 0 {
		t.Fatalf("source pending = %d, want 0", n)
	}
}

// With no destination, Reject acks and logs a Warning.
func TestConsumer_RejectWithoutDestinationAcksWithWarning_R17(t *testing.T) {
	e := newEnv(t, "orders")
	log, logs := newLogger()
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", Logger: log})
	e.send("orders", "m-1")
	m := e.receiveOne(c, 5*time.Second)
	res := c.Reject(e.ctx, m, message.Rejection{Reason: message.ReasonDeliveryError})
	if res.Route != broker.RouteNone || res.Err != nil {
		t.Fatalf("reject result %+v", res)
	}
	if !logs.has(slog.LevelWarn, broker.LogDiscarded) {
		t.Errorf("no Warning %q in %s", broker.LogDiscarded, logs)
	}
	if n := e.srv.Pending("orders", "g1"); n != 0 {
		t.Fatalf("pending = %d, want 0", n)
	}
	e.receiveNone(c, testInvisible+500*time.Millisecond)
}

// A failed send releases the original with ChangeInvisibleDuration 0, logs an
// Error and reports it settled; it is redelivered at once with count + 1
//
func TestConsumer_FailedSendReleasesForRedelivery_R19(t *testing.T) {
	e := newEnv(t, "orders", "orders.dlq")
	log, logs := newLogger()
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq", Logger: log, InvisibleDuration: 20 * time.Second})
	e.send("orders", "m-1")
	m := e.receiveOne(c, 5*time.Second)
	e.srv.FailSend(func(topic, id string) error {
		if topic == "orders.dlq" {
			return errors.New("disk full")
		}
		return nil
	})
	calls := e.srv.Calls("ChangeInvisibleDuration")
	res := c.Reject(e.ctx, m, message.Rejection{Reason: message.ReasonDeliveryError})
	if !res.Released || res.Err == nil {
		t.Fatalf("reject result %+v, want released with error", res)
	}
	if !logs.has(slog.LevelError, broker.LogRoutingFailed) {
		t.Errorf("no Error %q in %s", broker.LogRoutingFailed, logs)
	}
	if got := e.srv.Calls("ChangeInvisibleDuration") - calls; got != 1 {
		t.Errorf("ChangeInvisibleDuration calls = %d, want 1", got)
	}
	e.srv.FailSend(nil)
	m = e.receiveOne(c, 3*time.Second) // well inside the 20 s invisible duration
	e.count(m, 1, "redelivery after the failed routing")
	if n := len(e.srv.Messages("orders.dlq")); n != 0 {
		t.Fatalf("dlq holds %d, want 0", n)
	}
}

// When the consumer group's maximum delivery attempts is below the budget, the
// broker's native dead-lettering wins: the %DLQ% copy carries no rejection
// metadata (R-9's case for RocketMQ).
func TestConsumer_NativeDeadLetterWinsBelowBudget_R9(t *testing.T) {
	e := newEnv(t, "orders")
	e.srv.SetMaxDeliveryAttempts("g1", 2)
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1", DeadLetterTopic: "orders.dlq"})
	e.send("orders", "m-1")
	for i := 0; i < 2; i++ {
		m := e.receiveOne(c, 5*time.Second)
		if err := c.Requeue(e.ctx, m, 0); err != nil {
			t.Fatalf("requeue %d: %v", i, err)
		}
	}
	pumptest.WaitUntil(t, 5*time.Second, "native dead-letter", func() bool { return len(e.srv.Messages(rmqtest.DLQPrefix+"g1")) == 1 })
	dl := e.srv.Messages(rmqtest.DLQPrefix + "g1")[0]
	for _, k := range message.RejectionKeys {
		if _, ok := dl.Properties[k]; ok {
			t.Errorf("native %%DLQ%% copy carries %q", k)
		}
	}
	if dl.Properties[rocketmq.PropID] != "m-1" {
		t.Errorf("native copy id = %q", dl.Properties[rocketmq.PropID])
	}
	e.receiveNone(c, time.Second)
}

// The client's Ack reports success when the broker refuses
// (docs/emulators.md#rmqtest-rocketmq-5): the message reappears after its
// lease. An ack after the lease lapsed is refused by the consumer itself.
func TestConsumer_AckQuirkAndLapsedLease(t *testing.T) {
	e := newEnv(t, "orders")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g1"})
	e.send("orders", "m-1")
	m := e.receiveOne(c, 5*time.Second)
	e.srv.FailAck(func(string, string) error { return errors.New("refused") })
	if err := c.Acknowledge(e.ctx, m); err != nil {
		t.Fatalf("ack with broker refusing returned %v; the client is expected to swallow it", err)
	}
	e.srv.FailAck(nil)
	m = e.receiveOne(c, 10*time.Second)
	e.count(m, 1, "redelivery after a swallowed ack refusal")
	// Receiving again returns the message only once m's lease has lapsed.
	lost := e.lost
	next := e.receiveOne(c, 10*time.Second)
	acks := e.srv.Calls("AckMessage")
	if err := c.Acknowledge(e.ctx, m); !errors.Is(err, rocketmq.ErrLeaseExpired) {
		t.Fatalf("ack after lapse = %v, want ErrLeaseExpired", err)
	}
	if got := e.srv.Calls("AckMessage"); got != acks {
		t.Fatalf("an Ack was sent for a lapsed lease")
	}
	if want := m.Header.HandledCount + 1; next.Header.HandledCount < want || next.Header.HandledCount > want+e.lost-lost {
		t.Fatalf("count %d, want %d (+%d for receives the client lost)", next.Header.HandledCount, want, e.lost-lost)
	}
	if err := c.Acknowledge(e.ctx, next); err != nil {
		t.Fatalf("ack current delivery: %v", err)
	}
	pumptest.WaitUntil(t, 5*time.Second, "ack to land", func() bool { return e.srv.Pending("orders", "g1") == 0 })
}
