package pump

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Redeliveries of a held message (docs/adr/0005-leases.md
// decision 9). When a message's lease lapses while the pump still holds it
// (extension off, capped or failed), the broker hands it out again, and
// this run may receive the later delivery while the earlier one is still
// in a handler or waiting to settle. A settle with the earlier delivery's
// receipt then does nothing on SQS (DeleteMessage answers success), and
// a message whose every handling acknowledges could be handled for ever.
// The tracker therefore knows such later deliveries:
//
//   - a later delivery that reaches its worker while an earlier one of the
//     same message id is still tracked is absorbed: it is not dispatched,
//     its lease is kept, and the earlier delivery settles with its receipt
//     (the freshest); should the earlier one lapse before dispatch, the
//     later one is handled in its place;
//   - an earlier delivery whose lease lapsed by its settle looks for later
//     deliveries still waiting in the run, ends them and settles with the
//     newest one's receipt;
//   - an earlier delivery that settled (acknowledged or rejected) after its
//     lease lapsed with no later delivery in sight is remembered for a
//     while (lateRing entries): a later delivery whose Receive began
//     before that settle ended was handed out before it, so the settle used
//     a superseded receipt. That delivery is acknowledged without running
//     the handler again, and the superseded settle is reported
//     (EventStaleSettle: counted, logged once at Warn).
//
// Only redeliveries pay for this: the searches run for a message whose
// broker delivery attempt is not 1 while some held message is near its
// lease's end (mayLapse, set by the schedule's tick), or for a settle
// made after its lease lapsed. Everything here is a cache of this process:
// losing it (a restart) changes nothing but how often a message is handled
// again, at least once either way (ARCHITECTURE.md#scale).
type redeliveries struct {
	// mayLapse is set by the tick while some tracked message has no more
	// than a tick and the margin of its lease left (or none).
	mayLapse atomic.Bool
	// fresher maps a message id to its absorbed later delivery, under
	// leases.mu; nfresher is its size.
	fresher  map[string]leaseRef
	nfresher atomic.Int32
	// late remembers the last lateRing settles made after their lease
	// lapsed (under leases.mu); nlate is how many entries are in use.
	late     [lateRing]lateSettle
	lateNext int
	nlate    atomic.Int32
	// lateEnded is signalled (on leases.mu) when a late settle ends, for a
	// later delivery waiting to learn how it went (supersededBy).
	lateEnded sync.Cond
	// keepLate is how long a late entry is kept: the longest a Receive
	// that began before it may still be returning (timeOut + receive
	// margin) plus a lease.
	keepLate time.Duration
}

// lateRing bounds the late settles remembered.
const lateRing = 32

// lateSettle is one final settle made after its lease lapsed: the message
// id and when the settle ended (an offset from leases.base; settlePending
// while under way).
type lateSettle struct {
	id string
	at time.Duration
	// refused: the broker refused the settle (broker.ErrStaleReceipt), and
	// the pump reported it so (EventSettleFailed).
	refused bool
	// reported: a later delivery of a client-leased message was already
	// settled as superseding it and reported (EventStaleSettle); the entry
	// is kept for the deliveries behind it (supersededBy).
	reported bool
	// stale: the settle itself was reported as stale when it ended
	// (EventStaleSettle with ErrLapsedReceipt): a later delivery it
	// supersedes is acknowledged and counted as the message's
	// acknowledgement, not reported again.
	stale bool
}

// admitKind is what a worker does with a message it took (admit).
type admitKind int

const (
	// admitDispatch: hand it to the handler.
	admitDispatch admitKind = iota
	// admitLapsed: its lease lapsed; drop it (EventLeaseLapsed).
	admitLapsed
	// admitAbsorbed: a later delivery of a message another delivery
	// holds; drop it without a broker call or an event.
	admitAbsorbed
	// admitSuperseded: a later delivery of a message settled after its
	// lease lapsed: acknowledge it without the handler, and report the
	// earlier settle as stale.
	admitSuperseded
)

// admission is admit's verdict. With admitDispatch, m and ref are what to
// dispatch: the message admitted, or a later delivery absorbed into it
// when it lapsed (lapsed is then the message that lapsed).
type admission struct {
	kind    admitKind
	m       *message.Message
	ref     leaseRef
	lapsed  *message.Message
	refused bool // admitSuperseded: the broker refused the earlier settle (reported then)
	// stale (admitSuperseded): the earlier settle was reported as stale
	// when it ended (lateSettle.stale).
	stale bool
	// again (admitSuperseded): an earlier later delivery of a
	// client-leased message superseded the same settle, and was reported.
	again bool
}

// admit decides, for m (tracked by ref) taken by its worker at now, whether
// it is dispatched. It is the lease-lapse check of ADR 0005 decision 5 plus
// the redelivery rules above.
func (l *leases) admit(m *message.Message, ref leaseRef, now time.Time) admission {
	st := ref.state()
	if l == nil || st == nil {
		return admission{kind: admitDispatch, m: m, ref: ref}
	}
	if l.usedUp(m, ref) {
		return admission{kind: admitAbsorbed}
	}
	if l.client != nil {
		// The client delivered m and may keep it a deadline past its
		// lease: it is dispatched even so, and stays tracked, so that its
		// return is known (absorbed, or settled as superseded). Only a
		// later delivery absorbed while it waited is handled in its place.
		if l.nfresher.Load() > 0 && l.at(now) >= l.expires(ref.b, st)-l.lease/leaseMarginDiv {
			if d, dref, ok := l.takeFresher(m.Header.MessageID, ref); ok {
				l.end(ref)
				return admission{kind: admitDispatch, m: d, ref: dref, lapsed: m}
			}
		}
	} else if l.lapsed(ref, now) {
		if d, dref, ok := l.takeFresher(m.Header.MessageID, ref); ok && !l.lapsed(dref, now) {
			return admission{kind: admitDispatch, m: d, ref: dref, lapsed: m}
		}
		return admission{kind: admitLapsed}
	}
	if m.DeliveryAttempt == 1 || m.Header.MessageID == "" {
		return admission{kind: admitDispatch, m: m, ref: ref}
	}
	if l.nlate.Load() > 0 {
		if e, ok := l.supersededBy(m.Header.MessageID, ref.b.started); ok {
			l.end(ref)
			return admission{kind: admitSuperseded, refused: e.refused, again: e.reported, stale: e.stale}
		}
	}
	if l.mayLapse.Load() && l.absorb(m.Header.MessageID, ref) {
		return admission{kind: admitAbsorbed}
	}
	return admission{kind: admitDispatch, m: m, ref: ref}
}

// usedUp reports whether m, a delivery its worker has not yet taken, was
// ended by an earlier delivery's settle, which used its receipt (settling):
// it must be neither dispatched nor released. Only a message with a
// receipt is tracked until its worker takes it.
func (l *leases) usedUp(m *message.Message, ref leaseRef) bool {
	st := ref.state()
	if l == nil || st == nil || m.Receipt == nil || m.Header.MessageType == message.MTQuit {
		return false
	}
	return !ref.tracked(st.word.Load())
}

// sameMessage calls f with each tracked state, other than skip's, of a
// message with id, newest batch first, until f returns false; leases.mu is
// held.
func (l *leases) sameMessage(id string, skip leaseRef, f func(ref leaseRef, m *message.Message, w uint64) bool) {
	for b := l.batches; b != nil; b = b.next {
		for i := range b.n {
			if b == skip.b && i == skip.i {
				continue
			}
			m := b.ms[i]
			if m == nil || m.Header.MessageID != id {
				continue
			}
			ref := b.at(i)
			w := b.state(i).word.Load()
			if !ref.tracked(w) && w != ref.word(leaseAbsorbed) {
				continue
			}
			if !f(ref, m, w) {
				return
			}
		}
	}
}

// absorb makes ref (a delivery of id its worker just took) an absorbed
// later delivery when another delivery of id is still tracked (held in a
// handler or waiting): it reports whether it did. An earlier absorbed
// delivery of id, superseded by ref, is ended.
func (l *leases) absorb(id string, ref leaseRef) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	holder := false
	l.sameMessage(id, ref, func(o leaseRef, _ *message.Message, w uint64) bool {
		holder = w != o.word(leaseAbsorbed)
		return !holder
	})
	if !holder {
		return false
	}
	if !l.swapWord(ref, func(w uint64) bool { return ref.held(w) }, ref.word(leaseAbsorbed)) {
		return false
	}
	if l.fresher == nil {
		l.fresher = map[string]leaseRef{}
	}
	if old, ok := l.fresher[id]; ok {
		l.swapWord(old, func(w uint64) bool { return w == old.word(leaseAbsorbed) }, old.word(leaseEnded))
	} else {
		l.nfresher.Add(1)
	}
	l.fresher[id] = ref
	return true
}

