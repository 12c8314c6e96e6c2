package pump

import (
	"errors"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// ErrHeldBack is the Err of the EventDeferred emitted for a message the pump
// released without handling because an earlier message of its partition key
// (Pub/Sub ordering key, SQS FIFO message group, RocketMQ message group)
// was released unsettled after it had arrived: handling it would run its
// handler before the earlier message settles
// (docs/adr/0006-ordered-channels-under-deferral.md). It is released at once,
// uncounted and unjudged (no budget applies: no handler ran), with the delay
// the earlier message has left before it is back, so that the broker hands
// it out again after that message.
var ErrHeldBack = errors.New("an earlier message of its partition key was released unsettled; released unhandled to keep the key's order")

// keyHolds records, per partition key, when a message of the key was last
// released unsettled (deferred, released after a failed routing, a failed
// settle, a lapsed lease). A message of the key that arrived at or before
// that moment was handed out by the broker before the earlier message went
// back, so an ordered broker will hand it out again after that message: it
// must not be handled now. A message that arrived later comes after the
// earlier message's redelivery and is handled; its admission ends the key's
// entry. The table holds only what the pump holds now (no state across
// restarts or replicas: ARCHITECTURE.md#scale); entries older than any held
// message can be (maxAge) are swept when the table grows.
type keyHolds struct {
	maxAge time.Duration

	mu sync.Mutex
	at map[string]keyHold
	// acking holds, per key, the batched acknowledgement of the key's
	// message that the settler has not sent yet (Proactor): the next
	// message of the key waits for it (awaitAck), so that a failed batch
	// acknowledgement holds the key back as a failed single one does.
	acking map[string]chan struct{}
}

// keyHold is one key's mark: when a message of the key went back unsettled
// and when it is due back on the broker (its requeue or release delay).
type keyHold struct {
	at, back time.Time
}

// keyHoldsSweepAt is the table size at which hold marks older than maxAge
// are swept.
const keyHoldsSweepAt = 4096

func newKeyHolds(maxAge time.Duration) *keyHolds {
	return &keyHolds{maxAge: maxAge, at: map[string]keyHold{}, acking: map[string]chan struct{}{}}
}

// ackPending records that m's batched acknowledgement is on its way to a
// settler; the returned channel (nil for a keyless message, which waits
// for nothing) is closed by ackSettled. At most one is pending per key: the
// key's next message waits for it in awaitAck before it is admitted.
func (h *keyHolds) ackPending(m *message.Message) chan struct{} {
	k := m.Header.PartitionKey
	if k == "" {
		return nil
	}
	ch := make(chan struct{})
	h.mu.Lock()
	h.acking[k] = ch
	h.mu.Unlock()
	return ch
}

// ackSettled ends m's pending batched acknowledgement (done, from
// ackPending; nil: none). When the acknowledgement failed (err not nil),
// m's key is first held back from before, the moment the batch call began
// (see run.unsettled), as a failed single acknowledgement holds it.
func (h *keyHolds) ackSettled(m *message.Message, done chan struct{}, before time.Time, err error) {
	if err != nil {
		h.hold(m, before, 0)
	}
	if done == nil {
		return
	}
	h.mu.Lock()
	if h.acking[m.Header.PartitionKey] == done {
		delete(h.acking, m.Header.PartitionKey)
	}
	h.mu.Unlock()
	close(done)
}

// awaitAck waits until the batched acknowledgement of an earlier message
// of m's key, if one is pending, has been sent: its outcome decides
// whether m is held back. It never waits for ever: the batcher
// sends a keyed acknowledgement within ackBatchWait plus one broker
// call's deadline.
func (h *keyHolds) awaitAck(m *message.Message) {
	k := m.Header.PartitionKey
	if k == "" {
		return
	}
	h.mu.Lock()
	ch := h.acking[k]
	h.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// hold marks m's key as released unsettled at now, due back on the broker
// after delay; keyless messages are never held. A mark already due back
// later keeps its later time.
func (h *keyHolds) hold(m *message.Message, now time.Time, delay time.Duration) {
	k := m.Header.PartitionKey
	if k == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	back := now.Add(max(delay, 0))
	if old, ok := h.at[k]; ok && old.back.After(back) {
		back = old.back
	}
	h.at[k] = keyHold{at: now, back: back}
	if len(h.at) >= keyHoldsSweepAt {
		for key, t := range h.at {
			if now.Sub(t.at) > h.maxAge {
				delete(h.at, key)
			}
		}
	}
}

// heldBack reports whether m must be released unhandled, and how long the
// earlier message has left before it is back: its key was released
// unsettled at or after m arrived. A keyed message that arrived later
// clears the key's mark.
func (h *keyHolds) heldBack(m *message.Message, now time.Time) (bool, time.Duration) {
	k := m.Header.PartitionKey
	if k == "" {
		return false, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.at[k]
	if !ok {
		return false, 0
	}
	if !m.ReceivedAt.After(t.at) {
		return true, max(t.back.Sub(now), 0)
	}
	delete(h.at, k)
	return false, 0
}

// holdBack releases m, which heldBack refused, without handling it, for
// delay (what the earlier message of its key has left before it is back),
// and marks its key again (a message of the key that arrived meanwhile is
// held back too). It reports the release as EventDeferred with ErrHeldBack.
func (r *run) holdBack(m *message.Message, st leaseRef, delay time.Duration) {
	p := r.p
	if f, _, _ := r.leases.settling(m, st, time.Now(), false); f != nil {
		m.Receipt = f.Receipt // the freshest receipt
	}
	before := time.Now() // see run.unsettled
	ctx, cancel := r.call()
	err := p.consumer.Requeue(ctx, m, delay)
	cancel()
	p.settled(err)
	r.holds.hold(m, before, delay)
	if err != nil {
		p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Err: err})
		return
	}
	p.emit(Event{Kind: EventDeferred, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Delay: delay, Err: ErrHeldBack})
}

// settleEnd is what a settle left of a message: gone from the broker
// (acknowledged, routed, discarded), or still there and due back after
// delay (0 when the broker decides: a failed call leaves it to its lease).
type settleEnd struct {
	gone  bool
	delay time.Duration
	// requeued: a requeue call answered success (the message deferred).
	requeued bool
}

// unsettled marks m's partition key held back (keyHolds) when m is still
// on the broker after its settle: deferred, released after a failed
// routing, or a settle call that failed. The messages of its key that
// arrived before the settle began (before: a message the broker hands out
// while the call is under way may be m itself, back already) are then
// released unhandled.
func (r *run) unsettled(m *message.Message, before time.Time, e settleEnd) {
	if !e.gone {
		r.holds.hold(m, before, e.delay)
	}
}
