package pump

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Variant is the pump variant (messagePumpType).
type Variant string

// The two variants.
const (
	// Reactor handles one message at a time per performer, in order.
	Reactor Variant = "reactor"
	// Proactor receives ahead and dispatches concurrently, keeping
	// per-partition-key order.
	Proactor Variant = "proactor"
)

// Defaults of Options, Brighter's where Brighter has one (reference §9.1).
const (
	DefaultTimeOut             = 300 * time.Millisecond
	DefaultEmptyChannelDelay   = 500 * time.Millisecond
	DefaultChannelFailureDelay = 1000 * time.Millisecond
	DefaultDrainTimeout        = 10 * time.Second
	// DefaultMaxChannelFailureDelay caps the exponential back-off of
	// repeated channel failures.
	DefaultMaxChannelFailureDelay = 30 * time.Second
	// DefaultCallTimeout bounds each settle call (acknowledge, requeue,
	// reject's publish and acknowledge or release).
	DefaultCallTimeout = 30 * time.Second
	// DefaultReceiveMargin is how much longer than TimeOut a receive may
	// take before it is abandoned as a channel failure.
	DefaultReceiveMargin = 10 * time.Second
	// DefaultStallAfter is how long without a successful broker call makes
	// a subscription stalled (EventStalled; /readyz 503).
	DefaultStallAfter = 60 * time.Second
)

// ErrUnacceptableLimit is returned by Run when unacceptableMessageLimit
// unacceptable messages were seen (Brighter's MP_LIMIT_EXCEEDED).
var ErrUnacceptableLimit = errors.New("unacceptable message limit reached")

// Options are a subscription's pump settings, with Brighter's names.
type Options struct {
	// Subscription names the subscription in events and logs.
	Subscription string
	// Variant is Reactor or Proactor (required).
	Variant Variant
	// NoOfPerformers is how many performers run (Reactor) or how many
	// receivers and workers run (Proactor); values below 1 mean 1.
	NoOfPerformers int
	// BufferSize is the batch size the consumer asks for (1..10); the
	// Proactor bounds each lane to it.
	BufferSize int
	// TimeOut is how long one Receive waits.
	TimeOut time.Duration
	// RequeueCount is the redelivery budget: -1 = unlimited; any
	// other value rejects a deferred message once its delivery count reaches
	// it, so 1, 0 and anything below -1 reject on the first deferral
	//
	RequeueCount int
	// RequeueDelay is the delay of a Defer that asks for none.
	RequeueDelay time.Duration
	// UnacceptableMessageLimit stops the pump after that many unacceptable
	// messages (0 or less = never stop).
	UnacceptableMessageLimit int
	// UnacceptableMessageLimitWindow resets the unacceptable count when more
	// than this much time passed since the count started (0 = never).
	UnacceptableMessageLimitWindow time.Duration
	// EmptyChannelDelay is the pause after an empty Receive.
	EmptyChannelDelay time.Duration
	// ChannelFailureDelay is the pause after a failed Receive (both
	// variants; Brighter's Reactor ignores it, a quirk not copied). Repeated
	// failures double it, with jitter, up to MaxChannelFailureDelay; a
	// successful receive resets it (issue 13).
	ChannelFailureDelay time.Duration
	// MaxChannelFailureDelay caps the back-off of repeated channel failures
	// (0 = DefaultMaxChannelFailureDelay; never below ChannelFailureDelay).
	MaxChannelFailureDelay time.Duration
	// CallTimeout is the deadline of each settle call: acknowledge,
	// requeue, and each broker call of a rejection (publish, then
	// acknowledge or release). 0 = DefaultCallTimeout. A call that times out
	// fails like any other (EventSettleFailed; the message stays on the
	// broker). Acknowledge and requeue calls starting within CallTimeout/16
	// of each other share one deadline, so each gets between 15/16 of
	// CallTimeout and CallTimeout (no allocation per message).
	CallTimeout time.Duration
	// ReceiveMargin is added to TimeOut to make each Receive's deadline: a
	// receive still unanswered then is abandoned and counted as a channel
	// failure (0 = DefaultReceiveMargin).
	ReceiveMargin time.Duration
	// StallAfter is how long the channel may go without a successful broker
	// call, while its calls fail, before the pump reports EventStalled
	// (0 = DefaultStallAfter).
	StallAfter time.Duration
	// DrainTimeout bounds a graceful stop: in-flight handlers get this long
	// to finish; after it their context is cancelled and Run returns,
	// leaving unsettled messages to the broker.
	DrainTimeout time.Duration
	// MaxLeaseExtension caps lease extension: a held message's lease is
	// extended (when the consumer implements broker.LeaseExtender) until it
	// is settled, but never past its first lease plus this much; at the cap
	// the pump stops extending, the lease lapses and the broker redelivers
	// the message (EventLeaseCapped). 0 means DefaultMaxLeaseExtension;
	// negative turns extension off (lapsed messages are still dropped
	// before dispatch). Issue 12, docs/adr/0005-leases.md.
	MaxLeaseExtension time.Duration
}

