package pump

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Pump runs one subscription.
type Pump struct {
	opts      Options
	consumer  broker.Consumer
	handler   Handler
	observers []Observer

	unaccMu    sync.Mutex
	unaccCount int
	unaccStart time.Time
	limitHit   atomic.Bool

	// cutHandlers cancels the running handlers' context (see CutOff).
	cutHandlers atomic.Pointer[context.CancelFunc]
	// current is the Run under way (nil when none), for AwaitingReceive.
	current atomic.Pointer[run]

	health channelHealth

	// here records the messages handled in this process that the budget
	// may judge (exhausted, requeue).
	here *handledHere
}

// AwaitingReceive reports whether the Run under way is in a graceful
// stop that waits only for receives in flight: the stop has begun, a
// Receive is still waiting on the broker (it is let end, at most
// ReceiveBound, so that the messages it takes are released rather than left invisible)
// and no handler is running: no performer (Reactor) holds a received batch
// and no worker (Proactor) a run of messages, whose handlers could still
// start. false when no Run is under way, before a
// stop, and for a stop on an error.
func (p *Pump) AwaitingReceive() bool {
	r := p.current.Load()
	if r == nil || !r.stopping() || r.err() != nil {
		return false
	}
	return r.receiving.Load() > 0 && r.handling.Load() == 0
}

// ReceiveBound is the longest a Receive may wait on the broker: TimeOut
// plus ReceiveMargin (the defaults applied), the deadline the pump gives
// each receive (run.receiveCtx). A graceful stop that waits only for a
// receive in flight (AwaitingReceive) waits at most this long for it,
// whether the broker answers at the end of its long poll or never.
func (p *Pump) ReceiveBound() time.Duration { return p.opts.TimeOut + p.opts.ReceiveMargin }

// CutOff stops the current Run (as cancelling its context does) and
// cancels the context of every handler at once, as the drain timeout would:
// `consume`'s second signal uses it so that exec handlers' process groups
// are killed before the process exits. Their messages are released
// uncounted (ErrCutOff). It does nothing when no Run is under way.
func (p *Pump) CutOff() {
	if f := p.cutHandlers.Load(); f != nil {
		(*f)()
	}
}

// New makes a pump. It returns an error for an unknown variant.
func New(c broker.Consumer, h Handler, opts Options, observers ...Observer) (*Pump, error) {
	if err := opts.normalise(); err != nil {
		return nil, err
	}
	return &Pump{opts: opts, consumer: c, handler: h, observers: observers, here: newHandledHere(handledHereCap)}, nil
}

func (p *Pump) emit(e Event) {
	if len(p.observers) == 0 {
		return // nobody to tell: skip the clock read on the hot path
	}
	e.Subscription = p.opts.Subscription
	e.Budget = p.opts.RequeueCount
	e.Time = time.Now()
	for _, o := range p.observers {
		o.Observe(e)
	}
}

