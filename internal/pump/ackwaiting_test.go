package pump_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// staleAcceptingConsumer answers an acknowledgement made with a superseded
// receipt with success, as SQS's DeleteMessage and Pub/Sub's Acknowledge
// do for a receipt handle or ack id a redelivery replaced (the memory
// broker refuses it: memory.ErrStaleReceipt). Everything else is the
// memory consumer's, its batch acknowledgement and lease extension
// included.
type staleAcceptingConsumer struct{ *memory.Consumer }

func (c staleAcceptingConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	if err := c.Consumer.Acknowledge(ctx, m); !errors.Is(err, memory.ErrStaleReceipt) {
		return err
	}
	return nil
}

func (c staleAcceptingConsumer) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := c.Consumer.AcknowledgeBatch(ctx, ms)
	for i, err := range errs {
		if errors.Is(err, memory.ErrStaleReceipt) {
			errs[i] = nil
		}
	}
	return errs
}

// A redelivery that arrives while the handler's acknowledgement of an
// earlier delivery is still waiting for the broker's answer in the settle
// batcher is not handled again: it is acknowledged with its own receipt,
// without a handler run (an acknowledged event marked Retry and
// AckWaiting, logged at Info with the message id). The first
// acknowledgement is held until the message's next acknowledgement is
// made (the redelivery's, or, were the redelivery handled, its handler's),
// and answers success with its superseded receipt, as SQS and Pub/Sub do;
// the lease (100 ms) lapses meanwhile and the broker redelivers. That
// answer came after the lease lapsed, so the first acknowledgement is
// reported as stale, and the redelivery's is the one counted. Keyless
// and keyed (whose redelivery must not wait for its own pending
// acknowledgement), both variants.
func TestRedeliveryWhileItsAcknowledgementWaitsIsNotHandledAgain(t *testing.T) {
	for _, key := range []string{"", "k1"} {
		name := "keyless"
		if key != "" {
			name = "keyed"
		}
		t.Run(name, func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{DeadLetter: dlqQueue, VisibilityTimeout: 100 * time.Millisecond, StopWhenEmpty: true})
				release := make(chan struct{})
				var once sync.Once
				free := func() { once.Do(func() { close(release) }) }
				// Should the redelivery wait for the held acknowledgement
				// (its key's), nothing would release it: let it go after
				// a while, so that the test fails rather than hangs.
				fallback := time.AfterFunc(3*time.Second, free)
				t.Cleanup(func() { fallback.Stop(); free() })
				var acks atomic.Int64
				e.b.SetAcknowledgeFault(func(_ string, m *message.Message) error {
					if m.Header.MessageID != "m1" {
						return nil
					}
					if acks.Add(1) == 1 {
						<-release // the handler's acknowledgement waits
					} else {
						free()
					}
					return nil
				})
				e.publish(t, srcQueue, "m1", key)
				e.startWith(t, staleAcceptingConsumer{e.c}, fastOptions(v), ack)
				if err := e.wait(t, 10*time.Second); err != nil {
					t.Fatalf("Run = %v", err)
				}
				if n := e.calls.Load(); n != 1 {
					t.Errorf("handler ran %d times, want once: a redelivery that arrives while the handler's acknowledgement waits for its answer was handled", n)
				}
				if n := acks.Load(); n < 2 {
					t.Errorf("m1 acknowledged %d times, want 2 (the handler's, held, and the redelivery's)", n)
				}
				var waited, handled int
				for _, ev := range e.events.Of(pump.EventAcknowledged) {
					if ev.MessageID() != "m1" {
						continue
					}
					if ev.Retry && ev.AckWaiting && ev.Duration == 0 {
						waited++
					} else {
						handled++
					}
				}
				if waited != 1 || handled != 0 {
					t.Errorf("acknowledged events of m1: %d of the redelivery (Retry, AckWaiting, no handler duration), %d others; want 1 and 0 (the handler's acknowledgement was answered after its lease lapsed: stale)", waited, handled)
				}
				if n := lapsedAcks(e.events.Of(pump.EventStaleSettle)); n != 1 {
					t.Errorf("%d acknowledgements reported as stale, want 1 (the handler's, answered after its lease lapsed)", n)
				}
				if n := e.events.Count(pump.EventSettleFailed) + e.events.Count(pump.EventRejected); n != 0 {
					t.Errorf("%d settle-failed or rejected events, want none", n)
				}
				recs := withMsg(e.logs.records(t), pump.LogAckWhileWaiting)
				if len(recs) != 1 || recs[0]["level"] != "INFO" || attr(recs[0], "message_id") != "m1" {
					t.Errorf("%q records = %v, want one Info naming m1", pump.LogAckWhileWaiting, recs)
				}
				if left := e.receiveAll(t, srcQueue); len(left) != 0 {
					t.Errorf("queue holds %d messages after the run, want none", len(left))
				}
				if dl := e.receiveAll(t, dlqQueue); len(dl) != 0 {
					t.Errorf("dead-letter queue holds %d, want none", len(dl))
				}
			})
		})
	}
}