func (o *Options) normalise() error {
	if o.Variant != Reactor && o.Variant != Proactor {
		return fmt.Errorf("messagePumpType %q: valid values are reactor, proactor", o.Variant)
	}
	o.NoOfPerformers = max(o.NoOfPerformers, 1)
	o.BufferSize = max(o.BufferSize, 1)
	if o.TimeOut <= 0 {
		o.TimeOut = DefaultTimeOut
	}
	if o.EmptyChannelDelay < 0 {
		o.EmptyChannelDelay = 0
	}
	if o.ChannelFailureDelay < 0 {
		o.ChannelFailureDelay = 0
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.MaxChannelFailureDelay <= 0 {
		o.MaxChannelFailureDelay = DefaultMaxChannelFailureDelay
	}
	o.MaxChannelFailureDelay = max(o.MaxChannelFailureDelay, o.ChannelFailureDelay)
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.ReceiveMargin <= 0 {
		o.ReceiveMargin = DefaultReceiveMargin
	}
	if o.StallAfter <= 0 {
		o.StallAfter = DefaultStallAfter
	}
	if o.MaxLeaseExtension == 0 {
		o.MaxLeaseExtension = DefaultMaxLeaseExtension
	}
	return nil
}

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

	health channelHealth

	// here records the messages handled in this process that the budget
	// may judge (exhausted, requeue).
	here *handledHere
}

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
// spent, until its lease lapses (ADR 0004); messages received but not yet
// dispatched, that receive's included, are released for redelivery at once;
// handlers in flight get DrainTimeout to finish and settle.
// It returns nil on a requested stop, ErrUnacceptableLimit (wrapped) at the
// limit, or the error of a Receive that was not a channel failure.
func (p *Pump) Run(ctx context.Context) error {
	p.emit(Event{Kind: EventStarted})
	p.health.mu.Lock()
	p.health.ended = false
	p.health.mu.Unlock()
	r := &run{p: p, stop: make(chan struct{})}
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
	// up on them.
	var rcancel context.CancelFunc
	r.brokerCtx, rcancel = context.WithCancel(r.settleCtx)
	defer rcancel()

	defer func() {
		if d := r.deadline.Load(); d != nil {
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
			case <-time.After(max(time.Second, p.opts.TimeOut+receiveGrace)):
			}
		}
	}
	err := r.err()
	p.endHealth()
	p.emit(Event{Kind: EventStopped, Err: err})
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
// deadline costs no allocation per message (issue 31: a context, its timer
// and its closure per settle were 4 of the Reactor's 6 allocations per
// message). The shared context is never cancelled early: each ends at its
// deadline, the last when the run ends. The cancel func returned does
// nothing.
func (r *run) call() (context.Context, context.CancelFunc) {
	now := time.Now()
	if d := r.deadline.Load(); d != nil && now.Before(d.until) {
		return d.ctx, noCancel
	}
	ctx, cancel := context.WithDeadline(r.settleCtx, now.Add(r.p.opts.CallTimeout))
	r.deadline.Store(&callDeadline{ctx: ctx, cancel: cancel, until: now.Add(r.p.opts.CallTimeout / callShareDiv)})
	return ctx, noCancel
}

