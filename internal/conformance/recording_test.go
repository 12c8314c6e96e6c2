package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// scriptedConsumer hands out what the test puts on out, one batch per
// Receive, and answers every acknowledgement with success, as a broker does
// for a lapsed receipt outside exactly-once: the input of the recording
// consumer's own bookkeeping, not a transport under test.
type scriptedConsumer struct {
	broker.Consumer
	out chan []*message.Message
}

func (s *scriptedConsumer) Receive(ctx context.Context, _ time.Duration) ([]*message.Message, error) {
	select {
	case ms := <-s.out:
		return ms, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *scriptedConsumer) Acknowledge(context.Context, *message.Message) error { return nil }

// TestAckCrossed_OnlyAReceiveUnderWayAtTheAnswerCrosses: a delivery handed
// out by a Receive that began before the acknowledgement with the newest
// receipt was answered crossed it (the broker may have handed it out
// first); one from a Receive begun after the answer did not, and neither
// did one following a receipt nothing acknowledged. The conformance rows'
// settledForGood fails only the second kind as "handed out again after it
// was acknowledged with its newest receipt".
func TestAckCrossed_OnlyAReceiveUnderWayAtTheAnswerCrosses(t *testing.T) {
	sc := &scriptedConsumer{out: make(chan []*message.Message, 1)}
	rc := NewRecordingConsumer(sc)
	delivery := func(receipt string) *message.Message {
		m := message.New("m1", "", message.MTCommand, nil)
		m.Receipt = receipt
		return m
	}
	receive := func() []*message.Message {
		t.Helper()
		ms, err := rc.Receive(t.Context(), time.Second)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		return ms
	}
	ack := func(m *message.Message) {
		t.Helper()
		if err := rc.Acknowledge(t.Context(), m); err != nil {
			t.Fatalf("acknowledge: %v", err)
		}
	}

	sc.out <- []*message.Message{delivery("r1")}
	d1 := receive()[0]
	if rc.AckCrossed("m1", 1) {
		t.Fatal("crossed with one delivery")
	}

	// A Receive under way while d1 is acknowledged hands out r2.
	got := make(chan []*message.Message)
	go func() {
		ms, _ := rc.Receive(context.Background(), time.Second)
		got <- ms
	}()
	for len(rc.OpenReceives()) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(2 * time.Millisecond) // the clock moves past the Receive's start
	ack(d1)
	if n, ok := rc.SettledNewestOf("m1"); n != 1 || !ok {
		t.Fatalf("SettledNewestOf = %d, %v after the acknowledgement of the only delivery, want 1, true", n, ok)
	}
	sc.out <- []*message.Message{delivery("r2")}
	d2 := (<-got)[0]
	if n, ok := rc.SettledNewestOf("m1"); n != 2 || ok {
		t.Errorf("SettledNewestOf = %d, %v with r2 unacknowledged, want 2, false", n, ok)
	}
	if !rc.AckCrossed("m1", 1) {
		t.Error("r2, from a Receive under way when r1's acknowledgement was answered, did not cross it")
	}

	// r2 acknowledged; a Receive begun after that answer hands out r3.
	ack(d2)
	time.Sleep(2 * time.Millisecond) // the clock moves past the answer: the order under test
	sc.out <- []*message.Message{delivery("r3")}
	receive()
	if rc.AckCrossed("m1", 2) {
		t.Error("r3, from a Receive begun after r2's acknowledgement was answered, crossed it")
	}
	// r3 never acknowledged: r4 crossed nothing.
	sc.out <- []*message.Message{delivery("r4")}
	receive()
	if rc.AckCrossed("m1", 3) {
		t.Error("r4 crossed an acknowledgement of r3, which was never acknowledged")
	}
	if rc.AckCrossed("m1", 0) || rc.AckCrossed("m1", 4) {
		t.Error("crossed with no delivery before or after from")
	}
}
