package pump

import (
	"context"
	"errors"
	"sync"
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
type leases struct {
	ext    broker.LeaseExtender
	lease  time.Duration
	maxExt time.Duration // <= 0: never extend
	emit   func(Event)

	mu   sync.Mutex
	held map[*message.Message]*leaseState
}

// leaseState is one held message's lease.
type leaseState struct {
	// mu is held by an extension call in progress for the message; end
	// takes it so that no extension lands after a settle began (an
	// extension after a requeue would override the requeue delay).
	mu       sync.Mutex
	received time.Time // when Receive returned it
	renewed  time.Time // start of the current lease
	expires  time.Time // end of the current lease
	capped   bool      // the extension cap was reached; no more extensions
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
	return &leases{ext: ext, lease: lease, maxExt: maxExt, emit: emit, held: map[*message.Message]*leaseState{}}
}

// hold starts tracking a batch Receive returned at at.
func (l *leases) hold(ms []*message.Message, at time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	for _, m := range ms {
		if m.Receipt == nil || m.Header.MessageType == message.MTQuit {
			continue
		}
		l.held[m] = &leaseState{received: at, renewed: at, expires: at.Add(l.lease)}
	}
	l.mu.Unlock()
}

// lapsed reports whether m's lease has run out (or is about to) so that it
// must not be dispatched; a lapsed message is no longer tracked.
func (l *leases) lapsed(m *message.Message, now time.Time) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.held[m]
	if st == nil {
		return false
	}
	if now.Before(st.expires.Add(-l.lease / leaseMarginDiv)) {
		return false
	}
	delete(l.held, m)
	return true
}

// end stops tracking m before it is settled, waiting for an extension call
// in progress for it.
func (l *leases) end(m *message.Message) {
	if l == nil {
		return
	}
	l.mu.Lock()
	st := l.held[m]
	delete(l.held, m)
	l.mu.Unlock()
	if st != nil {
		st.mu.Lock()
		//lint:ignore SA2001 waiting for an extension in progress is the point
		st.mu.Unlock()
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

// extendDue extends, in one ExtendLeases call, every held message that has
// been held for half its current lease, up to the cap: a message's lease
// never runs past its first lease plus maxExt. A message that reaches the
// cap is extended no more (EventLeaseCapped); its lease lapses and the
// broker redelivers it.
func (l *leases) extendDue(ctx context.Context, now time.Time) {
	if l.maxExt <= 0 {
		return
	}
	var due []*message.Message
	var states []*leaseState
	var d time.Duration
	l.mu.Lock()
	for m, st := range l.held {
		if st.capped || now.Sub(st.renewed) < l.lease/leaseExtendAt {
			continue
		}
		// The longest this message may still be held: up to its first
		// lease's end plus the cap.
		left := st.received.Add(l.lease + l.maxExt).Sub(now)
		if left <= l.lease/leaseExtendAt {
			st.capped = true
			l.emit(Event{Kind: EventLeaseCapped, Message: m, DeliveryCount: m.Header.HandledCount, Delay: now.Sub(st.received)})
			continue
		}
		if !st.mu.TryLock() {
			continue // being settled
		}
		due = append(due, m)
		states = append(states, st)
		ext := min(l.lease, left)
		if d == 0 || ext < d {
			d = ext // one call for the batch: the shortest extension any of them may have
		}
	}
	l.mu.Unlock()
	if len(due) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, min(max(l.lease/4, minLeaseCall), maxLeaseCall))
	start := time.Now()
	errs := l.ext.ExtendLeases(cctx, due, d)
	cancel()
	l.mu.Lock()
	for i, m := range due {
		st := states[i]
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		_, still := l.held[m]
		switch {
		case err == nil:
			st.renewed, st.expires = start, start.Add(d)
			if still {
				l.emit(Event{Kind: EventLeaseExtended, Message: m, DeliveryCount: m.Header.HandledCount, Delay: d})
			}
		case !still:
			// Settled while the call was under way: its error says nothing.
		case errors.Is(err, broker.ErrStaleReceipt):
			// The broker no longer holds it for us: never dispatch it.
			st.expires = start
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err})
		default:
			// Left as it is: the next tick tries again while the lease
			// lasts; once it lapses the message is dropped, not dispatched,
			// and the broker redelivers it.
			l.emit(Event{Kind: EventLeaseExtendFailed, Message: m, DeliveryCount: m.Header.HandledCount, Err: err})
		}
		st.mu.Unlock()
	}
	l.mu.Unlock()
}
