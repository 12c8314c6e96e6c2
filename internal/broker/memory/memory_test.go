package memory_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

func publish(t *testing.T, b *memory.Broker, q, id string) {
	t.Helper()
	if err := b.Publish(context.Background(), q, message.New(id, q, message.MTCommand, []byte("{}"))); err != nil {
		t.Fatal(err)
	}
}

func receiveOne(t *testing.T, c *memory.Consumer, within time.Duration) *message.Message {
	t.Helper()
	ms, err := c.Receive(context.Background(), within)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("received %d messages, want 1", len(ms))
	}
	return ms[0]
}

// the memory counter is exact: deliveries 1, 2, 3 present
// 0, 1, 2, whether the message comes back by Requeue or by a lapsed
// visibility timeout, and the stored message is never rewritten.
func TestDeliveryCountExact_R1_R2_R3(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: 30 * time.Millisecond})
	publish(t, b, "q", "m1")
	ctx := context.Background()
	m := receiveOne(t, c, time.Second)
	if m.Header.HandledCount != 0 || m.DeliveryAttempt != 1 {
		t.Fatalf("first delivery presents %d (attempt %d), want 0 (attempt 1)", m.Header.HandledCount, m.DeliveryAttempt)
	}
	if err := c.Requeue(ctx, m, 0); err != nil {
		t.Fatal(err)
	}
	m = receiveOne(t, c, time.Second)
	if m.Header.HandledCount != 1 {
		t.Fatalf("second delivery presents %d, want 1", m.Header.HandledCount)
	}
	// Not settled: the visibility timeout lapses and it comes back.
	m = receiveOne(t, c, 5*time.Second)
	if m.Header.HandledCount != 2 {
		t.Fatalf("third delivery presents %d, want 2", m.Header.HandledCount)
	}
	if s := b.Snapshot("q"); len(s) != 1 || s[0].Header.HandledCount != 0 {
		t.Fatalf("stored copy = %+v, want HandledCount 0 (never rewritten)", s)
	}
	if err := c.Acknowledge(ctx, m); err != nil {
		t.Fatal(err)
	}
	if d := b.Depth("q"); d != 0 {
		t.Fatalf("depth after ack = %d", d)
	}
}

