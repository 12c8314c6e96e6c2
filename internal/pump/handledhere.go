package pump

import (
	"sync"
	"sync/atomic"

	"github.com/brightergo/brighter/internal/message"
)

// handledHereCap bounds the record of messages handled in this process
// (entries, one per message id). A message forgotten because the record was
// full costs at most one more handler run, never the message: see
// handledHere.
const handledHereCap = 1 << 16

// handledHere is the pump's record of the messages whose handler ran in
// this process and whose settle has not yet ended them: how many times the
// handler ran here, and, once the redelivery budget judged the message
// exhausted and the routing to its dead-letter destination failed, the
// count the budget judged. It is what lets a later delivery of the message
// be routed without a handler run (the budget was spent by handlers) while
// a delivery whose count was raised by stops and kills still gets its
// handler run (docs/adr/0001-delivery-count-contract.md §10). It also
// records a handler's verdict whose settle failed, so that the message's
// next delivery here carries the verdict out without a handler run: a
// rejection whose routing failed (routed again), an acknowledgement whose
// broker call failed (acknowledged again).
//
// It is a cache, not state the tool depends on: bounded (handledHereCap
// entries, the oldest forgotten first) and lost on restart. Losing an entry
// costs at most one more handler run of that message, never the message.
// Handler runs are counted only where a budget is enforced; failed settles
// of a handler's verdict are recorded whatever the budget, and while none
// is recorded an arrival costs no look-up (failed). A handler's
// acknowledgement still waiting for the broker's answer is not recorded
// here: the settle batcher holds it until the answer is settled, and a
// later delivery that arrives meanwhile asks the batcher
// (ackBatcher.waiting).
type handledHere struct {
	mu      sync.Mutex
	entries map[string]handledEntry
	ring    []ringSlot // insertion order, for eviction when full
	next    int        // once the ring is full, the slot the next new entry takes
	seq     uint64
	// capacity is the most entries kept (handledHereCap).
	capacity int
	// failed counts the entries whose settle failed (judged, rejected or
	// ackFailed set: handledEntry.pending): while it is 0, an arrival
	// needs no look-up.
	failed atomic.Int64
}

// handledEntry is what handledHere knows of one message.
type handledEntry struct {
	seq  uint64 // which ring slot owns the entry (see ringSlot)
	runs int    // handler runs in this process
	// copies are the handler runs of each stored copy of the id
	// (message.StoredID) whose runs are counted here: what the budget's
	// rejection message says of one copy, so that two copies of one id
	// (a duplicate delivery) deferred side by side each state their own
	// runs, not both copies' together.
	copies map[string]int
	// judged is the delivery count the budget judged exhausted when this
	// process routed the message and the routing failed; 0 when it has not.
	judged int
	// rejected is the handler's rejection (Reject or Unacceptable) whose
	// routing failed here, with the outcome it came from; nil when none
	// did. Its next delivery here retries the routing without a handler run.
	rejected *handlerRejection
	// ackFailed: the handler acknowledged the message here and that
	// acknowledgement failed (the message stays on the broker), or was
	// answered with success for a receipt whose lease had lapsed by the
	// pump's clock (a stale settle: it may have removed nothing). Its next
	// delivery here is acknowledged without a handler run.
	ackFailed bool
}

// pending reports whether e records a failed settle that a later delivery
// of its message carries out without a handler run (counted in
// handledHere.failed).
func (e handledEntry) pending() bool {
	return e.judged > 0 || e.rejected != nil || e.ackFailed
}

// handlerRejection is a handler's verdict whose routing failed.
type handlerRejection struct {
	rejection message.Rejection
	outcome   Outcome
}

// ringSlot names the entry a ring position made, so that evicting a
// position whose message was forgotten and recorded again later does not
// drop the newer entry.
type ringSlot struct {
	id  string
	seq uint64
}

func newHandledHere(capacity int) *handledHere {
	return &handledHere{entries: make(map[string]handledEntry), capacity: max(capacity, 1)}
}

