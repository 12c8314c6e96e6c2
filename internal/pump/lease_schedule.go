package pump

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// Lease schedule (docs/adr/0005-leases.md).
const (
	// leaseExtendAt: on the half-lease schedule (a lease too short for the
	// economical one, or a wary tracker) a held message's lease is extended
	// once lease/leaseExtendAt of it is left: a handler shorter than half
	// the lease, with a message that did not wait in the buffer, never
	// costs an extension call (NFR-1, NFR-3).
	leaseExtendAt = 2
	// leaseMarginDiv: a message with less than lease/leaseMarginDiv of its
	// lease left is treated as lapsed and not dispatched (the broker may
	// hand it out again before a late tick's extension reaches it; our
	// clock starts when the receive returned, a little after the broker's,
	// or at the receive call's start where the consumer counts from there:
	// holdSince).
	leaseMarginDiv = 10
	// leaseTickDiv: the half-lease schedule is checked every
	// lease/leaseTickDiv (clamped to [minLeaseTick, maxLeaseTick]).
	leaseTickDiv = 8
	minLeaseTick = 20 * time.Millisecond
	maxLeaseTick = 5 * time.Second
	// minLeaseCall and maxLeaseCall bound a half-lease schedule's
	// extension call's deadline (lease/4 between them).
	minLeaseCall = time.Second
	maxLeaseCall = 10 * time.Second
	// The economical schedule (ADR 0005), for a lease long
	// enough to afford it: a held message is extended when only grace is
	// left, grace being two extension calls run to their deadline and two
	// ticks (a call, the tick that decides the retry, the retry), so each
	// call gains most of a lease: about one call a lease. Its call's
	// deadline is lease/graceCallDiv in [minLeaseCall, maxGraceCall] (an
	// extension call takes milliseconds on a broker that answers), its
	// tick lease/graceTickDiv up to maxGraceTick. It is used when grace is
	// at most lease/graceMaxDiv (leases from about 8 s); shorter leases
	// keep the half-lease schedule.
	graceCallDiv = 15
	maxGraceCall = 2 * time.Second
	graceTickDiv = 30
	maxGraceTick = time.Second
	graceMaxDiv  = 3
	// waryLeases: after an extension call fails (a broker that stalls or
	// refuses), the half-lease schedule, with its longer call deadline and
	// its room for retries, is used for this many leases before the
	// economical schedule is tried again.
	waryLeases = 10
	// leaseCeilingMargin is kept between the last extension and a broker's
	// ceiling (broker.LeaseCeiling): the broker counts from its hand-out, a
	// little before ours, and judges an extension when the call reaches
	// it, up to maxLeaseCall after the tick that decided it.
	leaseCeilingMargin = limits.CeilingMargin
)

// leaseSchedule returns the economical schedule for a lease of lease
// (ADR 0005): the grace left when a held message is extended, the
// extension call's deadline and the tick; all 0 when the lease is too
// short for grace to be at most lease/graceMaxDiv, so that every
// extension is at half a lease.
func leaseSchedule(lease time.Duration) (grace, call, tick time.Duration) {
	call = min(max(lease/graceCallDiv, minLeaseCall), maxGraceCall)
	tick = min(max(lease/graceTickDiv, minLeaseTick), maxGraceTick)
	grace = 2*call + 2*tick
	if grace > lease/graceMaxDiv {
		return 0, 0, 0
	}
	return grace, call, tick
}

// tick returns how often the schedule is checked.
func (l *leases) tick() time.Duration {
	if l.every > 0 {
		return l.every
	}
	return min(max(l.lease/leaseTickDiv, minLeaseTick), maxLeaseTick)
}

// due returns, for a tick at t, how much of its lease a held message has
// left when it is extended and the deadline of that call: the economical
// schedule's grace and call, or, for a lease too short for it or while
// wary of a broker whose extension call failed, half a lease and a
// quarter of one (between minLeaseCall and maxLeaseCall).
func (l *leases) due(t time.Duration) (left, call time.Duration) {
	if l.grace > 0 && t >= l.waryUntil {
		return l.grace, l.graceCall
	}
	return l.lease / leaseExtendAt, min(max(l.lease/4, minLeaseCall), maxLeaseCall)
}

// ErrExtendedAfterLapse is the Err of an EventLeaseExtendFailed for an
// extension the broker answered with success only after the lease it
// extends had lapsed by the pump's lease clock (which starts after the
// broker's): the call may have reached the broker after the lease ended,
// when the broker may already have handed the message out again, and a
// broker that does not report a superseded receipt (Pub/Sub outside
// exactly-once delivery) answers such a call with success all the same.
// The lease is treated as lapsed: the message is dropped before dispatch
// and its settle is late (docs/adr/0005-leases.md decisions 5 and 6). It
// wraps broker.ErrStaleReceipt.
var ErrExtendedAfterLapse = fmt.Errorf("%w: the lease extension was answered after the lease it extends had lapsed by the pump's lease clock; the broker may have handed the message out again", broker.ErrStaleReceipt)