// Run pumps until ctx is cancelled, the consumer delivers MT_QUIT, or the
// unacceptable-message limit is reached. Cancelling ctx is a graceful stop:
// no more receives start; a receive already waiting on the broker is not
// cancelled but allowed to end (within TimeOut, SQS's long poll at most
// 20 s), because a long poll abandoned by its client can still take a
// message on the broker's side and leave it invisible, with a delivery
// spent, until its lease lapses (ADR 0004); a consumer that declares its
// wait takes nothing from the broker (broker.InterruptibleReceiver) has
// it ended at once instead; messages received but not yet
// dispatched, that receive's included, are released for redelivery at once;
// handlers in flight get DrainTimeout to finish and settle.
// It returns nil on a requested stop, ErrUnacceptableLimit (wrapped) at the
// limit, or the error of a Receive that was not a channel failure.
func (p *Pump) Run(ctx context.Context) error {
	p.emit(Event{Kind: EventStarted})
	p.health.mu.Lock()
	p.health.ended = false
	p.health.mu.Unlock()
	r := &run{p: p, stop: make(chan struct{}), started: time.Now()}
	// Settling must outlive the stop signal; handlers are cut off only when
	// the drain timeout expires.
	r.settleCtx = context.WithoutCancel(ctx)
	var hcancel context.CancelFunc
	r.handlerCtx, hcancel = context.WithCancel(r.settleCtx)
	defer hcancel()
	r.recvCtx, r.recvCancel = context.WithCancel(ctx)
	defer r.recvCancel()
	cut := context.CancelFunc(func() { r.drainUntil.Store(-1); r.halt(nil); hcancel() })
	p.cutHandlers.Store(&cut)
	defer p.cutHandlers.Store(nil)
	// Receives are not cancelled by a stop (see above), only when Run gives
	// up on them; except a consumer whose Receive takes nothing from the
	// broker while it waits (broker.InterruptibleReceiver: Pub/Sub's
	// streaming pull, which waits on the client's buffer), whose wait a
	// stop ends at once: nothing it would take is left on the broker's side.
	var rcancel context.CancelFunc
	brokerParent := r.settleCtx
	if ir, ok := p.consumer.(broker.InterruptibleReceiver); ok && ir.ReceiveInterruptible() {
		brokerParent = r.recvCtx
	}
	r.brokerCtx, rcancel = context.WithCancel(brokerParent)
	defer rcancel()

	defer func() {
		if d := r.deadline.Load(); d != nil {
			d.cancel()
		}
	}()
	// The receives' shared deadline context: releases its timer at once.
	defer func() {
		if d := r.recvDeadline.Load(); d != nil {
			d.cancel()
		}
	}()

	r.leases = newLeases(p.consumer, p.opts.MaxLeaseExtension, p.emit)
	if r.leases != nil {
		r.leases.keepLate = p.opts.TimeOut + p.opts.ReceiveMargin + r.leases.lease
		if r.leases.client != nil {
			// A later delivery may wait in the client's buffer, behind
			// what the run holds, before a Receive takes it.
			r.leases.keepLate += r.leases.lease
		}
	}
	r.holds = newKeyHolds(max(p.opts.MaxLeaseExtension, 0) + time.Hour)
	leasesDone := make(chan struct{})
	if r.leases != nil {
		go r.leases.run(r.settleCtx, leasesDone)
	}
	defer close(leasesDone)

	// Published once every field AwaitingReceive reads is set.
	p.current.Store(r)
	defer p.current.Store(nil)
	done := make(chan struct{})
	go func() {
		if p.opts.Variant == Reactor {
			r.reactor()
		} else {
			r.proactor()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		r.halt(nil)
		t := time.NewTimer(p.opts.DrainTimeout)
		select {
		case <-done:
			t.Stop()
		case <-t.C:
			hcancel()
			// Give cancelled handlers a moment to settle and a receive still
			// waiting on the broker the rest of its wait, then leave the rest
			// to the broker.
			select {
			case <-done:
			case <-time.After(max(time.Second, p.opts.TimeOut+receiveGrace, p.opts.CutOffGrace)):
			}
		}
	}
	err := r.err()
	p.endHealth()
	p.emit(Event{Kind: EventStopped, Err: err, Released: r.releasedIDs()})
	return err
}

// callShareDiv: settle calls that start within CallTimeout/callShareDiv
// of each other share one deadline context (see call).
const callShareDiv = 16

// callDeadline is a deadline context that settle calls share: until is
// when calls stop taking it (CallTimeout/callShareDiv after it was made).
type callDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
	until  time.Time
}

// call returns the context of one settle call: the settle context (not
// cancelled by a stop) with a deadline between CallTimeout less
// CallTimeout/callShareDiv and CallTimeout from now. Calls starting within
// CallTimeout/callShareDiv of each other share one context, so that the
// deadline costs no allocation per message (a context, its timer
// and its closure per settle were 4 of the Reactor's 6 allocations per
// message). The shared context is never cancelled early: each ends at its
// deadline, the last when the run ends. The cancel func returned does
// nothing.
func (r *run) call() (context.Context, context.CancelFunc) {
	return r.callAt(time.Now())
}

