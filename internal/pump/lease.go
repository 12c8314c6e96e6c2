package pump

import (
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

// leases tracks the messages a run holds, from the Receive that returned
// them until their settle begins, and keeps their leases alive with the
// consumer's broker.LeaseExtender; a broker.ClientLeaser's (the Pub/Sub
// stream) it tracks without extending. A nil *leases (the consumer offers
// no lease, or Lease reports 0) does nothing.
//
// Tracking is on every message's path, so its per-message cost is an
// atomic load and one compare-and-swap:
//   - each Receive's batch is linked into the tracker under mu once, with
//     one reading of the monotonic clock; a batch of up to leaseInline
//     messages keeps its states inline, and is reused once its messages
//     all ended, so that a receive allocates nothing;
//   - a message's leaseRef travels with it to its worker;
//   - a batch whose messages all ended is unlinked by a later hold (or the
//     schedule's tick), not by its last message, so that ending a message
//     takes no lock and no second atomic;
//   - mu is taken per message only while an extension call for it is
//     under way.
//
// Its cost is measured against the pump's throughput: docs/performance.md.
type leases struct {
	ext broker.LeaseExtender
	// client is set instead of ext for a consumer whose client keeps the
	// leases itself (broker.ClientLeaser, the Pub/Sub stream): nothing is
	// extended, a message's lease runs from its delivery to the client,
	// and one whose lease ran out before dispatch is still dispatched (the
	// client delivered it, and the broker may still hold it for up to a
	// deadline); the tracking serves redelivery.go only.
	client broker.ClientLeaser
	// fromCall: the consumer's leases run from the receive call's start
	// (broker.LeaseFromReceiveStart, RocketMQ), so a batch's are counted
	// from there; otherwise from the receive's return (holdSince).
	fromCall bool
	lease    time.Duration
	maxExt   time.Duration // <= 0: never extend
	// ceiling is the broker's ceiling on holding a message
	// (broker.LeaseCeiling) when it, not maxLeaseExtension, bounds maxExt;
	// 0 otherwise. It is reported on EventLeaseCapped.
	ceiling time.Duration
	emit    func(Event)
	base    time.Time // the origin of leaseState's offsets (monotonic)
	// grace is how much of its lease is left when the economical schedule
	// extends a held message, graceCall that schedule's call deadline and
	// every its tick; all 0 when the lease is too short for it (every
	// extension is then at half a lease: leaseSchedule).
	grace, graceCall, every time.Duration
	// waryUntil is the offset from base until which the half-lease
	// schedule is used because an extension call failed (waryLeases).
	// Only extendDue, in run's goroutine, reads or writes it.
	waryUntil time.Duration

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
	// free holds up to maxFree unlinked batches (linked through next) for
	// hold to reuse; nfree is how many.
	free  *leaseBatch
	nfree int

	// Redeliveries of a held message (redelivery.go): a cache
	// whose loss changes nothing but how often a message is handled again
	// after its lease lapsed (at-least-once either way), bounded by what
	// the run holds and lateRing.
	redeliveries
}

// leaseInline is how many states a batch holds without a second
// allocation: Brighter's maximum bufferSize. Only such a batch is reused.
const leaseInline = 10

// minSweepAt is the smallest listed count at which hold sweeps the whole
// list.
const minSweepAt = 64

// maxFree is how many unlinked batches the tracker keeps for reuse: a
// run with up to that many batches in flight at once (noOfPerformers
// receives, and in the Proactor what its workers still hold) allocates
// none once steady; a larger one allocates for the rest, as it did before
// reuse. Few enough to hold little memory (256 bytes each).
const maxFree = 64

// leaseBatch is the lease tracking of one Receive's messages. A batch is
// reused for a later Receive once its messages all ended; gen tells its
// uses apart, so that a leaseRef of an earlier use (an end called again)
// cannot touch a later one's states.
type leaseBatch struct {
	ms  []*message.Message // the batch Receive returned (not modified); under leases.mu
	n   int                // len(ms): how many states are in use; under leases.mu
	gen uint64             // this use's generation, from 1; see leaseState
	// received is when its messages' first leases started (an offset
	// from leases.base): for a broker.LeaseExtender's batch, when the
	// Receive that returned it began (holdSince); for a
	// broker.ClientLeaser's, when the client got its earliest message.
	received time.Duration
	started  time.Duration // when the Receive that returned it began (an offset from leases.base)
	// prev (the newer neighbour) and next link the batches leases lists
	// (under leases.mu); next also links the free batches.
	prev, next *leaseBatch
	// extended is set (under leases.mu) when any state's lease was moved,
	// so that a reuse knows it must reset them.
	extended bool
	inline   [leaseInline]leaseState
	extra    []leaseState // states leaseInline and on; set before the batch is shared
}

// state is the batch's i-th state.
func (b *leaseBatch) state(i int) *leaseState {
	if i < leaseInline {
		return &b.inline[i]
	}
	return &b.extra[i-leaseInline]
}

// done reports whether every message of b is leaseEnded in its current
// use, so that b may be unlinked (and reused); leases.mu is held.
func (b *leaseBatch) done() bool {
	ended := b.word(leaseEnded)
	for i := range b.n {
		if b.state(i).word.Load() != ended {
			return false
		}
	}
	return true
}

// word is the state word of phase ph (leaseExtending, leaseCapped or
// leaseEnded) in b's current use; leases.mu is held, or the caller holds a
// reference of that use.
func (b *leaseBatch) word(ph uint64) uint64 { return genWord(b.gen, ph) }

// at returns the reference to the batch's i-th message's lease in its
// current use; leases.mu is held.
func (b *leaseBatch) at(i int) leaseRef { return leaseRef{b: b, gen: b.gen, i: i} }

// heldBatch is one use of a batch, as hold returns it: the references it
// hands out name that use even once the batch is reused (its gen is read
// here, not from the batch, which a later hold may be reusing). The zero
// heldBatch tracks nothing.
type heldBatch struct {
	b   *leaseBatch
	gen uint64
}

// at returns the reference to the batch's i-th message's lease; the zero
// leaseRef (no lease tracked) for the zero heldBatch.
func (h heldBatch) at(i int) leaseRef {
	if h.b == nil {
		return leaseRef{}
	}
	return leaseRef{b: h.b, gen: h.gen, i: i}
}

// leaseRef names one message's lease tracking: the i-th of batch b in its
// use gen. The zero leaseRef tracks nothing.
type leaseRef struct {
	b   *leaseBatch
	gen uint64
	i   int
}

// state is the referenced state, nil for the zero leaseRef.
func (r leaseRef) state() *leaseState {
	if r.b == nil {
		return nil
	}
	return r.b.state(r.i)
}

// word is the state word of phase ph in r's use.
func (r leaseRef) word(ph uint64) uint64 { return genWord(r.gen, ph) }

// held reports whether w, a state word, is held in r's use: it was written
// in no later use than the one before (the zero word, or the word an
// earlier use ended with), or it is heldWord(r.gen).
func (r leaseRef) held(w uint64) bool { return w < genWord(r.gen, 0) }

// Phases of a leaseState in one use of its batch (the low bits of its
// word). Held is not among them: a state is held in use g while its
// word is below genWord(g, 0), so a batch reused for use g+1 needs no
// write per state to make them all held again; heldWord(g) is the word an
// extension leaves.
const (
	leaseExtending uint64 = iota // an extension call for it is under way
	leaseCapped                  // held, the extension cap reached: extended no more
	leaseEnded                   // its settle began, it lapsed, or it was never tracked
	// leaseAbsorbed: a later delivery of a message another tracked
	// delivery holds: not dispatched; its lease is kept, and
	// the holder settles with its receipt (redelivery.go).
	leaseAbsorbed
	leasePhaseBits = 2
)

// genWord is the state word of phase ph in use gen.
func genWord(gen, ph uint64) uint64 { return gen<<leasePhaseBits | ph }

// heldWord is a word that is held in use gen.
func heldWord(gen uint64) uint64 { return genWord(gen, 0) - 1 }

// leaseState is one held message's lease. Its zero value is a message
// held on its first lease (in any use from 1), so a new batch's states
// need no per-message write, and neither do a reused batch's.
//
// It holds no pointer, so a batch's states cost the garbage collector no
// scan, and it is 16 bytes: what every message carries is kept small.
type leaseState struct {
	// word is the state's use and phase (genWord): held below
	// genWord(gen, 0), else leaseExtending, leaseCapped or leaseEnded. An
	// end or lapse check that finds leaseExtending waits for the call (on
	// leases.extended) so that no extension lands after a settle began (an
	// extension after a requeue would override the requeue delay).
	word atomic.Uint64
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

// setExpires makes t the end of st's current lease; st is b's, and
// leases.mu is held.
func (l *leases) setExpires(b *leaseBatch, st *leaseState, t time.Duration) {
	b.extended = true
	st.moved.Store(int64(t - b.received - l.lease))
}

// newLeases returns the tracker for c, or nil when c lends no lease. A
// broker.ClientLeaser's tracker extends nothing (maxExt is ignored). When
// c's broker has a ceiling (broker.LeaseCeiling) that the first lease plus
// maxExt would pass, maxExt is cut to stop leaseCeilingMargin short of it.
func newLeases(c broker.Consumer, maxExt time.Duration, emit func(Event)) *leases {
	ext, ok := c.(broker.LeaseExtender)
	if !ok {
		cl, ok := c.(broker.ClientLeaser)
		if !ok || cl.ClientLease() <= 0 {
			return nil
		}
		l := &leases{client: cl, lease: cl.ClientLease(), emit: emit, base: time.Now(), sweepAt: minSweepAt}
		l.extended.L = &l.mu
		l.lateEnded.L = &l.mu
		return l
	}
	lease := ext.Lease()
	if lease <= 0 {
		return nil
	}
	var ceiling time.Duration
	if lc, ok := c.(broker.LeaseCeiling); ok && lc.MaxHold() > 0 && maxExt > 0 {
		if most := lc.MaxHold() - leaseCeilingMargin - lease; maxExt > most {
			maxExt, ceiling = max(most, 0), lc.MaxHold()
		}
	}
	l := &leases{ext: ext, lease: lease, maxExt: maxExt, ceiling: ceiling, emit: emit, base: time.Now(), sweepAt: minSweepAt}
	if fc, ok := c.(broker.LeaseFromReceiveStart); ok {
		l.fromCall = fc.LeaseFromReceiveStart()
	}
	l.grace, l.graceCall, l.every = leaseSchedule(lease)
	l.extended.L = &l.mu
	l.lateEnded.L = &l.mu
	return l
}

// at is t as an offset from l.base.
func (l *leases) at(t time.Time) time.Duration { return t.Sub(l.base) }

// hold starts tracking a batch Receive has just returned, and returns it
// (the zero heldBatch when l is nil): the batch's i-th message's state is
// its at(i). The
// lease's clock starts now, read from the monotonic clock only (time.Now
// reads the wall clock too, and costs twice as much).
func (l *leases) hold(ms []*message.Message) heldBatch {
	if l == nil {
		return heldBatch{}
	}
	now := time.Since(l.base)
	return l.holdFrom(ms, now, now)
}

// holdSince is hold for a batch whose Receive began at started.
//
// Every lease clock starts where the broker's (or the consumer's) does
// (ADR 0005, "where each lease clock starts"): for a consumer whose leases
// run from the receive call's start (broker.LeaseFromReceiveStart:
// RocketMQ, whose consumer refuses an extension past the call's start plus
// the invisible duration as a stale receipt), the batch's first leases are
// counted from started; counted from the Receive's return, a message handed
// out seconds into a long poll was due for extension only after that
// deadline, and its lease lapsed while its handler ran. Other brokers hand
// a message out when the long poll returns it (SQS, Pub/Sub pull), and the
// clock starts at the return: counting from the call's start there would
// leave a message handed out late in a poll a lease shorter by up to the
// poll, and one no longer than the poll would be dropped as lapsed again
// and again.
//
// started is also what redelivery.go compares a late settle's end with: a
// later delivery of a message whose earlier delivery's settle ended after
// started may have been handed out before that settle. A
// broker.ClientLeaser's batch was handed out, and its leases started,
// when the client received its earliest message (DeliveredAt), which may
// be long before the Receive: both offsets are that.
func (l *leases) holdSince(ms []*message.Message, started time.Time) heldBatch {
	if l == nil {
		return heldBatch{}
	}
	if l.client != nil {
		from := time.Since(l.base)
		for _, m := range ms {
			if at := l.client.DeliveredAt(m); !at.IsZero() {
				from = min(from, l.at(at))
			}
		}
		return l.holdFrom(ms, from, from)
	}
	if l.fromCall {
		return l.holdFrom(ms, l.at(started), l.at(started))
	}
	return l.holdFrom(ms, time.Since(l.base), l.at(started))
}

// holdFrom is hold with when its lease started (received) and when the
// Receive began (started) as offsets from l.base.
func (l *leases) holdFrom(ms []*message.Message, received, started time.Duration) heldBatch {
	l.mu.Lock()
	// A run handles its batches in order, so the oldest end first: unlink
	// those that did.
	for l.oldest != nil && l.oldest.done() {
		l.unlink(l.oldest)
	}
	if l.listed >= l.sweepAt {
		l.sweep()
	}
	var b *leaseBatch
	if l.free != nil && len(ms) <= leaseInline {
		b = l.free
		l.free, b.next = b.next, nil
		l.nfree--
		b.gen++
		if b.extended {
			for i := range b.inline {
				b.inline[i].moved.Store(0)
			}
			b.extended = false
		}
	} else {
		b = &leaseBatch{gen: 1}
		if len(ms) > leaseInline {
			b.extra = make([]leaseState, len(ms)-leaseInline)
		}
	}
	b.ms, b.n, b.received, b.started = ms, len(ms), received, started
	// Every state is held with its first lease: only a message that
	// lends no lease is written.
	live := false
	for i, m := range ms {
		if m.Receipt == nil || m.Header.MessageType == message.MTQuit {
			b.state(i).word.Store(b.word(leaseEnded))
		} else {
			live = true
		}
	}
	// A batch with nothing tracked is not listed, and so never reused:
	// its references may be used at any time.
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
	h := heldBatch{b: b, gen: b.gen}
	l.mu.Unlock()
	return h
}

// unlink takes b out of l's list, and keeps it for reuse when it fits
// inline and the free list has room; l.mu is held and b is done.
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
	if b.n <= leaseInline && l.nfree < maxFree {
		b.ms = nil // the messages are not kept alive by a free batch
		b.next = l.free
		l.free = b
		l.nfree++
	}
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

// waitExtension waits until no extension call for ref's state is under
// way.
func (l *leases) waitExtension(ref leaseRef) {
	st := ref.state()
	l.mu.Lock()
	for st.word.Load() == ref.word(leaseExtending) {
		l.extended.Wait()
	}
	l.mu.Unlock()
}

// tracked reports whether w, ref's state word, is still tracked in ref's
// use: held (at the cap or not) or being extended. It is false once ended,
// and for a ref of an earlier use of its batch (an end called again).
func (ref leaseRef) tracked(w uint64) bool {
	return ref.held(w) || w == ref.word(leaseCapped) || w == ref.word(leaseExtending)
}

// lapsed reports whether ref's lease has run out (or is about to) so that
// its message must not be dispatched; a lapsed message is no longer
// tracked. The zero ref (no lease tracked) never lapses, nor does an ended
// one. Only the message's holder asks, before it ends the message: once
// its message ended, a ref's batch may be reused, and only end may still
// be called with it.
func (l *leases) lapsed(ref leaseRef, now time.Time) bool {
	st := ref.state()
	if l == nil || st == nil {
		return false
	}
	t := l.at(now)
	for {
		w := st.word.Load()
		switch {
		case !ref.tracked(w):
			// First, and reading nothing but the word: an ended ref's
			// batch may be in a later use (a message hold found without
			// a receipt is ended before handle asks).
			return false
		case t < l.expires(ref.b, st)-l.lease/leaseMarginDiv:
			return false
		case w == ref.word(leaseExtending):
			l.waitExtension(ref) // then look again at the lease it left
		case st.word.CompareAndSwap(w, ref.word(leaseEnded)):
			// A tick that extended the lease after the check above and
			// left the word as it found it (heldWord) does not stop
			// this: the message is dropped though extended, and comes
			// back when that lease lapses. Never lost; rare (the tick
			// must land in the few instructions between).
			return true
		}
	}
}

// end stops tracking ref's message before it is settled, waiting for an
// extension call in progress for it. It may be called more than once, and
// with the zero ref.
func (l *leases) end(ref leaseRef) { l.endAt(ref) }

// endAt is end, reporting when ref's lease ends by the pump's clock (an
// offset from l.base), read as its tracking ended, and true; 0 and false
// when ref tracked nothing or had ended already.
func (l *leases) endAt(ref leaseRef) (time.Duration, bool) {
	st := ref.state()
	if l == nil || st == nil {
		return 0, false
	}
	for {
		w := st.word.Load()
		switch {
		case !ref.tracked(w):
			return 0, false
		case w == ref.word(leaseExtending):
			l.waitExtension(ref)
		default:
			// Read before the word ends: once ended, the batch may be
			// reused. An extension between the read and the swap leaves
			// the word as it found it only in a rare tick; the end read
			// is then the earlier one, which only makes a settle
			// answered near it count as late.
			exp := l.expires(ref.b, st)
			if st.word.CompareAndSwap(w, ref.word(leaseEnded)) {
				return exp, true
			}
		}
	}
}
