package pump

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// Which receipt settles a message the broker handed out more than once
// while this run held it (docs/adr/0005-leases.md decision 9), and how a
// lease extension bounds and refuses: the settle of every path uses the
// newest delivery's receipt, the only one the broker still honours. The
// deliveries are real ones of the memory broker, whose settles refuse a
// superseded receipt (memory.ErrStaleReceipt); the run's loops are not
// started: each test calls handle with the deliveries it made.

const (
	receiptsQueue = "q"
	receiptsDLQ   = "q.dlq"
)

// eventList records a pump's events.
type eventList struct {
	mu sync.Mutex
	es []Event
}

func (l *eventList) Observe(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.es = append(l.es, e)
}

// of returns the events of kind k.
func (l *eventList) of(k EventKind) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.es {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// bareRun is a run over c as Run makes one (a lease tracker, key holds,
// its contexts), with its loops and the lease schedule not started.
func bareRun(t *testing.T, c broker.Consumer, h Handler, requeueCount int) (*run, *eventList) {
	t.Helper()
	evs := &eventList{}
	p, err := New(c, h, Options{Subscription: "receipts", Variant: Reactor, RequeueCount: requeueCount, TimeOut: time.Second}, evs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r := &run{p: p, stop: make(chan struct{}), started: time.Now(), settleCtx: t.Context(), handlerCtx: t.Context(), brokerCtx: t.Context()}
	r.recvCtx, r.recvCancel = context.WithCancel(t.Context())
	t.Cleanup(r.recvCancel)
	r.leases = newLeases(c, p.opts.MaxLeaseExtension, p.emit)
	if r.leases == nil {
		t.Fatal("the consumer lends no lease")
	}
	r.leases.keepLate = time.Minute
	r.holds = newKeyHolds(time.Hour)
	return r, evs
}

// deliveriesOf publishes one message id (partition key key, stamped count
// stamped) to b's receiptsQueue and has the broker hand it out n times:
// each delivery but the last by a consumer with a 1 ms visibility timeout,
// so that the next receive supersedes its receipt; the last by pumpC, on
// its own lease. It returns the deliveries, oldest first: only the last
// one's receipt still holds the message.
func deliveriesOf(t *testing.T, b *memory.Broker, pumpC *memory.Consumer, id, key string, stamped, n int) []*message.Message {
	t.Helper()
	m := message.New(id, receiptsQueue, message.MTCommand, []byte(`{}`))
	m.Header.PartitionKey, m.Header.HandledCount = key, stamped
	if err := b.Publish(t.Context(), receiptsQueue, m); err != nil {
		t.Fatalf("publish: %v", err)
	}
	brief := b.NewConsumer(memory.ConsumerOptions{Queue: receiptsQueue, VisibilityTimeout: time.Millisecond})
	var ds []*message.Message
	for i := range n {
		c := brief
		if i == n-1 {
			c = pumpC
		}
		if i > 0 {
			time.Sleep(5 * time.Millisecond) // the brief lease lapses; not a wait for a condition
		}
		got, err := c.Receive(t.Context(), time.Second)
		if err != nil || len(got) != 1 || got[0].Header.MessageID != id {
			t.Fatalf("delivery %d of %s: got %v, %v", i+1, id, got, err)
		}
		ds = append(ds, got[0])
	}
	return ds
}

// pumpConsumer is the consumer the run settles with: a 10 s lease, so that
// nothing it tracks lapses by the pump's clock unless a test says so.
func pumpConsumer(b *memory.Broker) *memory.Consumer {
	return b.NewConsumer(memory.ConsumerOptions{Queue: receiptsQueue, VisibilityTimeout: 10 * time.Second, DeadLetter: receiptsDLQ, Logger: slog.New(slog.DiscardHandler)})
}

// absorbedLater tracks ds[0] and then each later delivery of ds as its own
// receive's batch, and has the newest one taken by its worker while ds[0]
// still waits: it is absorbed (the broker handed the message out again
// before the pump's lease clock said the first delivery's lease ran out,
// as when the receive's answer was slow). It returns ds[0]'s reference.
func absorbedLater(t *testing.T, r *run, ds []*message.Message) leaseRef {
	t.Helper()
	first := r.leases.hold(ds[:1]).at(0)
	var last leaseRef
	for i := 1; i < len(ds); i++ {
		last = r.leases.hold(ds[i : i+1]).at(0)
	}
	r.leases.mayLapse.Store(true) // as the schedule's tick sets it with a lease near its end
	if adm := r.leases.admit(ds[len(ds)-1], last, time.Now()); adm.kind != admitAbsorbed {
		t.Fatalf("the later delivery was not absorbed (admit = %v): the test's set-up is wrong", adm.kind)
	}
	return first
}

// checkNoSettleFailed fails t for any settle the broker refused.
func checkNoSettleFailed(t *testing.T, evs *eventList) {
	t.Helper()
	for _, e := range evs.of(EventSettleFailed) {
		t.Errorf("settle of %s failed: %v (it used a superseded receipt)", e.MessageID(), e.Err)
	}
}

// A message held back behind an earlier message of its key is released
// with the freshest receipt the run holds: the broker had handed it out
// again (the later delivery absorbed while it waited), and a release with
// the first delivery's receipt is refused, leaving the message invisible
// until its lease lapses instead of due back after the earlier message.
func TestHeldBackReleaseUsesTheFreshestReceipt(t *testing.T) {
	b := memory.NewBroker(false)
	c := pumpConsumer(b)
	ds := deliveriesOf(t, b, c, "a2", "a", 0, 2)
	for _, d := range ds {
		d.ReceivedAt = time.Now().Add(-time.Second) // before the earlier message of its key went back
	}
	r, evs := bareRun(t, c, func(context.Context, *message.Message) Result {
		t.Error("the handler ran for a held-back message")
		return Result{Outcome: Ack}
	}, -1)
	ref := absorbedLater(t, r, ds)
	// An earlier message of key a went back unsettled after a2 arrived,
	// due back in 100 ms.
	r.holds.hold(&message.Message{Header: message.Header{PartitionKey: "a"}}, time.Now(), 100*time.Millisecond)
	r.handle(ds[0], ref, ackSink{})
	checkNoSettleFailed(t, evs)
	held := evs.of(EventDeferred)
	if len(held) != 1 || !errors.Is(held[0].Err, ErrHeldBack) {
		t.Fatalf("deferred events %+v, want one held-back release", held)
	}
	// Released, it is handed out again once its delay has run.
	got, err := c.Receive(t.Context(), 5*time.Second)
	if err != nil || len(got) != 1 || got[0].Header.MessageID != "a2" {
		t.Fatalf("receive after the held-back release: %v, %v; want a2 back after its delay", got, err)
	}
}

// A message that arrives with its budget spent by handlers is routed
// without a handler run, settled with the freshest receipt the run holds:
// the broker had handed it out again (the later delivery absorbed while it
// waited), and an acknowledgement of the routed original with the first
// delivery's receipt is refused, leaving it on the broker to be routed
// again (a second dead-letter copy).
func TestExhaustedArrivalSettlesWithTheFreshestReceipt(t *testing.T) {
	b := memory.NewBroker(false)
	c := pumpConsumer(b)
	// Stamped count 5 on a budget of 2: spent by handlers, routed on
	// arrival.
	ds := deliveriesOf(t, b, c, "x", "", 5, 2)
	r, evs := bareRun(t, c, func(context.Context, *message.Message) Result {
		t.Error("the handler ran for a message that arrived exhausted")
		return Result{Outcome: Ack}
	}, 2)
	r.handle(ds[0], absorbedLater(t, r, ds), ackSink{})
	checkNoSettleFailed(t, evs)
	rej := evs.of(EventRejected)
	if len(rej) != 1 || rej[0].Err != nil {
		t.Fatalf("rejected events %+v, want one routing that succeeded", rej)
	}
	if n := b.Depth(receiptsQueue); n != 0 {
		t.Errorf("the source holds %d messages after the routing, want 0 (the original acknowledged)", n)
	}
	if n := b.Depth(receiptsDLQ); n != 1 {
		t.Errorf("the dead-letter queue holds %d messages, want 1", n)
	}
}

// A message whose lease lapsed while its handler ran, and which the broker
// handed out twice more meanwhile (both later deliveries waiting in the
// run, as in a Proactor lane behind its handler), is settled with the
// newest later delivery's receipt: the older one was superseded by the
// newest hand-out, and an acknowledgement with it is refused, leaving the
// message on the broker to be handled again.
func TestLapsedSettleUsesTheNewestOfSeveralLaterDeliveries(t *testing.T) {
	b := memory.NewBroker(false)
	c := pumpConsumer(b)
	ds := deliveriesOf(t, b, c, "x", "", 0, 3)
	var r *run
	var first leaseRef
	ran := 0
	r, evs := bareRun(t, c, func(context.Context, *message.Message) Result {
		ran++
		// Its lease runs out while it runs (the clock is the test's).
		r.leases.mu.Lock()
		r.leases.setExpires(first.b, first.state(), r.leases.at(time.Now())-time.Second)
		r.leases.mu.Unlock()
		return Result{Outcome: Ack}
	}, -1)
	first = r.leases.hold(ds[:1]).at(0)
	r.leases.hold(ds[1:2]) // waiting in the run, older
	r.leases.hold(ds[2:3]) // waiting in the run, newest
	r.handle(ds[0], first, ackSink{})
	if ran != 1 {
		t.Fatalf("the handler ran %d times, want once", ran)
	}
	checkNoSettleFailed(t, evs)
	if n := len(evs.of(EventAcknowledged)); n != 1 {
		t.Errorf("%d acknowledged events, want 1", n)
	}
	if n := b.Depth(receiptsQueue); n != 0 {
		t.Errorf("the source holds %d messages after the acknowledgement, want 0", n)
	}
}

// An extension the broker refuses as stale (broker.ErrStaleReceipt: it no
// longer holds the message for this receipt, and may have handed it out
// again) ends the message's lease by the pump's clock: it is never
// dispatched (dropped as lapsed), though its own lease had time left. A
// message extended in the same call stays dispatchable.
func TestStaleExtensionRefusalIsNeverDispatched(t *testing.T) {
	c := staleRefuser{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: receiptsQueue, VisibilityTimeout: 30 * time.Second})}
	var evs eventList
	l := newLeases(c, time.Hour, evs.Observe)
	refused := &message.Message{Receipt: 1, Header: message.Header{MessageID: "refused"}}
	kept := &message.Message{Receipt: 2, Header: message.Header{MessageID: "kept"}}
	h := l.hold([]*message.Message{refused, kept})
	received := l.base.Add(h.b.received)
	// The first tick with no more than the schedule's grace left.
	at, _ := l.due(h.b.received)
	now := received.Add(30*time.Second - at)
	l.extendDue(t.Context(), now)
	if n := len(evs.of(EventLeaseExtendFailed)); n != 1 {
		t.Fatalf("%d extension failures reported, want 1 (the refused one)", n)
	}
	if adm := l.admit(refused, h.at(0), now); adm.kind != admitLapsed {
		t.Errorf("a message whose extension the broker refused as stale: admit = %v, want dropped as lapsed (%v)", adm.kind, admitLapsed)
	}
	if adm := l.admit(kept, h.at(1), now); adm.kind != admitDispatch {
		t.Errorf("a message extended in the same call: admit = %v, want dispatched", adm.kind)
	}
}

