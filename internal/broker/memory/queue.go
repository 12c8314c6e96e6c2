package memory

import (
	"container/heap"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

type entry struct {
	msg       *message.Message
	visibleAt time.Time
	token     uint64 // changes on every receive; a receipt holds the token it was given
	index     int    // position in the waiting heap, -1 when not there
	inFlight  bool
	done      bool
}

type receipt struct {
	q     *queue
	e     *entry
	token uint64
}

type queue struct {
	name    string
	ready   []*entry
	head    int
	waiting waitHeap // delayed and in-flight entries, by visibleAt
	notify  chan struct{}
	waiters int // receivers blocked on notify
	tokens  uint64
}

// signalLocked wakes every receiver waiting on the queue. With none waiting
// there is nobody to wake, so the channel is kept (no allocation per
// acknowledge on a busy queue).
func (q *queue) signalLocked() {
	if q.waiters == 0 {
		return
	}
	close(q.notify)
	q.notify = make(chan struct{})
}

// promoteLocked moves entries whose time has come to the ready list; an
// in-flight entry whose visibility timeout lapsed becomes receivable again.
func (q *queue) promoteLocked(now time.Time) {
	for q.waiting.Len() > 0 && !q.waiting[0].visibleAt.After(now) {
		e := heap.Pop(&q.waiting).(*entry)
		e.inFlight = false
		q.ready = append(q.ready, e)
	}
}

func (q *queue) popReadyLocked() *entry {
	if q.head >= len(q.ready) {
		return nil
	}
	e := q.ready[q.head]
	q.ready[q.head] = nil
	q.head++
	if q.head == len(q.ready) {
		q.ready, q.head = q.ready[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.ready) {
		n := copy(q.ready, q.ready[q.head:])
		clear(q.ready[n:])
		q.ready, q.head = q.ready[:n], 0
	}
	return e
}

type waitHeap []*entry

func (h waitHeap) Len() int { return len(h) }

func (h waitHeap) Less(i, j int) bool { return h[i].visibleAt.Before(h[j].visibleAt) }

func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *waitHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.index = -1
	*h = old[:n-1]
	return e
}