// noCancel is the cancel func of a shared settle-call context.
func noCancel() {}

// receiveGrace is how much longer than TimeOut a stop waits for a receive
// in progress (Pub/Sub's pull waits TimeOut plus its own 2 s grace).
const receiveGrace = 3 * time.Second

// run is one execution of Run.
type run struct {
	p          *Pump
	settleCtx  context.Context
	handlerCtx context.Context
	recvCtx    context.Context // cancelled by a stop: tells the loops to stop
	recvCancel context.CancelFunc
	brokerCtx  context.Context              // what Receive runs with: not cancelled by a stop
	leases     *leases                      // nil when the consumer lends no lease
	holds      *keyHolds                    // per-key hold-back marks (issue 28)
	deadline   atomic.Pointer[callDeadline] // the settle calls' shared deadline (call)

	stopOnce sync.Once
	stop     chan struct{}
	// drainUntil is when a graceful stop's drain ends (UnixNano; 0 until a
	// graceful stop began, -1 when the stop is not graceful: a fatal error
	// or a cut-off). Until then, messages already received are still handed
	// to their handlers (mayStart).
	drainUntil atomic.Int64
	heldMu     sync.Mutex
	held       []*message.Message // released at the end of a stop (release)
	errMu      sync.Mutex
	fatal      error
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
	select {
	case <-r.stop:
		return true
	case <-r.recvCtx.Done():
		return true
	default:
		return false
	}
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
	rctx, cancel := context.WithTimeout(r.brokerCtx, deadline)
	started := time.Now()
	ms, err := p.consumer.Receive(rctx, p.opts.TimeOut)
	timedOut := rctx.Err() != nil && r.brokerCtx.Err() == nil
	cancel()
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
		return // an earlier delivery of it settled with its receipt (issue 34)
	}
	if f, _ := r.leases.settling(m, st, time.Now(), false); f != nil {
		m.Receipt = f.Receipt
	}
	r.keep(m)
}

// keep holds m, a received message no longer tracked, for releaseHeld.
func (r *run) keep(m *message.Message) {
	if m.Header.MessageType == message.MTQuit || m.Receipt == nil {
		return
	}
	r.heldMu.Lock()
	r.held = append(r.held, m)
	r.heldMu.Unlock()
}

// releaseHeld releases what release held; it runs once every receive loop
// has returned.
func (r *run) releaseHeld() {
	r.heldMu.Lock()
	held := r.held
	r.held = nil
	r.heldMu.Unlock()
	for _, m := range held {
		ctx, cancel := r.call()
		err := r.p.consumer.Requeue(ctx, m, 0)
		cancel()
		r.p.settled(err)
		if err != nil {
			r.p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Err: err})
		}
	}
}

// reactor runs NoOfPerformers performers, each handling its batch in order.
func (r *run) reactor() {
	var wg sync.WaitGroup
	for range r.p.opts.NoOfPerformers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, lb, ok := r.receive()
				if !ok {
					return
				}
				for i, m := range ms {
					if m.Header.MessageType == message.MTQuit {
						r.halt(nil)
						continue
					}
					if r.stopping() && !r.mayStart() {
						for j := i; j < len(ms); j++ {
							r.release(ms[j], lb.at(j))
						}
						break
					}
					r.handle(m, lb.at(i), nil)
				}
			}
		}()
	}
	wg.Wait()
	r.releaseHeld()
}

var laneSeed = maphash.MakeSeed()