// swapWord sets ref's state word to to, once no extension call for it is
// under way, if ok accepts its word; it reports whether it did.
// leases.mu is held (and released while waiting).
func (l *leases) swapWord(ref leaseRef, ok func(uint64) bool, to uint64) bool {
	st := ref.state()
	for {
		w := st.word.Load()
		switch {
		case w == ref.word(leaseExtending):
			l.extended.Wait()
		case !ok(w):
			return false
		case st.word.CompareAndSwap(w, to):
			return true
		}
	}
}

// takeFresher hands the holder of a message that lapsed before dispatch
// its absorbed later delivery, held again, to dispatch in its place.
func (l *leases) takeFresher(id string, holder leaseRef) (*message.Message, leaseRef, bool) {
	if l.nfresher.Load() == 0 {
		return nil, leaseRef{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.fresher[id]
	if !ok || d == holder {
		return nil, leaseRef{}, false
	}
	delete(l.fresher, id)
	l.nfresher.Add(-1)
	m := d.b.ms[d.i]
	if !l.swapWord(d, func(w uint64) bool { return w == d.word(leaseAbsorbed) }, heldWord(d.gen)) {
		return nil, leaseRef{}, false
	}
	return m, d, true
}

// settling ends ref's tracking before m is settled (or released) at now,
// and returns the later delivery whose receipt the settle must use: the
// absorbed one, or, when m's lease had lapsed, the newest delivery of m
// still waiting in the run (those are ended; their workers drop them).
// late reports that the receipt the settle uses has lapsed by the pump's
// lease clock: m's own when no later delivery was found, else the later
// delivery's (whose lease lapses as m's did when nothing extends it, as
// when it waited in the Proactor's buffer behind m's handler). The broker
// may have handed the message out again under such a receipt, so its
// settle is reported as stale (ErrLapsedReceipt), never as an
// acknowledgement.
// When final (the settle acknowledges or rejects), such a settle is
// remembered from now until it ends (settledLate) and for keepLate after:
// a later delivery received meanwhile was handed out before it
// (supersededBy).
//
// until is when the receipt the settle uses lapses by the pump's lease
// clock, less the same margin (an offset from leases.base; 0 when no lease
// was tracked): a settle begun in time whose broker call is answered at
// or after until may have reached the broker after the message was handed
// out again (answeredLate), and is as late as one begun after it.
func (l *leases) settling(m *message.Message, ref leaseRef, now time.Time, final bool) (fresher *message.Message, late bool, until time.Duration) {
	st := ref.state()
	if l == nil || st == nil {
		return nil, false, 0
	}
	late = ref.tracked(st.word.Load()) && l.lapsing(ref, now)
	if exp, ok := l.endAt(ref); ok {
		until = exp - l.lease/leaseMarginDiv
	}
	id := m.Header.MessageID
	if id == "" || (!late && l.nfresher.Load() == 0) {
		return nil, late, until
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	freshLapsed := false
	var freshUntil time.Duration
	if d, ok := l.fresher[id]; ok && d != ref {
		delete(l.fresher, id)
		l.nfresher.Add(-1)
		fresher = d.b.ms[d.i]
		freshLapsed = l.lapsing(d, now)
		freshUntil = l.expires(d.b, d.state()) - l.lease/leaseMarginDiv
		l.swapWord(d, func(w uint64) bool { return w == d.word(leaseAbsorbed) }, d.word(leaseEnded))
	}
	if late {
		l.sameMessage(id, ref, func(d leaseRef, dm *message.Message, _ uint64) bool {
			lapsed := l.lapsing(d, now) // read while d is still tracked
			dUntil := l.expires(d.b, d.state()) - l.lease/leaseMarginDiv
			if l.swapWord(d, func(w uint64) bool { return d.held(w) || w == d.word(leaseCapped) }, d.word(leaseEnded)) && fresher == nil {
				fresher, freshLapsed, freshUntil = dm, lapsed, dUntil // the newest: the list runs newest first
			}
			return true
		})
	}
	if fresher != nil {
		until = freshUntil
	}
	// A later delivery's receipt lapses as the first one's did when
	// nothing extends it: the settle with it is as late.
	late = fresher == nil && late || fresher != nil && freshLapsed
	if late && final {
		e := &l.late[l.lateNext]
		if e.id == "" {
			l.nlate.Add(1)
		}
		*e = lateSettle{id: id, at: settlePending}
		l.lateNext = (l.lateNext + 1) % lateRing
	}
	return fresher, late, until
}

// answeredLate reports whether a settle whose receipt lapses at until (as
// settling returned it; 0: not tracked) was answered at at or after that:
// the broker may have taken the call after it had handed the message out
// again, when SQS's DeleteMessage and Pub/Sub's acknowledgement do nothing
// and answer success. Such a settle is reported as stale
// (ErrLapsedReceipt), as one begun after its lease lapsed is.
func (l *leases) answeredLate(until time.Duration, at time.Time) bool {
	return l != nil && until > 0 && l.at(at) >= until
}

// lateAnswered remembers a final settle of id, begun in time and answered
// at at after its lease lapsed (answeredLate) with success, as a late
// settle that ended then and was reported as stale: a later delivery whose
// Receive began before at was handed out before the broker took it
// (supersededBy), and is acknowledged without running the handler again.
func (l *leases) lateAnswered(id string, at time.Time) {
	if l == nil || id == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := &l.late[l.lateNext]
	if e.id == "" {
		l.nlate.Add(1)
	}
	*e = lateSettle{id: id, at: l.at(at), stale: true}
	l.lateNext = (l.lateNext + 1) % lateRing
}

// settlePending is a late entry's at while its settle is under way: a
// Receive that began at any time before it ends qualifies.
const settlePending = time.Duration(1<<63 - 1)

// lapsing reports whether ref's lease has lapsed at now by the pump's
// lease clock, less the margin by which that clock starts after the
// broker's (a tenth of the lease).
func (l *leases) lapsing(ref leaseRef, now time.Time) bool {
	return l.at(now) >= l.expires(ref.b, ref.state())-l.lease/leaseMarginDiv
}

// settledLate records the end of a late, final settle of id (settling)
// that failed with err (nil: the broker answered success); stale says the
// settle was reported as stale when it ended (EventStaleSettle).
func (l *leases) settledLate(id string, err error, stale bool) {
	if l == nil || id == "" {
		return
	}
	at := time.Since(l.base)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.late {
		if e := &l.late[i]; e.id == id && e.at == settlePending {
			e.at, e.refused, e.stale = at, errors.Is(err, broker.ErrStaleReceipt), stale && err == nil
			l.lateEnded.Broadcast()
			return
		}
	}
}

// supersededBy returns the late settle of id that the broker refused, or
// that ended after started (a Receive's beginning); one still under way is
// waited for (its call has
// the settle's deadline), so that the caller knows whether the broker
// refused it. The entry is used up, except for a client-leased consumer
// (broker.ClientLeaser, the Pub/Sub stream): there every later delivery
// of id within keepLate of the last one it matched is superseded, started
// or not. Such a client buffers what it delivers, so deliveries of one
// message queue up behind a busy run and lapse there one after another
// (each while the next is handed out), and only one taken promptly is
// settled for good; none of them is the handling's to repeat.
func (l *leases) supersededBy(id string, started time.Duration) (lateSettle, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.late {
		e := &l.late[i]
		for e.id == id && e.at == settlePending {
			l.lateEnded.Wait()
		}
		// A settle the broker refused left the message there: any later
		// delivery of it within keepLate is its return. One it answered
		// with success was superseded only by a delivery handed out
		// before it ended.
		if e.id == id && (e.refused || e.at > started || l.client != nil) {
			found := *e
			if l.client != nil {
				e.at, e.reported = time.Since(l.base), true
				return found, true
			}
			*e = lateSettle{}
			l.nlate.Add(-1)
			return found, true
		}
	}
	return lateSettle{}, false
}

// watch sets mayLapse from the tracked messages' leases at now, and
// forgets late settles older than keepLate. The schedule's tick calls it.
func (l *leases) watch(now time.Time) {
	t := l.at(now)
	near := l.tick() + l.lease/leaseMarginDiv
	may := false
	l.mu.Lock()
	defer l.mu.Unlock()
	for b := l.batches; b != nil && !may; b = b.next {
		for i := range b.n {
			ref, st := b.at(i), b.state(i)
			w := st.word.Load()
			if (ref.tracked(w) || w == ref.word(leaseAbsorbed)) && l.expires(b, st)-t <= near {
				may = true
				break
			}
		}
	}
	l.mayLapse.Store(may)
	if l.nlate.Load() == 0 {
		return
	}
	for i := range l.late {
		if e := &l.late[i]; e.id != "" && e.at != settlePending && t-e.at > l.keepLate {
			*e = lateSettle{}
			l.nlate.Add(-1)
		}
	}
}

// ErrSupersededReceipt is the Err of an EventStaleSettle: a settle of the
// message was made with a receipt the broker had already superseded by
// handing the message out again to this run. It wraps
// broker.ErrStaleReceipt.
var ErrSupersededReceipt = fmt.Errorf("%w: the message was received again before the settle ended", broker.ErrStaleReceipt)

// ErrLapsedReceipt is the Err of an EventStaleSettle for a settle the
// broker answered with success although the receipt it used had lapsed by
// the pump's lease clock (extension off, capped or failing): the broker
// may already have handed the message out again, and then SQS's
// DeleteMessage and Pub/Sub's acknowledgement do nothing and say so to
// nobody. Such an acknowledgement is reported as stale instead of
// acknowledged (EventAcknowledged), so it is never counted as one; should
// the broker hand the message out again, the later delivery is settled
// without the handler (settleSuperseded) and counted then. It wraps
// broker.ErrStaleReceipt.
var ErrLapsedReceipt = fmt.Errorf("%w: its lease had lapsed by the pump's lease clock; the broker may have handed the message out again", broker.ErrStaleReceipt)

// settleSuperseded acknowledges m, a later delivery of a message whose
// earlier delivery acknowledged or rejected it after its lease lapsed,
// while m was being handed out: that settle used a superseded receipt, and
// m's own receipt finishes it without the handler running again. When the
// broker had answered the earlier settle with success (SQS deletes
// nothing for a superseded receipt, and says so to nobody), the settle is
// reported now (EventStaleSettle: counted, logged at Warn with the message
// id); when it refused it (refused), the pump reported it then
// (EventSettleFailed), and m is reported as a received and acknowledged
// delivery. When an earlier later delivery of a client-leased message
// superseded the same settle (again), all was reported then: m is
// reported only should its acknowledgement fail. A failed acknowledgement
// leaves m on the broker (logged at Error).
//
// When the earlier settle was reported as stale when it ended (stale: it
// used a receipt whose lease had lapsed, ErrLapsedReceipt), m's
// acknowledgement is the message's own, and is reported as a received and
// acknowledged delivery, as after a refusal.
func (r *run) settleSuperseded(m *message.Message, refused, again, stale bool) {
	p := r.p
	ctx, cancel := r.call()
	err := p.consumer.Acknowledge(ctx, m)
	cancel()
	p.settled(err)
	if err == nil {
		p.here.forget(m.Header.MessageID, m.StoredID) // a failed acknowledgement recorded here is done
	}
	if again {
		if err != nil {
			p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Ack, Err: err})
		}
		return
	}
	if !refused && !stale {
		e := Event{Kind: EventStaleSettle, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Ack, Err: ErrSupersededReceipt}
		if err != nil {
			e.Err = errors.Join(ErrSupersededReceipt, fmt.Errorf("acknowledging the later delivery: %w", err))
		}
		p.emit(e)
		return
	}
	p.emit(Event{Kind: EventReceived, Message: m, DeliveryCount: m.Header.HandledCount})
	if err != nil {
		p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Ack, Err: err})
		return
	}
	p.emit(Event{Kind: EventAcknowledged, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Ack})
}

