package pump

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// DefaultMaxLeaseExtension is how long past its first lease the pump keeps
// extending a held message's lease when Options.MaxLeaseExtension is 0 (the
// Pub/Sub client's MaxExtension default).
const DefaultMaxLeaseExtension = time.Hour

// Lease schedule (docs/adr/0005-leases.md).
const (
	// leaseExtendAt is the fraction of a lease after which a held message's
	// lease is extended: a handler shorter than half the lease, with a
	// message that did not wait in the buffer, never costs an extension call
	// (NFR-1, NFR-3).
	leaseExtendAt = 2
	// leaseMarginDiv: a message with less than lease/leaseMarginDiv of its
	// lease left is treated as lapsed and not dispatched (the broker may
	// already be handing it out again; our clock started when Receive
	// returned, a little after the broker's).
	leaseMarginDiv = 10
	// leaseTickDiv: the schedule is checked every lease/leaseTickDiv
	// (clamped to [minLeaseTick, maxLeaseTick]).
	leaseTickDiv = 8
	minLeaseTick = 20 * time.Millisecond
	maxLeaseTick = 5 * time.Second
	// minLeaseCall and maxLeaseCall bound an extension call's deadline
	// (lease/4 between them).
	minLeaseCall = time.Second
	maxLeaseCall = 10 * time.Second
)

// leases tracks the messages a run holds, from the Receive that returned
// them until their settle begins, and keeps their leases alive with the
// consumer's broker.LeaseExtender. A nil *leases (the consumer offers no
// lease, or Lease reports 0) does nothing.
//
// Tracking is on every message's path, so its per-message cost is an
// atomic load and one compare-and-swap:
//   - each Receive's batch is one allocation (its states inline), linked
//     into the tracker under mu once, with one reading of the monotonic
//     clock;
//   - a message's leaseRef travels with it to its worker;
//   - a batch whose messages all ended is unlinked by a later hold (or the
//     schedule's tick), not by its last message, so that ending a message
//     takes no lock and no second atomic;
//   - mu is taken per message only while an extension call for it is
//     under way.
//
// Issue 12 asks for at most 3% of throughput; docs/performance.md.
type leases struct {
	ext    broker.LeaseExtender
	lease  time.Duration
	maxExt time.Duration // <= 0: never extend
	emit   func(Event)
	base   time.Time // the origin of leaseState's offsets (monotonic)

	mu sync.Mutex
	// extended is signalled (on mu) when an extension call ends, for a
	// message's end or lapse check waiting on it.
	extended sync.Cond
	// batches lists, newest first, every batch that may still have a
	// message tracked; oldest is its other end. The list is linked
	// through the batches themselves: no map hashing and no allocation per
	// receive, as a map or container/list would cost. A batch whose
	// messages all ended stays listed until a sweep unlinks it.
	batches, oldest *leaseBatch
	// listed is how many batches are listed. sweepAt is the count at which
	// hold sweeps the whole list, not just its oldest end, so that a
	// message held long at the oldest end cannot keep the ended batches
	// behind it listed. The threshold doubles with what survives a sweep,
	// so sweeping costs O(1) per hold, amortised.
	listed, sweepAt int
}

// leaseInline is how many states a batch holds without a second
// allocation: Brighter's maximum bufferSize.
const leaseInline = 10

// minSweepAt is the smallest listed count at which hold sweeps the whole
// list.
const minSweepAt = 64

// leaseBatch is the lease tracking of one Receive's messages.
type leaseBatch struct {
	ms       []*message.Message // the batch Receive returned (not modified)
	states   []leaseState       // ms[i]'s is states[i]; inline's when it fits
	received time.Duration      // when Receive returned it (an offset from leases.base)
	// prev (the newer neighbour) and next link the batches leases lists
	// (under leases.mu).
	prev, next *leaseBatch
	inline     [leaseInline]leaseState
}

// done reports whether every message of b is leaseEnded, so that b may be
// unlinked.
func (b *leaseBatch) done() bool {
	for i := range b.states {
		if b.states[i].phase.Load() != leaseEnded {
			return false
		}
	}
	return true
}

// at returns the reference to the batch's i-th message's lease; the zero
// leaseRef (no lease tracked) when b is nil.
func (b *leaseBatch) at(i int) leaseRef {
	if b == nil {
		return leaseRef{}
	}
	return leaseRef{b: b, i: i}
}