// ran records one more handler run of the message id, stored copy stored
// (message.StoredID; "" when the transport names none), and returns how
// many runs this process has made of that copy (of the id, when stored is
// ""), this one included. An empty id (a message the transport could not
// identify) is not recorded: 1.
func (h *handledHere) ran(id, stored string) int {
	if id == "" {
		return 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[id]
	if !ok {
		e = h.add(id)
	}
	e.runs++
	n := e.runs
	if stored != "" {
		if e.copies == nil {
			e.copies = map[string]int{}
		}
		e.copies[stored]++
		n = e.copies[stored]
	}
	h.entries[id] = e
	return n
}

// add makes id's entry, evicting the oldest when the ring is full. The
// caller holds mu and stores the entry.
func (h *handledHere) add(id string) handledEntry {
	h.seq++
	slot := ringSlot{id: id, seq: h.seq}
	if len(h.ring) < h.capacity {
		h.ring = append(h.ring, slot) // the ring grows to its capacity as needed
		return handledEntry{seq: h.seq}
	}
	old := h.ring[h.next]
	if e, ok := h.entries[old.id]; ok && e.seq == old.seq {
		h.drop(old.id, e)
	}
	h.ring[h.next] = slot
	h.next = (h.next + 1) % len(h.ring)
	return handledEntry{seq: h.seq}
}

// routingFailed records that the budget judged id exhausted at delivery
// count judged and the routing of its rejection failed: its next delivery
// here retries the routing without a handler run.
func (h *handledHere) routingFailed(id string, judged int) {
	h.markFailed(id, func(e *handledEntry) { e.judged = max(judged, 1) })
}

// rejectionFailed records that the handler rejected id and the routing of
// that rejection failed: its next delivery here retries the routing with
// the same rejection, without a handler run (a handler's rejection is
// final, as a budget's is).
func (h *handledHere) rejectionFailed(id string, rej message.Rejection, o Outcome) {
	h.markFailed(id, func(e *handledEntry) { e.rejected = &handlerRejection{rejection: rej, outcome: o} })
}

// ackFailed records that the handler acknowledged id here and that
// acknowledgement failed: its next delivery here is acknowledged without a
// handler run (the handler's Ack is final, as its rejection is).
func (h *handledHere) ackFailed(id string) {
	h.markFailed(id, func(e *handledEntry) { e.ackFailed = true })
}

// markFailed applies set, which records a failed settle, to id's entry
// (made when missing), keeping the count of such entries.
func (h *handledHere) markFailed(id string, set func(*handledEntry)) {
	if id == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[id]
	if !ok {
		e = h.add(id)
	}
	was := e.pending()
	set(&e)
	if !was && e.pending() {
		h.failed.Add(1)
	}
	h.entries[id] = e
}

// ackRetry reports whether the handler acknowledged id here and that
// acknowledgement failed (ackFailed) with no acknowledgement since. It
// costs no look-up while no settle has failed.
func (h *handledHere) ackRetry(id string) bool {
	if id == "" || h.failed.Load() == 0 {
		return false
	}
	h.mu.Lock()
	e := h.entries[id]
	h.mu.Unlock()
	return e.ackFailed
}

// rejection returns the handler's rejection of id whose routing failed
// here, or nil. It costs no look-up while no routing has failed.
func (h *handledHere) rejection(id string) *handlerRejection {
	if id == "" || h.failed.Load() == 0 {
		return nil
	}
	h.mu.Lock()
	e := h.entries[id]
	h.mu.Unlock()
	return e.rejected
}

// lookup returns what is recorded of id: the handler runs here (of the
// stored copy stored, when it is not ""), and the count the budget judged
// when a routing of it failed (0 when none did).
func (h *handledHere) lookup(id, stored string) (runs, judged int) {
	if id == "" {
		return 0, 0
	}
	h.mu.Lock()
	e := h.entries[id]
	h.mu.Unlock()
	if stored != "" {
		return e.copies[stored], e.judged
	}
	return e.runs, e.judged
}

// forget drops id: its message (stored copy stored) was acknowledged, or
// routed and gone. The runs counted of the id's other stored copies are
// kept, and only they: the next rejection message of such a copy still
// states its own runs.
func (h *handledHere) forget(id, stored string) {
	if id == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[id]
	if !ok {
		return
	}
	h.drop(id, e)
	delete(e.copies, stored)
	if len(e.copies) == 0 || stored == "" {
		return
	}
	h.entries[id] = handledEntry{seq: e.seq, copies: e.copies}
}

// drop deletes id's entry e; the caller holds mu.
func (h *handledHere) drop(id string, e handledEntry) {
	if e.pending() {
		h.failed.Add(-1)
	}
	delete(h.entries, id)
}