// proactor runs NoOfPerformers receivers and NoOfPerformers workers. Keyed
// messages go to the worker owning the key's lane; keyless ones to a shared
// queue any idle worker takes. When the consumer offers
// broker.BatchAcknowledger, acknowledgements go to NoOfPerformers settlers
// that batch them.
//
// The receive-ahead buffer has NoOfPerformers x BufferSize slots
// (tokens in a buffered channel): a receiver takes BufferSize of them before its receive and
// gives back those its messages did not fill; each message gives its own
// back when a worker takes it to dispatch. So no more messages wait than
// the buffer holds, none waits for a lease it does not need (issue 12), and
// every receive still asks for a full batch, as the plain SDK loop does:
// receives sized to the free slots averaged eight messages of ten on SQS,
// a quarter more receive calls, each a billed request (ADR 0005).
func (r *run) proactor() {
	p := r.p
	n := p.opts.NoOfPerformers
	b := p.opts.BufferSize
	slots := make(chan struct{}, n*b)
	for range n * b {
		slots <- struct{}{}
	}
	lanes := make([]chan heldMessage, n)
	for i := range lanes {
		lanes[i] = make(chan heldMessage, p.opts.BufferSize)
	}
	shared := make(chan heldMessage, n*p.opts.BufferSize)

	var acks chan ackItem
	var settled sync.WaitGroup
	if ba, ok := p.consumer.(broker.BatchAcknowledger); ok {
		acks = make(chan ackItem, n*p.opts.BufferSize*2)
		// One settler per performer, so that batch acknowledgements (one
		// broker round trip each) overlap as the receives do; acknowledging
		// has no order to keep.
		for range n {
			settled.Add(1)
			go func() {
				defer settled.Done()
				r.settler(ba, acks)
			}()
		}
	}

	var workers sync.WaitGroup
	for i := range n {
		workers.Add(1)
		go func(own, shared chan heldMessage) {
			defer workers.Done()
			// own and shared are this worker's copies: setting one to nil
			// when it closes must not touch the other workers'.
			for own != nil || shared != nil {
				var m heldMessage
				var ok bool
				select {
				case m, ok = <-own:
					if !ok {
						own = nil
						continue
					}
				case m, ok = <-shared:
					if !ok {
						shared = nil
						continue
					}
				}
				if m.slot {
					slots <- struct{}{} // its buffer slot is free again
				}
				if r.stopping() && !r.mayStart() {
					r.release(m.m, m.lease)
					continue
				}
				r.handle(m.m, m.lease, acks)
			}
		}(lanes[i], shared)
	}

	var receivers sync.WaitGroup
	var next atomic.Uint64
	// recvMu orders the receivers' hand-offs to the lanes. A consumer whose
	// broker cannot reorder a key across concurrent receives
	// (broker.ConcurrentReceiver: SQS) holds it for the enqueue of a batch
	// only, so the long polls overlap. Any other (the memory transport) holds
	// it across Receive too: receive-then-enqueue is one step, so batches
	// reach the lanes in the order the broker handed them out, as two
	// receivers racing between Receive and the lane send would reorder
	// messages of one partition key (ADR 0004).
	var recvMu sync.Mutex
	overlap := false
	if cr, ok := p.consumer.(broker.ConcurrentReceiver); ok {
		overlap = cr.ReceivesConcurrently()
	}
	for range n {
		receivers.Add(1)
		go func() {
			defer receivers.Done()
			for {
				// A whole receive's worth of slots, or none: a receive always
				// asks for a full batch.
				if !r.takeSlots(slots, b) {
					return
				}
				if !overlap {
					recvMu.Lock()
				}
				ms, lb, ok := r.receive()
				if overlap {
					if !ok {
						putSlots(slots, b)
						return
					}
					recvMu.Lock()
				} else if !ok {
					recvMu.Unlock()
					putSlots(slots, b)
					return
				}
				queued := 0
				for i, msg := range ms {
					if msg.Header.MessageType == message.MTQuit {
						r.halt(nil)
						continue
					}
					queued++
					// A consumer that returns more than a batch gives the extra
					// messages no slot: the count of slots stays exact.
					m := heldMessage{m: msg, lease: lb.at(i), slot: queued <= b}
					if k := msg.Header.PartitionKey; k != "" {
						lanes[maphash.String(laneSeed, k)%uint64(n)] <- m
					} else if n == 1 {
						lanes[0] <- m
					} else {
						select {
						case shared <- m:
						default:
							// All lanes busy: queue round-robin so receiving
							// stays bounded by the lanes' capacity.
							lanes[next.Add(1)%uint64(n)] <- m
						}
					}
				}
				recvMu.Unlock()
				putSlots(slots, b-queued)
			}
		}()
	}
	receivers.Wait()
	for _, l := range lanes {
		close(l)
	}
	close(shared)
	workers.Wait()
	r.releaseHeld()
	if acks != nil {
		close(acks)
		settled.Wait()
	}
}

