package pump

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

var laneSeed = maphash.MakeSeed()

// proactor runs NoOfPerformers receivers and NoOfPerformers workers. Keyed
// messages go to the worker owning the key's lane, one by one; a batch with
// no keyed message goes, whole, as one run to a shared queue any idle
// worker takes, and a worker with nothing to do takes the second half of
// what another worker's run has left (runSlot.steal), so a batch is
// handed over once and still spreads over idle workers. When the consumer offers
// broker.BatchAcknowledger, acknowledgements go to the settle batcher
// (settler.go), as the Reactor's do: a worker sends a batch its
// acknowledgement filled, and NoOfPerformers senders the batches due on
// their bound.
//
// The receive-ahead buffer has NoOfPerformers x BufferSize slots
// (receiveSlots, a counter): a receiver takes BufferSize of them before its receive and
// gives back those its messages did not fill; each message gives its own
// back when a worker takes it to dispatch. So no more messages wait than
// the buffer holds, none waits for a lease it does not need, and
// every receive still asks for a full batch, as the plain SDK loop does:
// receives sized to the free slots averaged eight messages of ten on SQS,
// a quarter more receive calls, each a billed request (ADR 0005).
func (r *run) proactor() {
	p := r.p
	n := p.opts.NoOfPerformers
	b := p.opts.BufferSize
	slots := newReceiveSlots(n, b)
	lanes := make([]chan heldRun, n)
	for i := range lanes {
		lanes[i] = make(chan heldRun, p.opts.BufferSize)
	}
	shared := make(chan heldRun, n*p.opts.BufferSize)

	// One batcher and, for batches due on their bound, one sender per
	// performer, so that batch acknowledgements (one broker round trip
	// each) overlap as the receives do; acknowledging has no order to keep
	// (settler.go).
	acks, flush := r.startSettler()

	// Runs of keyless messages are shared out by stealing: a worker about
	// to wait for work first takes the second half of what another worker's
	// run has left (runSlot.steal), and a worker about to handle a message
	// of a run with more left wakes a waiting one (wake) to do so. idle
	// counts the workers about to wait or waiting. A worker publishes its
	// run before it reads idle, and a waiting one counts itself before it
	// looks for runs to steal, so no message waits behind a running handler
	// while a worker is idle: either the runner sees the count and wakes
	// it, or the idle one sees the run.
	var idle atomic.Int32
	wake := make(chan struct{}, n)
	runs := make([]*runSlot, n)
	for i := range runs {
		runs[i] = &runSlot{}
	}
	// signal wakes a waiting worker, if any, to steal.
	signal := func() {
		if idle.Load() > 0 {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
	steal := func(self int) (heldRun, bool) {
		for k := 1; k < n; k++ {
			if u, left, ok := runs[(self+k)%n].steal(); ok {
				if left > 0 {
					signal() // what the victim has left is for another idle worker
				}
				return u, true
			}
		}
		return heldRun{}, false
	}
	var workers sync.WaitGroup
	for i := range n {
		workers.Add(1)
		go func(self int, own, shared chan heldRun) {
			defer workers.Done()
			sink := newAckSink(acks, nil)
			mine := runs[self]
			// own and shared are this worker's copies: setting one to nil
			// when it closes must not touch the other workers'.
			for own != nil || shared != nil {
				var u heldRun
				ok, from := false, (chan heldRun)(nil)
				select {
				case u, ok = <-own:
					from = own
				case u, ok = <-shared:
					from = shared
				default:
					idle.Add(1)
					if u, ok = steal(self); !ok {
						select {
						case u, ok = <-own:
							from = own
						case u, ok = <-shared:
							from = shared
						case <-wake:
							u, ok = steal(self)
						}
					}
					idle.Add(-1)
				}
				if !ok {
					// A closed channel answers at once: stop reading it.
					switch from {
					case own:
						own = nil
					case shared:
						shared = nil
					}
					continue
				}
				r.handling.Add(1) // the run's handlers run or may: see AwaitingReceive
				mine.start(u)
				var last time.Time // the previous message's reading of the clock (handleAt)
				for {
					m, lease, slot, left, ok := mine.take()
					if !ok {
						break
					}
					if left > 0 {
						signal()
					}
					if slot {
						slots.put(1) // its buffer slot is free again
					}
					if r.stopping() && !r.mayStart() {
						r.release(m, lease)
						last = time.Time{}
						continue
					}
					_, last = r.handleAt(m, lease, sink, last)
				}
				r.handling.Add(-1)
			}
		}(i, lanes[i], shared)
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
	// keyless queues a run of keyless messages for any idle worker.
	keyless := func(u heldRun) {
		if n == 1 {
			lanes[0] <- u
			return
		}
		select {
		case shared <- u:
		default:
			// All lanes busy: queue round-robin so receiving stays
			// bounded by the lanes' capacity.
			lanes[next.Add(1)%uint64(n)] <- u
		}
	}
	for range n {
		receivers.Add(1)
		go func() {
			defer receivers.Done()
			for {
				// A whole receive's worth of slots, or none: a receive always
				// asks for a full batch.
				if !slots.take(r.recvCtx.Done()) {
					return
				}
				if !overlap {
					recvMu.Lock()
				}
				ms, lb, ok := r.receive()
				if overlap {
					if !ok {
						slots.put(b)
						return
					}
					recvMu.Lock()
				} else if !ok {
					recvMu.Unlock()
					slots.put(b)
					return
				}
				queued := 0
				if allKeyless(ms) {
					// One hand-off for the batch; an idle worker steals
					// part of it from the one running it. A consumer that returns more than a
					// batch gives the extra messages no slot: the count of
					// slots stays exact.
					queued = len(ms)
					keyless(heldRun{ms: ms, lb: lb, slots: min(queued, b)})
				} else {
					for i, msg := range ms {
						if msg.Header.MessageType == message.MTQuit {
							r.halt(nil)
							continue
						}
						queued++
						u := heldRun{ms: ms[i : i+1], lb: lb, first: i}
						if queued <= b {
							u.slots = 1
						}
						if k := msg.Header.PartitionKey; k != "" {
							lanes[maphash.String(laneSeed, k)%uint64(n)] <- u
						} else {
							keyless(u)
						}
					}
				}
				recvMu.Unlock()
				slots.put(b - min(queued, b))
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
	flush()
}

// allKeyless reports whether ms holds messages, none with a partition key
// and none MT_QUIT: a run a worker may share with idle ones.
func allKeyless(ms []*message.Message) bool {
	for _, m := range ms {
		if m.Header.PartitionKey != "" || m.Header.MessageType == message.MTQuit {
			return false
		}
	}
	return len(ms) > 0
}

// receiveSlots counts the free slots of the Proactor's receive-ahead
// buffer (NoOfPerformers x BufferSize): a receiver takes a whole receive's
// worth (BufferSize) at once before its receive (take), and slots come back
// one by one as workers take messages to dispatch, or in a number when a
// receive brought fewer (put). Receivers waiting at once cannot deadlock:
// each takes BufferSize of the NoOfPerformers x BufferSize slots, so while
// one waits a slot is free or held by a message a worker will take, whose
// put wakes it.
//
// A counter, not a buffered channel of tokens: a worker gives its slot
// back with one atomic add, not a channel send, and a waiting receiver is
// woken once, when a whole batch's worth is free, not at every slot (a
// channel woke the receiver parked on it for each of the ten tokens it
// waited for). (x/sync's semaphore allocated and locked per waiting
// Acquire, and cost the no-op memory pump 10% more than a channel did.)
type receiveSlots struct {
	free    atomic.Int64
	waiting atomic.Int32  // receivers about to wait or waiting in take
	wake    chan struct{} // a waiting receiver's signal that a batch's worth may be free
	batch   int64         // what take takes: BufferSize
}

// newReceiveSlots returns n x b free slots, taken b at a time.
func newReceiveSlots(n, b int) *receiveSlots {
	s := &receiveSlots{wake: make(chan struct{}, n), batch: int64(b)}
	s.free.Store(int64(n * b))
	return s
}

// take takes a receive's worth of slots (BufferSize), waiting until that
// many are free; it reports false, with none taken, when done is closed
// first. A waiter counts itself before it looks at the free count, and put
// adds before it looks at the waiters, so either put sees the waiter and
// wakes one, or the waiter sees what put freed.
func (s *receiveSlots) take(done <-chan struct{}) bool {
	for {
		if f := s.free.Load(); f >= s.batch {
			if s.free.CompareAndSwap(f, f-s.batch) {
				if f-s.batch >= s.batch {
					s.signal() // enough left for another waiting receiver
				}
				return true
			}
			continue
		}
		s.waiting.Add(1)
		if s.free.Load() >= s.batch {
			s.waiting.Add(-1)
			continue
		}
		select {
		case <-s.wake:
			s.waiting.Add(-1)
		case <-done:
			s.waiting.Add(-1)
			return false
		}
	}
}

// put gives back k slots (k <= 0: none) and wakes a waiting receiver once
// a receive's worth is free.
func (s *receiveSlots) put(k int) {
	if k <= 0 {
		return
	}
	if s.free.Add(int64(k)) >= s.batch {
		s.signal()
	}
}

// signal wakes one waiting receiver, if any (a wake-up already pending
// does for it: wake has room for every receiver).
func (s *receiveSlots) signal() {
	if s.waiting.Load() > 0 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// heldRun is a run of received messages on their way from a Proactor
// receiver to a worker, in the order received: a whole batch of keyless
// messages, or one message (a keyed one, or any of a batch holding one).
type heldRun struct {
	ms    []*message.Message
	lb    heldBatch // the lease tracking of the batch ms came from
	first int       // the index of ms[0] in that batch (lb.at)
	slots int       // how many of ms, from the first, hold a receive-ahead slot until a worker takes them
}

// runSlot is the run a Proactor worker is handling: the worker takes its
// messages in order (take), and an idle worker may take the second half
// of what is left (steal).
type runSlot struct {
	mu   sync.Mutex
	u    heldRun
	next int // the index in u.ms of the next message to take
}

// start makes u the slot's run.
func (s *runSlot) start(u heldRun) {
	s.mu.Lock()
	s.u, s.next = u, 0
	s.mu.Unlock()
}

// take returns the run's next message, its lease tracking, whether it
// holds a receive-ahead slot, and how many are left after it; ok is false
// when none is left.
func (s *runSlot) take() (m *message.Message, lease leaseRef, slot bool, left int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.next
	if j >= len(s.u.ms) {
		s.u = heldRun{} // keep no messages alive
		return nil, leaseRef{}, false, 0, false
	}
	s.next++
	return s.u.ms[j], s.u.lb.at(s.u.first + j), j < s.u.slots, len(s.u.ms) - s.next, true
}

// steal takes the second half (rounded up) of what is left of the run, in
// order, and reports how many the run has left after it; ok is false when
// nothing was left.
func (s *runSlot) steal() (stolen heldRun, left int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	left = len(s.u.ms) - s.next
	if left <= 0 {
		return heldRun{}, 0, false
	}
	mid := len(s.u.ms) - (left+1)/2
	u := s.u
	stolen = heldRun{ms: u.ms[mid:], lb: u.lb, first: u.first + mid, slots: max(u.slots-mid, 0)}
	s.u = heldRun{ms: u.ms[:mid], lb: u.lb, first: u.first, slots: min(u.slots, mid)}
	return stolen, mid - s.next, true
}