// callAt is call for a caller that has just read the clock (now): a
// message's settle reuses its handler's end, saving a clock reading per
// message.
func (r *run) callAt(now time.Time) (context.Context, context.CancelFunc) {
	if d := r.deadline.Load(); d != nil && now.Before(d.until) {
		return d.ctx, noCancel
	}
	ctx, cancel := context.WithDeadline(r.settleCtx, now.Add(r.p.opts.CallTimeout))
	r.deadline.Store(&callDeadline{ctx: ctx, cancel: cancel, until: now.Add(r.p.opts.CallTimeout / callShareDiv)})
	return ctx, noCancel
}

// clock returns the time now from one reading of the monotonic clock: the
// run's start plus the time since (time.Since reads the monotonic clock
// alone, time.Now the wall clock as well, twice the cost on a VM whose
// clock reads are system calls: a third of a no-op message's time in
// handle). The result carries a monotonic reading, so comparisons and
// differences with other times of the process are exact; its wall part
// does not follow a step of the system clock during the run, and nothing
// the pump reports is taken from it (Event.Time is read in emit).
func (r *run) clock() time.Time {
	return r.started.Add(time.Since(r.started))
}

// receiveCtx returns the context of a receive starting at now: the broker
// context (not cancelled by a stop) with a deadline no later than deadline
// (TimeOut + ReceiveMargin) from now, and no earlier than TimeOut plus
// (recvShareDiv-1)/recvShareDiv of ReceiveMargin: receives starting within
// the share window (ReceiveMargin/recvShareDiv, and no more than
// deadline/callShareDiv) of each other share one context, as settle calls
// do (call). A context, its timer and its registration with the broker
// context per receive were 7% of the no-op Reactor's time on the memory
// transport. A shared context is never cancelled early (a receive that
// ended leaves it to the next); each ends at its deadline, the last when
// the run ends. Under a steady flow of receives about deadline/share
// window of them are alive at once (26 at SQS's defaults).
func (r *run) receiveCtx(now time.Time, deadline time.Duration) context.Context {
	if d := r.recvDeadline.Load(); d != nil && now.Before(d.until) {
		return d.ctx
	}
	share := min(r.p.opts.ReceiveMargin/recvShareDiv, deadline/callShareDiv)
	ctx, cancel := context.WithDeadline(r.brokerCtx, now.Add(deadline))
	r.recvDeadline.Store(&callDeadline{ctx: ctx, cancel: cancel, until: now.Add(share)})
	return ctx
}

// recvShareDiv: receives that start within ReceiveMargin/recvShareDiv of
// each other share one deadline context (see receiveCtx), so that a
// receive keeps at least seven eighths of its margin.
const recvShareDiv = 8

// noCancel is the cancel func of a shared settle-call context.
func noCancel() {}

// receiveGrace is how much longer than TimeOut a stop waits for a receive
// in progress (Pub/Sub's pull waits TimeOut plus its own 2 s grace).
const receiveGrace = 3 * time.Second

// run is one execution of Run.
type run struct {
	p          *Pump
	started    time.Time // when Run began (clock)
	settleCtx  context.Context
	handlerCtx context.Context
	recvCtx    context.Context // cancelled by a stop: tells the loops to stop
	recvCancel context.CancelFunc
	brokerCtx  context.Context              // what Receive runs with: not cancelled by a stop (but see broker.InterruptibleReceiver)
	leases     *leases                      // nil when the consumer lends no lease
	holds      *keyHolds                    // per-key hold-back marks
	deadline   atomic.Pointer[callDeadline] // the settle calls' shared deadline (call)
	// recvDeadline is the receives' shared deadline (receiveCtx).
	recvDeadline atomic.Pointer[callDeadline]

	stopOnce sync.Once
	stop     chan struct{}
	// drainUntil is when a graceful stop's drain ends (UnixNano; 0 until a
	// graceful stop began, -1 when the stop is not graceful: a fatal error
	// or a cut-off). Until then, messages already received are still handed
	// to their handlers (mayStart).
	drainUntil atomic.Int64
	// receiving counts the Receive calls waiting on the broker, and
	// handling the performers (Reactor) holding a received batch and the
	// workers (Proactor) holding a run of messages, whose handlers run or
	// may start, for AwaitingReceive. Both are touched per receive, batch
	// or run, never per message: an atomic add and a deferred subtract
	// around each handle cost the no-op pump a measurable share.
	receiving, handling atomic.Int32
	heldMu              sync.Mutex
	held                []heldMsg // released at the end of a stop (release)
	// released are the ids of the messages releaseHeld released unstarted
	// (EventReleased), in order, for the stop's EventStopped; under heldMu.
	released []string
	errMu    sync.Mutex
	fatal    error
}

