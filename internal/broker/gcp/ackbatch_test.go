package gcp

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// lockstep is a cyclic barrier: each wait returns once size callers of
// its round have arrived, or after d.
type lockstep struct {
	mu   sync.Mutex
	size int
	n    int
	gen  chan struct{}
}

func (b *lockstep) wait(d time.Duration) {
	b.mu.Lock()
	if b.gen == nil {
		b.gen = make(chan struct{})
	}
	ch := b.gen
	if b.n++; b.n == b.size {
		close(ch)
		b.gen, b.n = make(chan struct{}), 0
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// On a Pub/Sub pull subscription, the pump's batched acknowledgements go
// in AcknowledgeRequests of more than SQS's ten ack ids, up to
// PullAckBatchMax, in both variants: four performers handle in lockstep,
// so the acknowledgements of all four reach the batcher within its window.
// A counting interceptor on the client's connection sees every request.
func TestPullAcknowledgementsBatchedPastTenAckIDs(t *testing.T) {
	t.Parallel()
	for _, v := range pumptest.Variants {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			const msgs, performers = 80, 4
			e := newEnv(t)
			e.channels(t, ChannelOptions{Topic: "orders", Subscription: "orders-sub", RequeueCount: -1, AckDeadline: 60 * time.Second})
			c := e.consumer(t, modePull, ConsumerOptions{Subscription: "orders-sub", BufferSize: 10, AckDeadline: 60 * time.Second})
			p := NewProducer(e.client, ProducerOptions{})
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			for i := range msgs {
				m := newMsg(fmt.Sprintf("b-%d", i))
				m.Header.Topic = "orders"
				if err := p.Send(ctxT(t, 10*time.Second), m); err != nil {
					t.Fatalf("send: %v", err)
				}
			}
			round := &lockstep{size: performers}
			opts := pumptest.Options(v, 10)
			opts.NoOfPerformers = performers
			r := pumptest.Start(t, c, opts, func(context.Context, *message.Message) pump.Result {
				round.wait(time.Second)
				return pump.Result{Outcome: pump.Ack}
			})
			pumptest.WaitUntil(t, 90*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
			r.Stop(t)
			sizes := e.faults.AckIDsPerCall()
			total := 0
			for _, n := range sizes {
				total += n
			}
			if total < msgs {
				t.Fatalf("%d ack ids in %d AcknowledgeRequests for %d messages acknowledged", total, len(sizes), msgs)
			}
			if most := slices.Max(sizes); most <= 10 || most > PullAckBatchMax {
				t.Errorf("the largest AcknowledgeRequest carried %d ack ids (requests %v), want 11..%d: the batch is capped at SQS's ten",
					most, sizes, PullAckBatchMax)
			}
		})
	}
}