// A receipt is good for one settle of the delivery it came with.
func TestStaleReceiptRejected(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q"})
	publish(t, b, "q", "m1")
	ctx := context.Background()
	m := receiveOne(t, c, time.Second)
	if err := c.Acknowledge(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Acknowledge(ctx, m); !errors.Is(err, memory.ErrStaleReceipt) {
		t.Errorf("second ack = %v, want ErrStaleReceipt", err)
	}
	if err := c.Requeue(ctx, m.Clone(), 0); !errors.Is(err, memory.ErrStaleReceipt) {
		t.Errorf("requeue of a clone (no receipt) = %v, want ErrStaleReceipt", err)
	}
}

// TestFaultHooks_FailEachCallOnDemand: the fault hooks make each call fail on
// demand; a receive fault is a channel failure.
func TestFaultHooks_FailEachCallOnDemand(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q"})
	ctx := context.Background()
	boom := errors.New("boom")
	b.SetReceiveFault(func(string, *message.Message) error { return boom })
	if _, err := c.Receive(ctx, time.Millisecond); !errors.Is(err, broker.ErrChannelFailure) || !errors.Is(err, boom) {
		t.Errorf("receive = %v, want ErrChannelFailure wrapping boom", err)
	}
	b.SetReceiveFault(nil)
	b.SetPublishFault(func(q string, _ *message.Message) error {
		if q == "q" {
			return boom
		}
		return nil
	})
	if err := b.Publish(ctx, "q", message.New("x", "q", message.MTEvent, nil)); !errors.Is(err, boom) {
		t.Errorf("publish = %v, want boom", err)
	}
	b.SetPublishFault(nil)
	publish(t, b, "q", "m1")
	m := receiveOne(t, c, time.Second)
	b.SetAcknowledgeFault(func(string, *message.Message) error { return boom })
	if err := c.Acknowledge(ctx, m); !errors.Is(err, boom) {
		t.Errorf("ack = %v, want boom", err)
	}
	b.SetReleaseFault(func(string, *message.Message) error { return boom })
	if err := c.Requeue(ctx, m, 0); !errors.Is(err, boom) {
		t.Errorf("requeue = %v, want boom", err)
	}
	b.SetAcknowledgeFault(nil)
	b.SetReleaseFault(nil)
	if err := c.Acknowledge(ctx, m); err != nil {
		t.Errorf("ack after clearing the fault = %v", err)
	}
}

// StopWhenEmpty: a receiver waiting while the last message is in flight is
// woken by its acknowledgement and gets MT_QUIT at once, not at its timeout.
func TestStopWhenEmptyWakesOnAcknowledge(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q", StopWhenEmpty: true})
	publish(t, b, "q", "m1")
	m := receiveOne(t, c, time.Second)
	got := make(chan []*message.Message, 1)
	entered := make(chan struct{})
	b.SetReceiveFault(func(string, *message.Message) error { close(entered); return nil })
	go func() {
		ms, _ := c.Receive(context.Background(), time.Minute)
		got <- ms
	}()
	<-entered // the receiver is inside Receive, about to wait
	if err := c.Acknowledge(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	select {
	case ms := <-got:
		if len(ms) != 1 || ms[0].Header.MessageType != message.MTQuit {
			t.Fatalf("receive = %v, want one MT_QUIT", ms)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting receiver was not woken by the acknowledgement")
	}
}

// A waiting receiver is woken by a publish, not left until its timeout.
func TestReceiveWokenByPublish(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q"})
	got := make(chan []*message.Message, 1)
	go func() {
		ms, _ := c.Receive(context.Background(), time.Minute)
		got <- ms
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		publishIfEmpty := b.Depth("q") == 0
		if publishIfEmpty {
			publish(t, b, "q", "m1")
		}
		select {
		case ms := <-got:
			if len(ms) != 1 || ms[0].Header.MessageID != "m1" {
				t.Fatalf("receive = %v", ms)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("receiver not woken by publish")
		}
	}
}

// TestNativeRedrive_MovesStoredCopyUnchangedAfterTheLimit_R9: Native redrive
// (MaxReceiveCount) moves the stored copy, unchanged and without rejection
// metadata, on the receive after the limit.
func TestNativeRedrive_MovesStoredCopyUnchangedAfterTheLimit_R9(t *testing.T) {
	b := memory.NewBroker(false)
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q", MaxReceiveCount: 2, NativeDeadLetter: "q.native"})
	publish(t, b, "q", "m1")
	ctx := context.Background()
	for i := range 2 {
		m := receiveOne(t, c, time.Second)
		if m.Header.HandledCount != i {
			t.Fatalf("delivery %d presents %d", i+1, m.Header.HandledCount)
		}
		if err := c.Requeue(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	if ms, _ := c.Receive(ctx, 5*time.Millisecond); len(ms) != 0 {
		t.Fatalf("third receive = %v, want nothing (moved)", ms)
	}
	moved := b.Snapshot("q.native")
	if len(moved) != 1 || moved[0].HasRejectionMetadata() || moved[0].Header.HandledCount != 0 {
		t.Fatalf("native dead-letter = %+v, want the unchanged copy", moved)
	}
}

// TestLoadDump_RoundTripsJSONLinesAndNamesABadLine: Load and Dump round-trip
// the JSON-lines shape; a bad line is named.
func TestLoadDump_RoundTripsJSONLinesAndNamesABadLine(t *testing.T) {
	b := memory.NewBroker(false)
	in := `{"id":"a","topic":"q","messageType":"MT_COMMAND","handledCount":2,"body":"x"}` + "\n\n" +
		`{"id":"b","topic":"q","bodyEncoding":"base64","body":"AP8="}` + "\n"
	n, err := b.Load(context.Background(), strings.NewReader(in), "")
	if err != nil || n != 2 {
		t.Fatalf("Load = %d, %v", n, err)
	}
	c := b.NewConsumer(memory.ConsumerOptions{Queue: "q", BufferSize: 10})
	ms, _ := c.Receive(context.Background(), time.Second)
	if len(ms) != 2 || ms[0].Header.HandledCount != 2 || !bytes.Equal(ms[1].Body, []byte{0, 0xff}) {
		t.Fatalf("loaded = %+v", ms)
	}
	var out bytes.Buffer
	if err := b.Dump(&out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "\n"); got != 2 {
		t.Errorf("dump has %d lines, want 2:\n%s", got, out.String())
	}
	if _, err := b.Load(context.Background(), strings.NewReader("{\"id\":\"ok\"}\n{oops\n"), "q"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("Load of a bad line = %v, want an error naming line 2", err)
	}
}