// takeSlots takes k buffer slots, waiting for each; it reports false, with
// none taken, when the pump stops first. Receivers waiting at once cannot
// deadlock: each takes at most BufferSize of the NoOfPerformers x
// BufferSize slots, so while one waits a slot is free or held by a message
// a worker will take. (A buffered channel, not x/sync's semaphore: its
// waiting Acquire allocated and locked per call, and cost the no-op memory
// pump 10% more than these channel operations.)
func (r *run) takeSlots(slots chan struct{}, k int) bool {
	for got := range k {
		select {
		case <-slots:
			continue
		case <-r.recvCtx.Done():
		}
		putSlots(slots, got)
		return false
	}
	return true
}

// putSlots gives back k buffer slots (k <= 0: none).
func putSlots(slots chan struct{}, k int) {
	for range k {
		slots <- struct{}{}
	}
}

// ackBatchWait is how long a settler waits for a batch of acknowledgements
// to fill (1 ms) before it sends what it has: flushing whenever none was
// waiting sent batches of seven on SQS under load, a third more
// DeleteMessageBatch calls than the plain SDK loop (ADR 0005).
const ackBatchWait = time.Millisecond

// settler acknowledges in batches of up to 10, sending a batch when it is
// full or ackBatchWait after its first acknowledgement, and what is left
// when acks closes.
func (r *run) settler(ba broker.BatchAcknowledger, acks <-chan ackItem) {
	batch := make([]ackItem, 0, 10)
	ms := make([]*message.Message, 0, 10)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		for _, a := range batch {
			ms = append(ms, a.m)
		}
		before := time.Now() // see run.unsettled
		ctx, cancel := r.call()
		errs := ba.AcknowledgeBatch(ctx, ms)
		cancel()
		for i, a := range batch {
			var err error
			if i < len(errs) {
				err = errs[i]
			}
			r.p.settled(err)
			// A failed acknowledgement leaves the message on the broker:
			// its key's later messages wait for it (issue 28).
			r.holds.ackSettled(a.m, a.done, before, err)
			if a.late {
				r.leases.settledLate(a.m.Header.MessageID, err, true)
			}
			if err == nil {
				// Answered success: its deferrals here are forgotten, even
				// when the receipt had lapsed (a stale settle must never
				// make its return look spent).
				r.acknowledged(a.m)
			}
			r.p.emit(ackEvent(a.m, a.took, a.late, err))
			batch[i], ms[i] = ackItem{}, nil
		}
		batch, ms = batch[:0], ms[:0]
	}
	wait := time.NewTimer(ackBatchWait)
	wait.Stop()
	for a := range acks {
		batch = append(batch, a)
		wait.Reset(ackBatchWait)
	fill:
		for len(batch) < cap(batch) {
			select {
			case a2, ok := <-acks:
				if !ok {
					wait.Stop()
					flush()
					return
				}
				batch = append(batch, a2)
			case <-wait.C:
				break fill
			}
		}
		wait.Stop()
		flush()
	}
	flush()
}

// heldMessage is a received message on its way from a Proactor receiver to
// a worker, with its lease tracking (the zero leaseRef when none is tracked).
type heldMessage struct {
	m     *message.Message
	lease leaseRef
	slot  bool // it holds a receive-ahead slot until a worker takes it
}

// ackItem is an acknowledgement waiting for a settler: the message and how
// long its handler took (for the acknowledged event).
type ackItem struct {
	m    *message.Message
	took time.Duration
	late bool // settled after its lease lapsed (leases.settledLate)
	// done is closed when the acknowledgement has been sent (keyed
	// messages only: keyHolds.ackPending; nil otherwise).
	done chan struct{}
}

// ErrCutOff is the Err of the EventDeferred emitted for a message whose
// handler was still running when a stop's DrainTimeout expired: the
// handler was cancelled and did not get to decide, so the message is
// released (requeue 0) without counting a delivery or applying the
// redelivery budget (R-4 judges handler outcomes, not our shutdown).
var ErrCutOff = errors.New("handler cut off by the stop's drain timeout; message released, not counted")

