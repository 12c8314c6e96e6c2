package pump

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

var laneSeed = maphash.MakeSeed()

// proactor runs NoOfPerformers receivers and NoOfPerformers workers. Keyed
// messages go to the worker owning the key's lane; keyless ones to a shared
// queue any idle worker takes. When the consumer offers
// broker.BatchAcknowledger, acknowledgements go to the settle batcher
// (settler.go), as the Reactor's do: a worker sends a batch its
// acknowledgement filled, and NoOfPerformers senders the batches due on
// their bound.
//
// The receive-ahead buffer has NoOfPerformers x BufferSize slots
// (tokens in a buffered channel): a receiver takes BufferSize of them before its receive and
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
	slots := make(chan struct{}, n*b)
	for range n * b {
		slots <- struct{}{}
	}
	lanes := make([]chan heldMessage, n)
	for i := range lanes {
		lanes[i] = make(chan heldMessage, p.opts.BufferSize)
	}
	shared := make(chan heldMessage, n*p.opts.BufferSize)

	// One batcher and, for batches due on their bound, one sender per
	// performer, so that batch acknowledgements (one broker round trip
	// each) overlap as the receives do; acknowledging has no order to keep
	// (settler.go).
	acks, flush := r.startSettler()

	var workers sync.WaitGroup
	for i := range n {
		workers.Add(1)
		go func(own, shared chan heldMessage) {
			defer workers.Done()
			sink := newAckSink(acks, nil)
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
				r.handle(m.m, m.lease, sink)
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
	flush()
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

// heldMessage is a received message on its way from a Proactor receiver to
// a worker, with its lease tracking (the zero leaseRef when none is tracked).
type heldMessage struct {
	m     *message.Message
	lease leaseRef
	slot  bool // it holds a receive-ahead slot until a worker takes it
}