// halt stops receiving; err, if not nil, is what Run will return. A halt
// without an error (a requested stop, MT_QUIT) is graceful: what was
// already received is still handled until the drain ends (mayStart); one
// with an error releases it.
func (r *run) halt(err error) {
	if err != nil {
		r.errMu.Lock()
		if r.fatal == nil {
			r.fatal = err
		}
		r.errMu.Unlock()
		r.drainUntil.Store(-1)
	} else {
		r.beginDrain()
	}
	r.stopOnce.Do(func() {
		close(r.stop)
		r.recvCancel()
	})
}

func (r *run) err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.fatal
}

// beginDrain starts a graceful stop's drain, once: messages already
// received may start their handlers for DrainTimeout from now.
func (r *run) beginDrain() {
	r.drainUntil.CompareAndSwap(0, time.Now().Add(r.p.opts.DrainTimeout).UnixNano())
}

// mayStart reports whether a message received before a stop may still be
// handed to its handler: the stop is graceful, its drain has not ended and
// the handlers have not been cut off. A message released unhandled costs
// it a delivery the broker counts, with no handler run; a graceful stop
// hands what is buffered to the handlers instead, and releases only what
// cannot start before the drain ends. A stop seen through the caller's
// context before Run turned it into halt is graceful too.
func (r *run) mayStart() bool {
	if r.handlerCtx.Err() != nil || r.p.limitHit.Load() {
		return false
	}
	if r.recvCtx.Err() != nil && r.err() == nil {
		r.beginDrain()
	}
	until := r.drainUntil.Load()
	return until > 0 && time.Now().UnixNano() < until
}

// stopping reports whether the pump is stopping. It reads the caller's
// context too, so a performer sees a cancellation at once, before Run's
// goroutine has turned it into halt.
func (r *run) stopping() bool {
	// halt cancels recvCtx as it closes stop: one atomic load, not a
	// select on two channels, on every message's path.
	return r.recvCtx.Err() != nil
}

// sleep waits d or until the pump stops; it reports false when stopped.
func (r *run) sleep(d time.Duration) bool {
	if d <= 0 {
		return !r.stopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.stop:
		return false
	case <-t.C:
		return true
	}
}

// receive does one Receive (up to the consumer's buffer size) and handles
// failure and emptiness. It returns the batch (nil
// when there is nothing to do now), its lease tracking (the zero heldBatch
// when none is tracked: the i-th message's state is at(i)) and false when
// the pump must stop.
func (r *run) receive() ([]*message.Message, heldBatch, bool) {
	p := r.p
	if p.limitHit.Load() {
		return nil, heldBatch{}, false
	}
	if r.stopping() {
		return nil, heldBatch{}, false
	}
	deadline := p.opts.TimeOut + p.opts.ReceiveMargin
	started := time.Now()
	rctx := r.receiveCtx(started, deadline)
	r.receiving.Add(1)
	ms, err := p.consumer.Receive(rctx, p.opts.TimeOut)
	r.receiving.Add(-1)
	timedOut := rctx.Err() != nil && r.brokerCtx.Err() == nil
	if timedOut && len(ms) == 0 {
		// Transports return nothing for a cancelled call: a deadline that
		// expired is the broker not answering, a channel failure.
		err = fmt.Errorf("%w: receive got no answer within %s (timeOut %s + margin %s): %w",
			broker.ErrChannelFailure, deadline, p.opts.TimeOut, p.opts.ReceiveMargin, context.DeadlineExceeded)
	}
	if err != nil {
		if r.stopping() && !timedOut {
			return nil, heldBatch{}, false
		}
		if errors.Is(err, broker.ErrChannelFailure) {
			delay := p.failed(err, true, started)
			return nil, heldBatch{}, r.sleep(delay)
		}
		r.halt(fmt.Errorf("subscription %s: receive: %w", p.opts.Subscription, err))
		return nil, heldBatch{}, false
	}
	p.succeeded()
	if len(ms) == 0 || (len(ms) == 1 && ms[0].Header.MessageType == message.MTNone) {
		return nil, heldBatch{}, r.sleep(p.opts.EmptyChannelDelay)
	}
	arrived := time.Now()
	for _, m := range ms {
		if m.ReceivedAt.IsZero() {
			m.ReceivedAt = arrived
		}
	}
	// Tracked only once the receive is known good: a batch a failed
	// receive came with is never handled, and would stay listed.
	return ms, r.leases.holdSince(ms, started), true
}