// ackEvent is the event of an acknowledgement of m whose handler took
// took, answered with err: EventSettleFailed when it failed;
// EventStaleSettle (ErrLapsedReceipt, EndsFlight) when the broker answered
// success but the receipt had lapsed by the pump's lease clock (late), so
// that the acknowledgement may have removed nothing and is never counted
// as one; else EventAcknowledged.
func ackEvent(m *message.Message, took time.Duration, late bool, err error) Event {
	e := Event{Kind: EventAcknowledged, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Ack, Duration: took}
	switch {
	case err != nil:
		e.Kind, e.Err = EventSettleFailed, err
	case late:
		e.Kind, e.Err, e.EndsFlight = EventStaleSettle, ErrLapsedReceipt, true
	}
	return e
}

// staleSettle reports a settle of m with outcome o whose receipt had
// lapsed by the pump's lease clock, once its own event was emitted: when
// the broker answered the settle's call with success (answered; a failed
// call was reported as it failed), it emits EventStaleSettle
// (ErrLapsedReceipt; Delay is a requeue's delay) and reports true.
func (r *run) staleSettle(m *message.Message, o Outcome, answered bool, delay time.Duration) bool {
	if !answered {
		return false
	}
	r.p.emit(Event{Kind: EventStaleSettle, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: o, Delay: delay, Err: ErrLapsedReceipt})
	return true
}
