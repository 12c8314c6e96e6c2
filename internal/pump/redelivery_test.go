package pump_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/pump/pumptest"
)

// With lease extension off and an acknowledging handler slower than the
// lease, the broker hands each message out again while its handler runs;
// the run settles with the freshest receipt, so each message is handled
// at most twice (here: once) and then settled for good, its
// acknowledgement counted once. Without that, the Proactor would receive
// the message again behind its own handler, acknowledge with the
// superseded receipt and handle the later delivery: for ever.
func TestExtensionOffSlowHandlerSettledForGood(t *testing.T) {
	for _, performers := range []int{1, 2} {
		t.Run(fmt.Sprintf("performers=%d", performers), func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				const msgs = 2
				e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, StopWhenEmpty: true})
				for i := range msgs {
					e.publish(t, srcQueue, fmt.Sprintf("m%d", i), "")
				}
				opts := fastOptions(v)
				opts.BufferSize = 1
				opts.NoOfPerformers = performers
				opts.MaxLeaseExtension = -1 // off
				var calls perID
				e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
					calls.add(m.Header.MessageID)
					pumptest.SleepFor(ctx, testLease*3/2)
					return pump.Result{Outcome: pump.Ack}
				})
				if err := e.wait(t, 60*time.Second); err != nil {
					t.Fatalf("Run = %v", err)
				}
				got := calls.get()
				if len(got) != msgs {
					t.Errorf("handled %d distinct messages, want %d", len(got), msgs)
				}
				for id, n := range got {
					if n > 2 {
						t.Errorf("message %s handled %d times, want at most 2", id, n)
					}
				}
				if d := e.b.Depth(srcQueue); d != 0 {
					t.Errorf("source depth = %d, want 0", d)
				}
				// An acknowledgement sent with a lapsed receipt is reported
				// as stale in its place, never counted as acknowledged.
				acked, lapsed := e.events.Count(pump.EventAcknowledged), lapsedAcks(e.events.Of(pump.EventStaleSettle))
				if acked+lapsed != msgs {
					t.Errorf("acknowledged %d + stale %d, want %d (once per message)", acked, lapsed, msgs)
				}
			})
		})
	}
}

// silentStale behaves as SQS does: an acknowledgement with a superseded
// receipt answers success and deletes nothing. It also holds back a
// receive that returns a later delivery of a message until the earlier
// delivery's acknowledgement has begun, so that the run cannot know of
// the later delivery before it settles (the race the late settles'
// memory covers).
type silentStale struct {
	*memory.Consumer
	noHold  bool // do not hold back a later delivery's receive
	mu      sync.Mutex
	acking  map[string]chan struct{} // closed when an acknowledgement of the id begins
	stale   int                      // acknowledgements that were superseded
	settled map[string]int           // acknowledgements that took effect
}

func (c *silentStale) started(id string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.acking == nil {
		c.acking = map[string]chan struct{}{}
	}
	ch, ok := c.acking[id]
	if !ok {
		ch = make(chan struct{})
		c.acking[id] = ch
	}
	return ch
}

func (c *silentStale) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	ms, err := c.Consumer.Receive(ctx, d)
	for _, m := range ms {
		if c.noHold {
			break
		}
		if m.DeliveryAttempt > 1 {
			select {
			case <-c.started(m.Header.MessageID):
			case <-time.After(10 * time.Second):
			}
		}
	}
	return ms, err
}

func (c *silentStale) Acknowledge(ctx context.Context, m *message.Message) error {
	ch := c.started(m.Header.MessageID)
	c.mu.Lock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	c.mu.Unlock()
	err := c.Consumer.Acknowledge(ctx, m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, broker.ErrStaleReceipt) {
		c.stale++
		return nil // as SQS answers
	}
	if err == nil {
		if c.settled == nil {
			c.settled = map[string]int{}
		}
		c.settled[m.Header.MessageID]++
	}
	return err
}

func (c *silentStale) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = c.Acknowledge(ctx, m)
	}
	return errs
}

