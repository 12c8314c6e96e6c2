package rocketmq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/broker/rocketmq/rmqtest"
)

// TestGroupMaxDeliveryAttempts reads a consumer group's broker-side
// maximum delivery attempts from the proxy's answer to a consumer's Settings (the
// test broker answers as a real proxy does): the default, a group set lower,
// and a proxy that does not say (ErrGroupSettingsNotReported, promptly). It
// takes no message from the group.
func TestGroupMaxDeliveryAttempts(t *testing.T) {
	e := newEnv(t, "orders")
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	e.send("orders", "m1")

	n, err := rocketmq.GroupMaxDeliveryAttempts(ctx, e.conn(), "g-default", "orders")
	if err != nil || n != rmqtest.DefaultMaxDeliveryAttempts {
		t.Fatalf("default group: %d, %v; want %d", n, err, rmqtest.DefaultMaxDeliveryAttempts)
	}
	e.srv.SetMaxDeliveryAttempts("g-low", 3)
	if n, err = rocketmq.GroupMaxDeliveryAttempts(ctx, e.conn(), "g-low", "orders"); err != nil || n != 3 {
		t.Fatalf("group set to 3: %d, %v", n, err)
	}

	e.srv.HideGroupRetryPolicy(true)
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	_, err = rocketmq.GroupMaxDeliveryAttempts(short, e.conn(), "g-low", "orders")
	if !errors.Is(err, rocketmq.ErrGroupSettingsNotReported) {
		t.Fatalf("a proxy that does not report: %v, want ErrGroupSettingsNotReported", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("gave up after %v, want about the context's 500ms", took)
	}
	e.srv.HideGroupRetryPolicy(false)

	// Nothing was received: the message is still there for g-low.
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "orders", ConsumerGroup: "g-low"})
	if m := e.receiveOne(c, 10*time.Second); m.Header.MessageID != "m1" || m.DeliveryAttempt != 1 {
		t.Fatalf("the group's first receive: %s count %d, want m1 on its first delivery", m.Header.MessageID, m.DeliveryAttempt)
	}
}