// leaseRef names one message's lease tracking: the i-th of batch b. The
// zero leaseRef tracks nothing.
type leaseRef struct {
	b *leaseBatch
	i int
}

// state is the referenced state, nil for the zero leaseRef.
func (r leaseRef) state() *leaseState {
	if r.b == nil {
		return nil
	}
	return &r.b.states[r.i]
}

// Phases of a leaseState.
const (
	leaseHeld      int32 = iota // tracked; its lease may be extended
	leaseExtending              // an extension call for it is under way
	leaseEnded                  // its settle began, it lapsed, or it was never tracked
)

// leaseState is one held message's lease. Its zero value is a message
// held on its first lease, so a batch's slab needs no per-message write.
//
// It holds no pointer, so a batch's slab costs the garbage collector no
// scan, and it is 16 bytes: what every message carries is kept small.
type leaseState struct {
	// phase: leaseHeld, leaseExtending or leaseEnded. An end or lapse
	// check that finds leaseExtending waits for the call (on
	// leases.extended) so that no extension lands after a settle began (an
	// extension after a requeue would override the requeue delay).
	phase  atomic.Int32
	capped bool // the extension cap was reached; extendDue's own
	// moved is how far the current lease's end lies past the first
	// lease's (its batch's received + lease), a time.Duration: 0 until an
	// extension, so hold stores nothing per message.
	moved atomic.Int64
}

// expires is the end of st's current lease (an offset from leases.base);
// st is b's.
func (l *leases) expires(b *leaseBatch, st *leaseState) time.Duration {
	return b.received + l.lease + time.Duration(st.moved.Load())
}

// setExpires makes t the end of st's current lease; st is b's.
func (l *leases) setExpires(b *leaseBatch, st *leaseState, t time.Duration) {
	st.moved.Store(int64(t - b.received - l.lease))
}

// newLeases returns the tracker for c, or nil when c lends no lease.
func newLeases(c broker.Consumer, maxExt time.Duration, emit func(Event)) *leases {
	ext, ok := c.(broker.LeaseExtender)
	if !ok {
		return nil
	}
	lease := ext.Lease()
	if lease <= 0 {
		return nil
	}
	l := &leases{ext: ext, lease: lease, maxExt: maxExt, emit: emit, base: time.Now(), sweepAt: minSweepAt}
	l.extended.L = &l.mu
	return l
}

// at is t as an offset from l.base.
func (l *leases) at(t time.Time) time.Duration { return t.Sub(l.base) }

// hold starts tracking a batch Receive has just returned, and returns it
// (nil when l is nil): the batch's i-th message's state is its at(i). The
// lease's clock starts now, read from the monotonic clock only (time.Now
// reads the wall clock too, and costs twice as much).
func (l *leases) hold(ms []*message.Message) *leaseBatch {
	if l == nil {
		return nil
	}
	b := &leaseBatch{ms: ms, received: time.Since(l.base)}
	if len(ms) <= leaseInline {
		b.states = b.inline[:len(ms)]
	} else {
		b.states = make([]leaseState, len(ms))
	}
	// A state starts leaseHeld (0) with its first lease (moved 0): only a
	// message that lends no lease is written.
	live := false
	for i, m := range ms {
		if m.Receipt == nil || m.Header.MessageType == message.MTQuit {
			b.states[i].phase.Store(leaseEnded)
		} else {
			live = true
		}
	}
	l.mu.Lock()
	// A run handles its batches in order, so the oldest end first: unlink
	// those that did.
	for l.oldest != nil && l.oldest.done() {
		l.unlink(l.oldest)
	}
	if l.listed >= l.sweepAt {
		l.sweep()
	}
	if live {
		b.next = l.batches
		if b.next != nil {
			b.next.prev = b
		} else {
			l.oldest = b
		}
		l.batches = b
		l.listed++
	}
	l.mu.Unlock()
	return b
}

// unlink takes b out of l's list; l.mu is held.
func (l *leases) unlink(b *leaseBatch) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.batches = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		l.oldest = b.prev
	}
	b.prev, b.next = nil, nil
	l.listed--
}