// handle dispatches one message and settles it. With acks not nil,
// acknowledgements are handed to the settler.
//
// A message whose lease lapsed while it waited is not dispatched: it is
// dropped without a broker call (the broker redelivers it) and reported as
// EventLeaseLapsed (issue 12). A dispatched message's lease tracking ends
// before it is settled. A message that arrives with its redelivery budget
// already spent is routed without dispatch (exhausted; issue 28).
//
// st is m's lease tracking (the zero leaseRef when none is tracked).
func (r *run) handle(m *message.Message, st leaseRef, acks chan<- ackItem) {
	p := r.p
	// An earlier message of m's key whose batched acknowledgement is not
	// sent yet decides whether m is held back: wait for it (issue 28).
	r.holds.awaitAck(m)
	now := time.Now() // one clock reading for the lease check and the handler's start
	switch adm := r.leases.admit(m, st, now); adm.kind {
	case admitLapsed:
		r.holds.hold(m, now, 0) // it comes back: the later messages of its key wait for it
		p.emit(Event{Kind: EventLeaseLapsed, Message: m, DeliveryCount: m.Header.HandledCount})
		return
	case admitAbsorbed:
		return // an earlier delivery of it settles with its receipt (issue 34)
	case admitSuperseded:
		r.settleSuperseded(m, adm.refused, adm.again, adm.stale)
		return
	default:
		if adm.lapsed != nil {
			// It lapsed; a later delivery of it, absorbed while it waited,
			// is handled in its place.
			p.emit(Event{Kind: EventLeaseLapsed, Message: m, DeliveryCount: m.Header.HandledCount})
			m, st = adm.m, adm.ref
		}
	}
	p.emit(Event{Kind: EventReceived, Message: m, DeliveryCount: m.Header.HandledCount})
	if m.Header.MessageType == message.MTUnacceptable {
		// Just admitted: its lease has not lapsed.
		if f, _ := r.leases.settling(m, st, now, false); f != nil {
			m.Receipt = f.Receipt
		}
		p.countUnacceptable(r)
		// The consumer names the field and the problem when it could not
		// decode the message; without that, the message itself arrived
		// typed MT_UNACCEPTABLE (issue 14: say so, not a bare "failed to
		// parse").
		desc := "message type: the message arrived as MT_UNACCEPTABLE"
		if m.Undecodable != "" {
			desc = m.Undecodable
		} else if s, ok := m.Header.Bag.String(message.KeyRejectionMessage); ok && s != "" {
			desc = s
		}
		r.unsettled(m, time.Now(), r.reject(m, message.Rejection{Reason: message.ReasonUnacceptable, Description: desc}, Unacceptable, 0, false))
		return
	}
	if held, delay := r.holds.heldBack(m, now); held {
		r.holdBack(m, st, delay)
		return
	}
	if why := r.exhausted(m); why != arrivalHandle {
		// Final, as a handler's Reject is: the settle uses the freshest
		// receipt (issue 34).
		f, late := r.leases.settling(m, st, now, true)
		if f != nil {
			m.Receipt = f.Receipt
		}
		end := r.rejectExhausted(m, why)
		r.unsettled(m, time.Now(), end)
		if late {
			r.leases.settledLate(m.Header.MessageID, nil, r.staleSettle(m, Reject, end.gone, 0))
		}
		return
	}
	start := now
	res := r.dispatch(m)
	settling := time.Now() // before any settle call: see unsettled
	took := settling.Sub(start)
	// The settle uses the freshest receipt of the message this run holds
	// (issue 34): a later delivery received while the handler ran.
	cut := res.Outcome != Ack && r.handlerCtx.Err() != nil
	final := !cut && (res.Outcome == Ack || res.Outcome == Reject || res.Outcome == Unacceptable)
	f, late := r.leases.settling(m, st, settling, final)
	if f != nil {
		m.Receipt = f.Receipt
	}
	if cut {
		// Cut off by the stop: the handler's verdict is the cancellation's,
		// not the message's. Release it, uncounted and unjudged.
		p.emit(Event{Kind: EventDeferred, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Duration: took, Err: ErrCutOff})
		r.keep(m)
		return
	}
	switch res.Outcome {
	case Ack:
		if acks != nil {
			acks <- ackItem{m: m, took: took, late: late, done: r.holds.ackPending(m)}
			return
		}
		ctx, cancel := r.call()
		err := p.consumer.Acknowledge(ctx, m)
		cancel()
		p.settled(err)
		if late {
			r.leases.settledLate(m.Header.MessageID, err, true)
		}
		if err != nil {
			r.holds.hold(m, settling, 0)
		} else {
			r.acknowledged(m) // as in the settler: a lapsed receipt included
		}
		p.emit(ackEvent(m, took, late, err))
	case Reject:
		p.countUnacceptable(r)
		end := r.rejectHandled(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: res.Reason}, Reject, took)
		r.unsettled(m, settling, end)
		if late {
			r.leases.settledLate(m.Header.MessageID, nil, r.staleSettle(m, Reject, end.gone, 0))
		}
	case Unacceptable:
		p.countUnacceptable(r)
		end := r.rejectHandled(m, message.Rejection{Reason: message.ReasonUnacceptable, Description: res.Reason}, Unacceptable, took)
		r.unsettled(m, settling, end)
		if late {
			r.leases.settledLate(m.Header.MessageID, nil, r.staleSettle(m, Unacceptable, end.gone, 0))
		}
	default: // Defer, and anything unknown: never lose the message.
		end := r.requeue(m, res, took)
		r.unsettled(m, settling, end)
		if late {
			r.staleSettle(m, Defer, end.requeued, end.delay)
		}
	}
}

