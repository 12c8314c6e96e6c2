package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
)

// TestReplay_TwoFailuresOfOneIDStoredBefore_BothReplayed: two stored
// copies of one id with distinct rejection times, both dead-lettered
// before the run (a duplicate delivery that failed twice, two
// subscriptions sharing a dead-letter queue), are two failures: both are
// published and removed, none left, and the summary accounts for each.
func TestReplay_TwoFailuresOfOneIDStoredBefore_BothReplayed(t *testing.T) {
	t.Parallel()
	c := clients(t)
	topic, dlq := uniq("twice-topic"), uniq("twice-dlq")
	makeQueues(t, c, topic, dlq, false)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	now := time.Now()
	for _, s := range []struct {
		id string
		at time.Time
	}{{"same", now.Add(-2 * time.Second)}, {"same", now.Add(-time.Second)}, {"other", now.Add(-time.Second)}} {
		m := message.New(s.id, topic, message.MTCommand, []byte(`{}`))
		if err := p.Send(context.Background(), message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, s.at)); err != nil {
			t.Fatal(err)
		}
	}
	var outs []inspect.Outcome
	sum, err := inspect.Replay(context.Background(), source(reader(t, c, dlq, false), dlq), dlq, p, inspect.Filter{},
		inspect.ReplayOptions{Progress: progressFunc(func(o inspect.Outcome) { outs = append(outs, o) })})
	if err != nil || sum.Replayed != 3 || sum.Failed != 0 || sum.Left != 0 {
		t.Fatalf("replay: %+v %v; want the three failures replayed, none left (outcomes %+v)", sum, err, outs)
	}
	for _, o := range outs {
		if o.Duplicate || o.Left {
			t.Errorf("outcome %+v: a failure of its own, stored before the run, is neither a duplicate nor left", o)
		}
	}
	got := drain(t, c, topic, false, 3)
	same := 0
	for _, m := range got {
		if m.Header.MessageID == "same" {
			same++
		}
	}
	if same != 2 {
		t.Fatalf("the destination got %d copies of same, want one per failure (2)", same)
	}
	if n := depth(t, c, dlq); n != 0 {
		t.Fatalf("the DLQ holds %d after the replay, want 0", n)
	}
}

// bounce plays a consumer that dead-letters every message of queue back to
// dlq as soon as it arrives, with the rejection time rejectedAt gives (a
// rejecting host's clock), until ctx ends; it returns how many it bounced.
func bounce(ctx context.Context, t *testing.T, c *sqs.Clients, queue, dlq string, rejectedAt func() time.Time) (*atomic.Int64, *sync.WaitGroup) {
	t.Helper()
	k := reader(t, c, queue, false)
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			ms, err := k.Receive(ctx, 200*time.Millisecond)
			if err != nil {
				continue
			}
			for _, m := range ms {
				if err := p.Send(context.Background(), message.Stamp(m, dlq, message.Rejection{Reason: message.ReasonDeliveryError, Description: "again"}, rejectedAt())); err != nil {
					t.Errorf("bounce %s: %v", m.Header.MessageID, err)
					return
				}
				if err := k.Acknowledge(context.Background(), m); err != nil {
					t.Errorf("bounce %s: %v", m.Header.MessageID, err)
					return
				}
				n.Add(1)
			}
		}
	}()
	return &n, &wg
}

// TestReplay_CopyComingBackWithAnOldRejectionTime_LeftByItsMark: a
// consumer sends each replayed copy straight back to the DLQ with a
// rejection time an hour old (the rejecting host's clock behind this
// one's). The copy carries this run's mark (replayedFrom this DLQ,
// replayedAt after the run's start), so it is left, reported Left and
// counted in Summary.Left, not replayed again: the replay ends, each
// message published once, and every copy is back in the DLQ, visible.
func TestReplay_CopyComingBackWithAnOldRejectionTime_LeftByItsMark(t *testing.T) {
	t.Parallel()
	const n = 3
	c := clients(t)
	topic, dlq := uniq("back-topic"), uniq("back-dlq")
	makeQueues(t, c, topic, dlq, false)
	for _, id := range []string{"b0", "b1", "b2"} {
		deadLetter(t, c, dlq, id, topic, message.Rejection{Reason: message.ReasonDeliveryError, Description: "x"}, 3, false, "")
	}
	bctx, stop := context.WithCancel(context.Background())
	bounced, wg := bounce(bctx, t, c, topic, dlq, func() time.Time { return time.Now().Add(-time.Hour) })
	defer func() { stop(); wg.Wait() }()
	var mu sync.Mutex
	replayed, left := map[string]int{}, map[string]int{}
	rec := progressFunc(func(o inspect.Outcome) {
		mu.Lock()
		defer mu.Unlock()
		if o.Left {
			left[o.ID]++
		} else {
			replayed[o.ID]++
		}
	})
	// A long receive wait gives the copies time to come back while the scan
	// still runs.
	src := &inspect.Source{Consumer: reader(t, c, dlq, false), Name: "sqs://" + dlq, Wait: 3 * time.Second, Logger: discardLogger()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := sqs.NewProducer(c, sqs.ProducerOptions{MakeChannels: broker.MakeValidate})
	sum, err := inspect.Replay(ctx, src, dlq, p, inspect.Filter{}, inspect.ReplayOptions{Progress: rec})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the replay did not end: it kept replaying the copies coming back (summary %+v, replayed %v, bounced %d)", sum, replayed, bounced.Load())
	}
	if err != nil || sum.Replayed != n || sum.Failed != 0 || sum.Left != n {
		t.Fatalf("replay: %+v %v; want %d replayed and the %d copies that came back left (replayed %v, left %v)", sum, err, n, n, replayed, left)
	}
	for _, id := range []string{"b0", "b1", "b2"} {
		if replayed[id] != 1 || left[id] != 1 {
			t.Errorf("%s: replayed %d times, left %d times; want once each", id, replayed[id], left[id])
		}
	}
	stop()
	wg.Wait()
	if got := bounced.Load(); got != n {
		t.Fatalf("the consumer got %d copies, want each message published once (%d)", got, n)
	}
	polltest.Until(t, 20*time.Second, fmt.Sprintf("the %d copies that came back visible in the DLQ", n), func() bool { return visible(t, c, dlq) == n })
}