// A message acknowledged after its lease lapsed, while this run was
// already receiving it again, was settled with a superseded receipt that
// SQS answers with success: the later delivery is acknowledged without
// the handler running again, and the superseded settle is counted
// (EventStaleSettle) and logged once at Warn with the message id; the
// acknowledgement is counted once (docs/adr/0005-leases.md decision 9).
func TestSupersededSettleCountedAndLogged(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, StopWhenEmpty: true})
		sent := e.publish(t, srcQueue, "m0", "")
		c := &silentStale{Consumer: e.c}
		opts := fastOptions(v)
		opts.BufferSize = 1
		opts.NoOfPerformers = 2 // a second receive is under way while the first handler runs
		opts.MaxLeaseExtension = -1
		var calls perID
		e.startWith(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			pumptest.SleepFor(ctx, testLease*3/2)
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := calls.get()[sent.Header.MessageID]; n != 1 {
			t.Errorf("handled %d times, want once", n)
		}
		c.mu.Lock()
		stale, settled := c.stale, c.settled[sent.Header.MessageID]
		c.mu.Unlock()
		if stale != 1 || settled != 1 {
			t.Errorf("broker saw %d superseded and %d effective acknowledgements, want 1 and 1", stale, settled)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
		ss := e.events.Of(pump.EventStaleSettle)
		if len(ss) != 1 || ss[0].MessageID() != sent.Header.MessageID || !errors.Is(ss[0].Err, broker.ErrStaleReceipt) {
			t.Errorf("stale-settle events = %v, want one for %s wrapping ErrStaleReceipt", ss, sent.Header.MessageID)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want 1", n)
		}
		// The acknowledgement sent with the lapsed receipt is what is
		// reported, as it ends.
		warns := 0
		for _, rec := range withMsg(e.logs.records(t), pump.LogLapsedSettle) {
			if attr(rec, "level") == "WARN" && attr(rec, "message_id") == sent.Header.MessageID {
				warns++
			}
		}
		if warns != 1 {
			t.Errorf("%d Warn records %q naming %s, want one", warns, pump.LogLapsedSettle, sent.Header.MessageID)
		}
	})
}

// lapsedAcks counts the acknowledgements reported as stale because their
// receipt had lapsed (EventStaleSettle ending the flight).
func lapsedAcks(es []pump.Event) int {
	n := 0
	for _, e := range es {
		if e.EndsFlight && e.Outcome == pump.Ack && errors.Is(e.Err, pump.ErrLapsedReceipt) {
			n++
		}
	}
	return n
}

// With lease extension off, one performer and bufferSize 1, an
// acknowledging handler that takes two and a half leases outlives its
// delivery's lease and the later delivery's, which waited behind it (the
// Proactor received it into its buffer): every acknowledgement sent with
// a lapsed receipt (the first delivery's or the later one's) is reported
// as stale and never counted as acknowledged, on a broker that answers a
// stale acknowledgement with success and deletes nothing, as SQS does;
// the message is handled once in both variants, never dead-lettered, and
// gone from the source.
func TestLapsedReceiptAcknowledgementReportedNotCounted(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, DeadLetter: dlqQueue, StopWhenEmpty: true})
		sent := e.publish(t, srcQueue, "m0", "")
		c := &silentStale{Consumer: e.c, noHold: true}
		opts := fastOptions(v)
		opts.BufferSize = 1
		opts.NoOfPerformers = 1
		opts.MaxLeaseExtension = -1
		opts.RequeueCount = 3
		var calls perID
		e.startWith(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
			calls.add(m.Header.MessageID)
			pumptest.SleepFor(ctx, testLease*5/2)
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := calls.get()[sent.Header.MessageID]; n != 1 {
			t.Errorf("handled %d times, want once", n)
		}
		c.mu.Lock()
		settled := c.settled[sent.Header.MessageID]
		c.mu.Unlock()
		acked := e.events.Count(pump.EventAcknowledged)
		if acked > settled {
			t.Errorf("acknowledged events = %d, but only %d acknowledgements took effect on the broker", acked, settled)
		}
		lapsed := lapsedAcks(e.events.Of(pump.EventStaleSettle))
		if lapsed == 0 {
			t.Error("no acknowledgement was reported as stale, though every one the handler made came after its lease lapsed")
		}
		if n := e.events.Count(pump.EventRejected); n != 0 {
			t.Errorf("rejected %d times, want never (the handler acknowledged it)", n)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
		if d := e.b.Depth(dlqQueue); d != 0 {
			t.Errorf("dead-letter depth = %d, want 0", d)
		}
	})
}