// staleRefuser is a memory consumer whose broker refuses, as stale, every
// extension of the message "refused", and grants the others without
// making them.
type staleRefuser struct{ *memory.Consumer }

func (staleRefuser) ExtendLeases(_ context.Context, ms []*message.Message, _ time.Duration) []error {
	errs := make([]error, len(ms))
	for i, m := range ms {
		if m.Header.MessageID == "refused" {
			errs[i] = fmt.Errorf("extend lease of %s: the broker no longer holds it: %w", m.Header.MessageID, broker.ErrStaleReceipt)
		}
	}
	return errs
}

// One extension call serves every message due at a tick, with one
// duration: the shortest any of them may have. A message near its cap
// (first lease plus maxLeaseExtension) must not be extended past it
// because another message in the call may still be extended by a whole
// lease.
func TestBatchExtensionNeverPassesAMessagesCap(t *testing.T) {
	const lease, maxExt = 10 * time.Minute, 30 * time.Minute
	c := &ceilingConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: receiptsQueue, VisibilityTimeout: lease})}
	l := newLeases(c, maxExt, func(Event) {})
	now := time.Now()
	t0 := l.at(now)
	at, _ := l.due(t0)
	// near was received maxExt + lease - 3 min ago and extended since: its
	// cap is 3 min away. fresh was received a lease ago, less the grace:
	// due for its first extension, with its whole cap ahead. Both are due.
	near := l.holdFrom([]*message.Message{{Receipt: 1, Header: message.Header{MessageID: "near"}}}, t0-(lease+maxExt-3*time.Minute), t0)
	fresh := l.holdFrom([]*message.Message{{Receipt: 2, Header: message.Header{MessageID: "fresh"}}}, t0-lease+at, t0)
	l.mu.Lock()
	l.setExpires(near.b, near.b.state(0), t0+at)
	l.mu.Unlock()
	l.extendDue(t.Context(), now)
	if len(c.calls) != 1 {
		t.Fatalf("%d extension calls, want one for both messages", len(c.calls))
	}
	for _, h := range []heldBatch{near, fresh} {
		end, limit := t0+c.calls[0], h.b.received+lease+maxExt
		if end > limit {
			t.Errorf("%s's lease extended to %s past its cap (first lease plus maxLeaseExtension)", h.b.ms[0].Header.MessageID, end-limit)
		}
	}
	if c.calls[0] != 3*time.Minute {
		t.Errorf("the call extended by %s, want 3m0s (what the message nearest its cap may still have)", c.calls[0])
	}
}