// release gives a received but undispatched message back to the broker
// during a stop. It is held until every receive of this run has ended, so
// that a receive still waiting on the broker cannot take it again, and is
// then made visible at once by releaseHeld. st is the message's lease
// tracking (the zero leaseRef when none), ended here.
func (r *run) release(m *message.Message, st leaseRef) {
	if r.leases.usedUp(m, st) {
		return // an earlier delivery of it settled with its receipt
	}
	if f, _, _ := r.leases.settling(m, st, time.Now(), false); f != nil {
		m.Receipt = f.Receipt
	}
	r.hold(m, true)
}

// heldMsg is a message held for releaseHeld: unstarted when no handler
// ran for this delivery (release), not when its handler was cut off
// (keep).
type heldMsg struct {
	m         *message.Message
	unstarted bool
}

// keep holds m, a received message no longer tracked whose handler was
// cut off by the stop, for releaseHeld.
func (r *run) keep(m *message.Message) { r.hold(m, false) }

// hold holds m for releaseHeld; unstarted: see heldMsg.
func (r *run) hold(m *message.Message, unstarted bool) {
	if m.Header.MessageType == message.MTQuit || m.Receipt == nil {
		return
	}
	r.heldMu.Lock()
	r.held = append(r.held, heldMsg{m, unstarted})
	r.heldMu.Unlock()
}

// releaseHeld releases what release and keep held; it runs once every
// receive loop has returned. Each message released unstarted is told
// (EventReleased) and its id kept for the stop's EventStopped.
func (r *run) releaseHeld() {
	r.heldMu.Lock()
	held := r.held
	r.held = nil
	r.heldMu.Unlock()
	for _, h := range held {
		m := h.m
		if h.unstarted && r.routeSpentAtRelease(m) {
			continue
		}
		ctx, cancel := r.call()
		err := r.p.consumer.Requeue(ctx, m, 0)
		cancel()
		r.p.settled(err)
		switch {
		case err != nil:
			r.p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Err: err})
		case h.unstarted:
			r.heldMu.Lock()
			r.released = append(r.released, m.Header.MessageID)
			r.heldMu.Unlock()
			r.p.emit(Event{Kind: EventReleased, Message: m, DeliveryCount: m.Header.HandledCount})
		}
	}
}

// routeSpentAtRelease routes m, a message a stop would release unstarted,
// when it arrived with its redelivery budget spent by handlers (the
// delivery the budget routes without a handler run, exhausted), instead
// of releasing it, and reports whether it did. Released, it would come
// back on a delivery past 2 x requeueCount + 1, where a native redrive
// limit set at that delivery (the layout lint recommends) moves it to the
// broker's own dead-letter destination without a rejection reason. A
// routing that fails releases it with the Router's back-off, as any
// rejection.
func (r *run) routeSpentAtRelease(m *message.Message) bool {
	if r.p.opts.RequeueCount == -1 || m.Header.MessageType == message.MTQuit {
		return false
	}
	switch why := r.exhausted(m, false); why {
	case arrivalSpentByHandlers, arrivalRoutingRetry:
		r.rejectExhausted(m, why)
		return true
	}
	return false
}

// releasedIDs returns the ids of the messages released unstarted so far.
func (r *run) releasedIDs() []string {
	r.heldMu.Lock()
	defer r.heldMu.Unlock()
	return slices.Clone(r.released)
}