// sweep unlinks every listed batch whose messages all ended, and sets the
// next sweep's threshold to twice what is left; l.mu is held.
func (l *leases) sweep() {
	for b := l.batches; b != nil; {
		next := b.next
		if b.done() {
			l.unlink(b)
		}
		b = next
	}
	l.sweepAt = max(minSweepAt, 2*l.listed)
}

// waitExtension waits until no extension call for st is under way.
func (l *leases) waitExtension(st *leaseState) {
	l.mu.Lock()
	for st.phase.Load() == leaseExtending {
		l.extended.Wait()
	}
	l.mu.Unlock()
}

// lapsed reports whether st's lease has run out (or is about to) so that
// its message must not be dispatched; a lapsed message is no longer
// tracked. The zero ref (no lease tracked) never lapses.
func (l *leases) lapsed(ref leaseRef, now time.Time) bool {
	st := ref.state()
	if l == nil || st == nil {
		return false
	}
	t := l.at(now)
	for {
		if t < l.expires(ref.b, st)-l.lease/leaseMarginDiv {
			return false
		}
		switch st.phase.Load() {
		case leaseEnded:
			return false
		case leaseExtending:
			l.waitExtension(st) // then look again at the lease it left
		default:
			if st.phase.CompareAndSwap(leaseHeld, leaseEnded) {
				return true
			}
		}
	}
}

// end stops tracking ref's message before it is settled, waiting for an
// extension call in progress for it. It may be called more than once, and
// with the zero ref.
func (l *leases) end(ref leaseRef) {
	st := ref.state()
	if l == nil || st == nil {
		return
	}
	for {
		if st.phase.CompareAndSwap(leaseHeld, leaseEnded) {
			return
		}
		if st.phase.Load() == leaseEnded {
			return
		}
		l.waitExtension(st)
	}
}

// tick returns how often the schedule is checked.
func (l *leases) tick() time.Duration {
	return min(max(l.lease/leaseTickDiv, minLeaseTick), maxLeaseTick)
}

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
		}
	}
}

// extendDue extends, in one ExtendLeases call, every held message with no
// more than half a lease left, up to the cap: a message's lease
// never runs past its first lease plus maxExt. A message that reaches the
// cap is extended no more (EventLeaseCapped); its lease lapses and the
// broker redelivers it. It runs in one goroutine only (run).
func (l *leases) extendDue(ctx context.Context, now time.Time) {
	if l.maxExt <= 0 {
		return
	}
	var due []leaseRef
	var ms []*message.Message // due[i]'s message is ms[i]
	var d time.Duration
	t := l.at(now)
	l.mu.Lock()
	l.sweep()
	for b := l.batches; b != nil; b = b.next {
		for i := range b.states {
			st := &b.states[i]
			if st.capped || st.phase.Load() != leaseHeld || l.expires(b, st)-t > l.lease/leaseExtendAt {
				continue
			}
			m := b.ms[i]
			// The longest this message may still be held: up to its first
			// lease's end plus the cap.
			left := b.received + l.lease + l.maxExt - t
			if left <= l.lease/leaseExtendAt {
				st.capped = true
				l.emit(Event{Kind: EventLeaseCapped, Message: m, DeliveryCount: m.Header.HandledCount, Delay: t - b.received})
				continue
			}
			if !st.phase.CompareAndSwap(leaseHeld, leaseExtending) {
				continue // its settle began
			}
			due = append(due, leaseRef{b: b, i: i})
			ms = append(ms, m)
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
	cctx, cancel := context.WithTimeout(ctx, min(max(l.lease/4, minLeaseCall), maxLeaseCall))
	start := l.at(time.Now())
	errs := l.ext.ExtendLeases(cctx, ms, d)
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
		switch {
		case err == nil:
			l.setExpires(ref.b, st, start+d)
			l.emit(Event{Kind: EventLeaseExtended, Message: m, DeliveryCount: m.Header.HandledCount, Delay: d})
		case errors.Is(err, broker.ErrStaleReceipt):
			// The broker no longer holds it for us: never dispatch it.
			l.setExpires(ref.b, st, start)
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err})
		default:
			// Left as it is: the next tick tries again while the lease
			// lasts; once it lapses the message is dropped, not dispatched,
			// and the broker redelivers it.
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err})
		}
		st.phase.Store(leaseHeld)
	}
}
