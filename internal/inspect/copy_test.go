package inspect_test

import (
	"context"
	"testing"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
)

// TestReplay_Copy_KeepsTheDeadLetter (fauxqs): with Copy each
// selected message is published and stays in the DLQ, visible again at the
// end; the others are untouched.
func TestReplay_Copy_KeepsTheDeadLetter(t *testing.T) {
	c := clients(t)
	dlq, a, _ := seedDLQ(t, c)
	src := source(reader(t, c, dlq, false), dlq)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(context.Background(), src, dlq, p, inspect.Filter{Topics: []string{a}}, inspect.ReplayOptions{Copy: true})
	if err != nil || sum.Replayed != 3 || sum.Failed != 0 || sum.Skipped != 2 {
		t.Fatalf("copy: %+v %v", sum, err)
	}
	if got := sortedIDs(drain(t, c, a, false, 3)); got != "m1 m2 m3" {
		t.Fatalf("%s received %q, want m1 m2 m3", a, got)
	}
	if n := visible(t, c, dlq); n != 5 {
		t.Fatalf("the DLQ shows %d visible, want all 5 kept and released", n)
	}
}

// TestReplayPubSub_Copy_KeepsTheDeadLetter is the same on Google's
// Pub/Sub emulator.
func TestReplayPubSub_Copy_KeepsTheDeadLetter(t *testing.T) {
	e := newPS(t)
	dlq, a, _ := e.seed(t)
	src := e.source(dlq)
	sum, err := inspect.Replay(context.Background(), src, dlq, e.producer(t), inspect.Filter{Topics: []string{a}}, inspect.ReplayOptions{Copy: true})
	if err != nil || sum.Replayed != 3 || sum.Failed != 0 {
		t.Fatalf("copy: %+v %v", sum, err)
	}
	if got := sortedIDs(e.drain(t, a+"-sub", 3)); got != "m1 m2 m3" {
		t.Fatalf("%s received %q, want m1 m2 m3", a, got)
	}
	if got := sortedIDs(peekJSON(t, src, inspect.Filter{})); got != "m1 m2 m3 m4 m5" {
		t.Fatalf("the dead-letter subscription holds %q, want all five", got)
	}
}
