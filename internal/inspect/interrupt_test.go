package inspect_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// outcomes records every Outcome a replay reports, by id: those of
// messages left (Outcome.Left) in left, the others in byID and n.
type outcomes struct {
	mu   sync.Mutex
	byID map[string]int
	left map[string]int
	n    int
	// after, when set, is called with the running total after each outcome.
	after func(n int)
}

func (o *outcomes) Done(out inspect.Outcome) {
	o.mu.Lock()
	if o.byID == nil {
		o.byID, o.left = map[string]int{}, map[string]int{}
	}
	if out.Left {
		o.left[out.ID]++
		o.mu.Unlock()
		return
	}
	o.byID[out.ID]++
	o.n++
	n := o.n
	o.mu.Unlock()
	if o.after != nil {
		o.after(n)
	}
}

// TestReplay_BesideADeferringConsumer_EachMessageOnce_R5 replays a DLQ while
// a pump with a defer handler and requeueCount 1 consumes the destination:
// each replayed copy is dead-lettered again within the scan, with the same
// id and a new rejection time. The replay must end, having replayed each
// message exactly once and left the returning copies in the DLQ, released,
// each copy it read reported Left once and counted in Summary.Left.
func TestReplay_BesideADeferringConsumer_EachMessageOnce_R5(t *testing.T) {
	const n = 5
	c := clients(t)
	queue, dlq := uniq("orders"), uniq("orders-dlq")
	makeQueues(t, c, queue, dlq, false)
	for i := range n {
		deadLetter(t, c, dlq, fmt.Sprintf("r%d", i), queue, message.Rejection{Reason: message.ReasonDeliveryError, Description: "timed out"}, 3, false, "")
	}
	k, err := sqs.NewConsumer(c, sqs.ConsumerOptions{Queue: queue, DeadLetter: dlq, BufferSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pump.New(k, func(ctx context.Context, m *message.Message) pump.Result { return pump.Result{Outcome: pump.Defer} },
		pump.Options{Variant: pump.Reactor, TimeOut: time.Second, RequeueCount: 1, EmptyChannelDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPump := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = p.Run(pctx) }()
	defer func() { stopPump(); wg.Wait() }()

	// A long receive wait gives the re-dead-lettered copies time to come
	// back while the scan still runs.
	src := &inspect.Source{Consumer: reader(t, c, dlq, false), Name: "sqs://" + dlq, Wait: 3 * time.Second, Logger: discardLogger()}
	prod := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	rec := &outcomes{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := inspect.Replay(ctx, src, dlq, prod, inspect.Filter{}, inspect.ReplayOptions{Progress: rec})
	if err != nil {
		t.Fatalf("replay did not end cleanly within its deadline: %v (summary %+v, outcomes %v)", err, sum, rec.byID)
	}
	if sum.Replayed != n || sum.Failed != 0 || sum.Left != len(rec.left) || sum.Left > n {
		t.Fatalf("summary %+v, want %d replayed, 0 failed, at most %d left, one per copy reported left (%v)", sum, n, n, rec.left)
	}
	for id, k := range rec.left {
		if k != 1 || rec.byID[id] != 1 {
			t.Errorf("message %s reported left %d times (replayed %d), want a copy that came back once, of a message replayed", id, k, rec.byID[id])
		}
	}
	for i := range n {
		if id := fmt.Sprintf("r%d", i); rec.byID[id] != 1 {
			t.Errorf("message %s handled %d times, want exactly once (all: %v)", id, rec.byID[id], rec.byID)
		}
	}
	if len(rec.byID) != n {
		t.Errorf("outcomes for %v, want only r0..r%d", rec.byID, n-1)
	}
	// Every replayed copy was dead-lettered again and is back in the DLQ,
	// visible (released, not removed, not republished).
	deadline := time.Now().Add(20 * time.Second)
	for visible(t, c, dlq) != n {
		if time.Now().After(deadline) {
			t.Fatalf("DLQ: %d visible of %d held, want the %d re-dead-lettered copies visible", visible(t, c, dlq), depth(t, c, dlq), n)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not a wait for a condition
	}
}

// cancelAfter is an Exporter that cancels the scan after it has written
// after messages.
type cancelAfter struct {
	inspect.Exporter
	after   int
	written int
	cancel  context.CancelFunc
}

func (c *cancelAfter) Write(m *message.Message) error {
	c.written++
	if c.written == c.after {
		c.cancel()
	}
	return c.Exporter.Write(m)
}

// seedRouted dead-letters n routed copies into a fresh DLQ whose original
// topic exists, and returns both names.
func seedRouted(t *testing.T, c *sqs.Clients, n int) (dlq, topic string) {
	t.Helper()
	dlq, topic = uniq("int-dlq"), uniq("int-topic")
	makeQueues(t, c, topic, dlq, false)
	for i := range n {
		deadLetter(t, c, dlq, fmt.Sprintf("i%d", i), topic, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, 3, false, "")
	}
	return dlq, topic
}

// TestPeek_Interrupted_ReleasesAtOnce cancels a peek after three messages
// (what Ctrl-C does): the three are printed, and every message the scan held
// is visible again as soon as Peek returns, not after --visibility.
func TestPeek_Interrupted_ReleasesAtOnce(t *testing.T) {
	const n = 25
	c := clients(t)
	dlq, _ := seedRouted(t, c, n)
	src := source(reader(t, c, dlq, false), dlq)
	src.Logger = discardLogger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	out := &cancelAfter{Exporter: inspect.NewJSONLines(&buf), after: 3, cancel: cancel}
	counts, err := inspect.Peek(ctx, src, inspect.Filter{}, out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("peek error %v, want context.Canceled", err)
	}
	if got := bytes.Count(buf.Bytes(), []byte("\n")); got != 3 || counts.Selected != 3 {
		t.Errorf("printed %d lines, selected %d; want the 3 read before the interrupt", got, counts.Selected)
	}
	if v := visible(t, c, dlq); v != n {
		t.Fatalf("%d of %d visible right after the interrupted peek, want all (released at once)", v, n)
	}
	// A second peek sees them all. One peek ends at an empty receive, which
	// a loaded emulator can give early, so look a few times within a
	// deadline; the messages must all be there, none lost or held.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := peekJSON(t, source(reader(t, c, dlq, false), dlq), inspect.Filter{})
		if len(got) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("peek after the interrupt shows %d, want %d", len(got), n)
		}
	}
}

// TestReplay_Interrupted_LosesNothingAndReleases cancels a replay after
// three outcomes: the scan stops, each message is either replayed (in the
// destination, gone from the DLQ) or still in the DLQ and visible at once;
// none is in neither place, none is left invisible.
func TestReplay_Interrupted_LosesNothingAndReleases(t *testing.T) {
	const n = 25
	c := clients(t)
	dlq, topic := seedRouted(t, c, n)
	src := source(reader(t, c, dlq, false), dlq)
	src.Logger = discardLogger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &outcomes{after: func(k int) {
		if k == 3 {
			cancel()
		}
	}}
	prod := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(ctx, src, dlq, prod, inspect.Filter{}, inspect.ReplayOptions{Progress: rec, Workers: 2})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("replay error %v, want context.Canceled", err)
	}
	if sum.Failed != 0 || sum.Replayed < 3 || sum.Replayed >= n {
		t.Fatalf("summary %+v, want at least 3 and fewer than %d replayed, none failed", sum, n)
	}
	left := depth(t, c, dlq)
	if v := visible(t, c, dlq); v != left {
		t.Fatalf("%d of the %d messages left in the DLQ are visible right after the interrupt, want all", v, left)
	}
	if left != n-sum.Replayed {
		t.Fatalf("DLQ holds %d after %d replayed, want %d", left, sum.Replayed, n-sum.Replayed)
	}
	if got := depth(t, c, topic); got != sum.Replayed {
		t.Fatalf("destination holds %d, want the %d replayed", got, sum.Replayed)
	}
}

// TestReplay_RateInterrupted_FirstSentWaitingReleased: at --rate 0.25 the
// first message is published at once (the limiter paces the publishes,
// not the reads; a batch's worth of tokens first would take 4 s a
// message) and the next waits four seconds for its token; an interrupt
// during that wait ends the replay without it (within the receive under
// way, not at the token) with the first replayed and every other message
// in the DLQ, visible, none published.
func TestReplay_RateInterrupted_FirstSentWaitingReleased(t *testing.T) {
	const n = 5
	c := clients(t)
	dlq, topic := seedRouted(t, c, n)
	src := source(reader(t, c, dlq, false), dlq)
	src.Logger = discardLogger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first time.Duration
	start := time.Now()
	rec := &outcomes{after: func(k int) {
		if k == 1 {
			first = time.Since(start)
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}}
	prod := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(ctx, src, dlq, prod, inspect.Filter{}, inspect.ReplayOptions{Progress: rec, Rate: 0.25})
	took := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("replay error %v, want context.Canceled", err)
	}
	if sum.Replayed != 1 || sum.Failed != 0 {
		t.Fatalf("summary %+v, want the first replayed before the interrupt, nothing failed", sum)
	}
	if first > 3*time.Second || took-first > 3*time.Second {
		t.Fatalf("first outcome after %v, replay returned %v after it; want the first at once and the interrupt to end the wait for the next token", first, took-first)
	}
	if v, d := visible(t, c, dlq), depth(t, c, dlq); v != n-1 || d != n-1 {
		t.Fatalf("DLQ: %d visible of %d right after the interrupt, want the other %d, all visible", v, d, n-1)
	}
	if got := depth(t, c, topic); got != 1 {
		t.Fatalf("destination holds %d, want the 1 replayed", got)
	}
}