// With lease extension off, a handler that defers or rejects after its
// message's lease lapsed (and any later delivery's taken over by the
// settle) has its settle sent with a lapsed receipt: the
// requeue (or the rejection's acknowledgement) is reported as stale, by
// the broker's refusal (a settle-failed event wrapping
// broker.ErrStaleReceipt) or, when the broker answered it with success, by
// a stale-settle event with ErrLapsedReceipt after its own deferred or
// rejected event; in both variants.
func TestLapsedReceiptRequeueAndRejectReportedAsStale(t *testing.T) {
	for _, o := range []pump.Outcome{pump.Defer, pump.Reject} {
		t.Run(o.String(), func(t *testing.T) {
			forEachVariant(t, func(t *testing.T, v pump.Variant) {
				e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, DeadLetter: dlqQueue})
				sent := e.publish(t, srcQueue, "m0", "")
				opts := fastOptions(v)
				opts.BufferSize = 1
				opts.NoOfPerformers = 1
				opts.MaxLeaseExtension = -1
				opts.RequeueCount = -1
				var once sync.Once
				e.start(t, opts, func(ctx context.Context, m *message.Message) pump.Result {
					res := pump.Result{Outcome: pump.Ack}
					once.Do(func() {
						// Past its lease and a later delivery's, which the
						// Proactor receives into its buffer meanwhile.
						pumptest.SleepFor(ctx, testLease*5/2)
						res = pump.Result{Outcome: o}
					})
					return res
				})
				stale := func() int {
					n := 0
					for _, ev := range e.events.Of(pump.EventStaleSettle) {
						if ev.MessageID() == sent.Header.MessageID && ev.Outcome == o && errors.Is(ev.Err, pump.ErrLapsedReceipt) && !ev.EndsFlight {
							n++
						}
					}
					for _, ev := range e.events.Of(pump.EventSettleFailed) {
						if ev.MessageID() == sent.Header.MessageID && errors.Is(ev.Err, broker.ErrStaleReceipt) {
							n++
						}
					}
					return n
				}
				pumptest.WaitUntil(t, 30*time.Second, "the lapsed settle reported as stale", func() bool { return stale() > 0 })
			})
		})
	}
}

// slowFirstAck behaves as SQS does with a superseded receipt (silentStale),
// and answers the first acknowledgement only once its lease has lapsed and
// the broker has handed the message out again; the receive that returns
// that later delivery is held back until the acknowledgement was
// answered, so the run learns of the later delivery only after the
// answer, from a receive that began before it.
type slowFirstAck struct {
	*silentStale
	delay    time.Duration
	once     sync.Once
	answered chan struct{}
}

func (c *slowFirstAck) Receive(ctx context.Context, d time.Duration) ([]*message.Message, error) {
	ms, err := c.silentStale.Receive(ctx, d)
	for _, m := range ms {
		if m.DeliveryAttempt > 1 {
			select {
			case <-c.answered:
				time.Sleep(testLease / 5) // past the batch's own end too
			case <-time.After(10 * time.Second):
			}
		}
	}
	return ms, err
}

func (c *slowFirstAck) AcknowledgeBatch(ctx context.Context, ms []*message.Message) []error {
	first := false
	c.once.Do(func() { first = true })
	if first {
		time.Sleep(c.delay) // the late answer under test, injected on purpose
		defer close(c.answered)
	}
	return c.silentStale.AcknowledgeBatch(ctx, ms)
}

// An acknowledgement begun inside its lease and answered only after the
// lease lapsed, when the broker had handed the message out again, used a
// superseded receipt (SQS answers success and deletes nothing): it is
// reported as a stale settle, and the later delivery, received by a
// receive begun before that answer, is acknowledged without the handler
// running again and counted once; in both variants.
func TestSettleAnsweredAfterLapseSupersededByLaterDelivery(t *testing.T) {
	forEachVariant(t, func(t *testing.T, v pump.Variant) {
		e := newEnv(t, memory.ConsumerOptions{BufferSize: 1, VisibilityTimeout: testLease, StopWhenEmpty: true})
		sent := e.publish(t, srcQueue, "m0", "")
		c := &slowFirstAck{silentStale: &silentStale{Consumer: e.c, noHold: true}, delay: testLease * 3 / 2, answered: make(chan struct{})}
		opts := fastOptions(v)
		opts.BufferSize = 1
		opts.NoOfPerformers = 1
		opts.RequeueCount = 3
		var calls perID
		e.startWith(t, c, opts, func(context.Context, *message.Message) pump.Result {
			calls.add(sent.Header.MessageID)
			return pump.Result{Outcome: pump.Ack}
		})
		if err := e.wait(t, 60*time.Second); err != nil {
			t.Fatalf("Run = %v", err)
		}
		if n := calls.get()[sent.Header.MessageID]; n != 1 {
			t.Errorf("handled %d times, want once", n)
		}
		if n := lapsedAcks(e.events.Of(pump.EventStaleSettle)); n != 1 {
			t.Errorf("%d acknowledgements reported as stale, want 1 (the one answered after the lease)", n)
		}
		if n := e.events.Count(pump.EventAcknowledged); n != 1 {
			t.Errorf("acknowledged = %d, want 1 (the later delivery's)", n)
		}
		if d := e.b.Depth(srcQueue); d != 0 {
			t.Errorf("source depth = %d, want 0", d)
		}
	})
}