// run extends due leases every tick until stop is closed. ctx bounds the
// extension calls (each gets its own deadline too).
func (l *leases) run(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(l.tick())
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			l.extendDue(ctx, now)
			l.watch(now)
		}
	}
}

// extendDue extends, in one ExtendLeases call, every held message that is
// due (leases.due: the grace of the economical schedule or half a lease
// left), up to the cap: a message's lease
// never runs past its first lease plus maxExt. A message that reaches the
// cap is extended no more (EventLeaseCapped); its lease lapses and the
// broker redelivers it. A message whose lease lapsed by the pump's clock
// (which starts after the broker's: leases.holdSince) is not extended, and
// an extension answered only once the lease it extends had so lapsed does
// not count (ErrExtendedAfterLapse): either stays lapsed, so that it is
// never dispatched and its settle is late, whatever the broker answered. It
// runs in one goroutine only (run).
func (l *leases) extendDue(ctx context.Context, now time.Time) {
	if l.maxExt <= 0 {
		return
	}
	began := time.Now() // the answer's time is t plus the time since
	var due []leaseRef
	var ms []*message.Message // due[i]'s message is ms[i]
	var was []uint64          // due[i]'s word before the call, restored after it
	var lefts []time.Duration // due[i]'s lease left at the tick, for the events
	var d time.Duration
	t := l.at(now)
	at, call := l.due(t)
	l.mu.Lock()
	l.sweep()
	for b := l.batches; b != nil; b = b.next {
		for i := range b.n {
			st := b.state(i)
			ref := b.at(i)
			w := st.word.Load()
			absorbed := w == ref.word(leaseAbsorbed)
			expires := l.expires(b, st)
			if !(ref.held(w) || absorbed) || expires-t > at {
				continue // ended, at the cap or not due
			}
			if expires <= t {
				// Lapsed by the pump's clock, which starts after the
				// broker's (every call failed while it lasted, or the
				// tick came late): the broker may have handed the message
				// out again, and Pub/Sub answers an extension of a
				// superseded ack id with success all the same. It stays
				// lapsed: dropped before dispatch, its settle late.
				continue
			}
			m := b.ms[i]
			// The longest this message may still be held: up to its first
			// lease's end plus the cap.
			left := b.received + l.lease + l.maxExt - t
			if left <= at {
				if !absorbed && st.word.CompareAndSwap(w, ref.word(leaseCapped)) {
					l.emit(Event{Kind: EventLeaseCapped, Message: m, DeliveryCount: m.Header.HandledCount, Delay: t - b.received, Ceiling: l.ceiling})
				}
				continue
			}
			if !st.word.CompareAndSwap(w, ref.word(leaseExtending)) {
				continue // its settle began
			}
			due = append(due, ref)
			ms = append(ms, m)
			was = append(was, w)
			lefts = append(lefts, expires-t)
			ext := min(l.lease, left)
			if d == 0 || ext < d {
				d = ext // one call for the batch: the shortest extension any of them may have
			}
		}
	}
	l.mu.Unlock()
	if len(due) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, call)
	// The new leases are counted from the tick, a little before the call:
	// never later than the broker's own count.
	start := t
	sent := time.Now()
	errs := l.ext.ExtendLeases(cctx, ms, d)
	took := time.Since(sent)
	answered := t + time.Since(began) // by the pump's clock
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.extended.Broadcast()
	for i, ref := range due {
		st := ref.state()
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		m := ms[i]
		if err == nil && answered >= t+lefts[i] {
			// Answered only once the lease it extends had lapsed by the
			// pump's clock: the call may have reached the broker after
			// the lease, and the success says nothing (Pub/Sub's outside
			// exactly-once delivery). The lease is not counted as kept.
			err = ErrExtendedAfterLapse
		}
		switch {
		case err == nil:
			l.setExpires(ref.b, st, start+d)
			l.emit(Event{Kind: EventLeaseExtended, Message: m, DeliveryCount: m.Header.HandledCount, Delay: d, Since: sent, Duration: took, Left: lefts[i]})
		case errors.Is(err, broker.ErrStaleReceipt):
			// The broker no longer holds it for us: never dispatch it.
			l.setExpires(ref.b, st, start)
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err, Since: sent, Duration: took, Left: lefts[i]})
		default:
			// Left as it is: the next tick tries again while the lease
			// lasts; once it lapses the message is dropped, not dispatched,
			// and the broker redelivers it. The broker stalled or refused:
			// the next waryLeases leases use the half-lease schedule.
			l.waryUntil = t + waryLeases*l.lease
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err, Since: sent, Duration: took, Left: lefts[i]})
		}
		if was[i] == ref.word(leaseAbsorbed) {
			st.word.Store(was[i])
		} else {
			st.word.Store(heldWord(ref.gen))
		}
	}
}