// dispatch calls the handler, turning a panic into a Defer with an error.
func (r *run) dispatch(m *message.Message) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = Result{Outcome: Defer, Err: fmt.Errorf("handler panicked: %v", v)}
		}
	}()
	return r.p.handler(r.handlerCtx, m)
}

// requeue applies the redelivery budget (R-4..R-7, reference §8.4): the
// count goes up by one (saturating, never wrapping); with a budget
// (RequeueCount != -1) reached by broker.BudgetSpent, the message is
// rejected with DeliveryError; otherwise it is requeued. A routed copy's
// budget is judged on this channel's own delivery attempt while its
// HandledCount stays the stamped evidence of the source channel (R-11,
// R-28; docs/adr/0001 §9). It reports what the settle left of m (settleEnd).
func (r *run) requeue(m *message.Message, res Result, took time.Duration) settleEnd {
	p := r.p
	spent, presented := broker.BudgetSpent(m), m.Header.HandledCount
	m.Header.HandledCount = message.SaturatingAdd(max(presented, 0), 1)
	budget := p.opts.RequeueCount
	runs := 1
	if budget != -1 {
		runs = p.here.ran(m.Header.MessageID)
	}
	if budget != -1 && spent >= budget {
		p.emit(Event{Kind: EventBudgetExhausted, Message: m, DeliveryCount: m.Header.HandledCount, Spent: spent, Outcome: Defer, Duration: took, Err: res.Err})
		p.countUnacceptable(r)
		desc := fmt.Sprintf("redelivery budget exhausted: delivery count %d reached requeueCount %d (delivered %s, handled %s here)", m.Header.HandledCount, budget, times(spent), times(runs))
		if m.HasRejectionMetadata() {
			desc = fmt.Sprintf("redelivery budget exhausted: delivery %d on this channel reached requeueCount %d (a routed copy; stamped count %d from %s; handled %s here)",
				spent, budget, presented, routedFrom(m), times(runs))
		}
		// The last failure's cause, so the dead-letter copy says why.
		if res.Reason != "" {
			desc += ": " + res.Reason
		} else if res.Err != nil {
			desc += ": " + res.Err.Error()
		}
		end := r.reject(m, message.Rejection{Reason: message.ReasonDeliveryError, Description: desc}, Defer, took, false)
		r.budgetRouted(m, end)
		return end
	}
	delay := res.Delay
	if delay <= 0 {
		delay = p.opts.RequeueDelay
	}
	delay = broker.AppliedDelay(p.consumer, delay) // as the broker bounds it: what is logged
	ctx, cancel := r.call()
	err := p.consumer.Requeue(ctx, m, delay)
	cancel()
	p.settled(err)
	if err != nil {
		p.emit(Event{Kind: EventSettleFailed, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: Defer, Err: err})
		return settleEnd{}
	}
	// A routed copy's count is the stamped evidence of the channel that
	// rejected it, which its requeue does not change: the event shows it
	// as received, and Spent shows the budget's own count (issue 28: it
	// said delivery_count=4 budget=3 for a copy stamped 3 on its first
	// delivery here).
	count := m.Header.HandledCount
	if m.HasRejectionMetadata() {
		count = presented
	}
	p.emit(Event{Kind: EventDeferred, Message: m, DeliveryCount: count, Spent: spent, Outcome: Defer, Delay: delay, Duration: took, Err: res.Err})
	return settleEnd{delay: delay, requeued: true}
}

