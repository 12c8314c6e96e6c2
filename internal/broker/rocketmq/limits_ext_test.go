package rocketmq_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/message"
)

// TestSendOverPropertyLimitRefused (rmqtest, which would take it):
// a message whose properties are over a proxy's 16 KiB is refused by the
// producer as too large, as a real proxy refuses it, and nothing reaches
// the topic; a message within the limits is delivered.
func TestSendOverPropertyLimitRefused(t *testing.T) {
	e := newEnv(t, "big")
	p := e.producer("big")
	m := message.New("big-1", "big", message.MTCommand, []byte("{}"))
	m.Header.Bag["note"] = strings.Repeat("ü", 9*1024) // 18 KiB
	if err := p.Send(e.ctx, m); !errors.Is(err, broker.ErrTooLarge) {
		t.Fatalf("Send = %v, want broker.ErrTooLarge", err)
	}
	e.send("big", "fits-1")
	c := e.consumer(rocketmq.ConsumerOptions{Topic: "big", ConsumerGroup: "g"})
	if got := e.receiveOne(c, 20*time.Second); got.Header.MessageID != "fits-1" {
		t.Fatalf("received %s, want only fits-1", got.Header.MessageID)
	}
}