// routedFrom names the topic a routed copy was rejected from, for a
// rejection description.
func routedFrom(m *message.Message) string {
	if s, _ := m.Header.Bag.String(message.KeyOriginalTopic); s != "" {
		return s
	}
	return "an unnamed topic"
}

// rejectHandled routes m after its handler rejected it (Reject or
// Unacceptable): reject, and a message gone from the broker is forgotten by
// the record of messages handled here.
func (r *run) rejectHandled(m *message.Message, rej message.Rejection, o Outcome, took time.Duration) settleEnd {
	end := r.reject(m, rej, o, took, false)
	if end.gone {
		r.acknowledged(m)
	} else {
		r.p.here.rejectionFailed(m.Header.MessageID, rej, o)
	}
	return end
}

// acknowledged forgets m in the record of messages handled here: it is gone
// from the broker. A first delivery was never recorded (only deferrals are),
// so it costs no look-up.
func (r *run) acknowledged(m *message.Message) {
	if m.Header.HandledCount > 0 || m.DeliveryAttempt > 1 {
		r.p.here.forget(m.Header.MessageID)
	}
}

// reject routes m; took is how long its handler ran (0 when none ran);
// retry marks a routing retried after this process's earlier routing of m
// failed (Event.Retry). It reports what it left of m: gone when routed and
// acknowledged, or acknowledged with no destination; else still on the
// broker (released after a failed routing, with its delay, or a settle call
// failed).
func (r *run) reject(m *message.Message, rej message.Rejection, o Outcome, took time.Duration, retry bool) settleEnd {
	// The Router bounds each of its broker calls by the call timeout.
	res := r.p.consumer.Reject(broker.WithCallTimeout(r.settleCtx, r.p.opts.CallTimeout), m, rej)
	r.p.settled(res.Err)
	r.p.emit(Event{Kind: EventRejected, Message: m, DeliveryCount: m.Header.HandledCount, Outcome: o,
		Reason: rej.Reason, Description: rej.Description, Route: res.Route, Destination: res.Destination, Err: res.Err, Duration: took,
		Delay: res.ReleaseDelay, Permanent: res.Permanent, Retry: retry})
	return settleEnd{gone: res.Err == nil && !res.Released, delay: res.ReleaseDelay}
}

// countUnacceptable implements Brighter's unacceptable-message window
// (reference §8.5) and stops the pump at the limit.
func (p *Pump) countUnacceptable(r *run) {
	if p.opts.UnacceptableMessageLimit <= 0 {
		return
	}
	p.unaccMu.Lock()
	now := time.Now()
	if p.unaccCount == 0 || (p.opts.UnacceptableMessageLimitWindow > 0 && now.Sub(p.unaccStart) > p.opts.UnacceptableMessageLimitWindow) {
		p.unaccCount, p.unaccStart = 0, now
	}
	p.unaccCount++
	n := p.unaccCount
	p.unaccMu.Unlock()
	if n >= p.opts.UnacceptableMessageLimit && p.limitHit.CompareAndSwap(false, true) {
		r.halt(fmt.Errorf("subscription %s: %w: %d unacceptable messages (unacceptableMessageLimit %d)", p.opts.Subscription, ErrUnacceptableLimit, n, p.opts.UnacceptableMessageLimit))
	}
}
