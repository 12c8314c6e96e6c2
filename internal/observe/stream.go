package observe

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Default sizes of a Stream's buffers.
const (
	// DefaultReaderBuffer is how many records a reader may fall behind
	// before records are dropped for it.
	DefaultReaderBuffer = 4096
	// DefaultBacklog is how many recent records a new reader is sent first,
	// so a dashboard that connects late still sees recent history.
	DefaultBacklog = 256
)

// Stream is a pump.Observer that fans records out to live readers (the
// /events endpoint, the in-process dashboard). Each reader has a bounded
// buffer; when it is full the record is dropped for that reader and counted
// (Dropped, and the reader's own drop count). Observe never blocks: it holds
// a short mutex, converts the event and does non-blocking channel sends.
type Stream struct {
	readerBuffer int

	mu      sync.Mutex
	readers map[*Reader]struct{}
	infos   []*Record
	depths  map[string]*Record
	// conn is the latest KindConnecting record while the channels open,
	// nil before and once they are (Connected).
	conn    *Record
	backlog []backlogEntry // ring of the last len(backlog) records
	next    int
	filled  bool

	dropped atomic.Uint64
	red     atomic.Pointer[redact.Redactor]
}

// SetRedactor makes the stream mask r's secrets in the description and
// error of every record it makes from a pump event from now on (see
// FromEventRedacted); before it, or with nil, those pass the URL rule
// only. consume gives it the run's Redactor, so /events shows no secret of
// the run, whatever wrote the text.
func (s *Stream) SetRedactor(r *redact.Redactor) { s.red.Store(r) }

// NewStream makes a stream whose readers buffer readerBuffer records and
// whose new readers first receive up to backlog recent records (0 = none).
// Non-positive readerBuffer means DefaultReaderBuffer.
func NewStream(readerBuffer, backlog int) *Stream {
	if readerBuffer <= 0 {
		readerBuffer = DefaultReaderBuffer
	}
	if backlog < 0 {
		backlog = 0
	}
	return &Stream{
		readerBuffer: readerBuffer,
		readers:      make(map[*Reader]struct{}),
		depths:       make(map[string]*Record),
		backlog:      make([]backlogEntry, backlog),
	}
}

// Describe records a subscription's description; every reader, present and
// future, receives it (future readers first of all).
func (s *Stream) Describe(subscription string, info SubscriptionInfo) {
	r := &Record{Kind: KindSubscription, Subscription: subscription, Budget: info.Budget, Info: &info}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Time = nowUTC()
	s.infos = append(s.infos, r)
	s.fanoutLocked(r)
}

// Connecting records that the consumer is opening the channel of
// subscription (from since), those of opened being open already: every
// reader receives a KindConnecting record, and a reader that subscribes
// before Connected receives the latest one after the descriptions. The
// record carries subscription's budget from its description (-1 when it
// has none). opened is copied.
func (s *Stream) Connecting(subscription string, opened []string, since time.Time) {
	r := &Record{Kind: KindConnecting, Subscription: subscription, Budget: -1, Since: since.UTC(), Opened: slices.Clone(opened)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.infos {
		if d.Subscription == subscription {
			r.Budget = d.Budget
		}
	}
	r.Time = nowUTC()
	s.conn = r
	s.fanoutLocked(r)
}

// Connected records that every channel is open: every reader receives a
// KindConnected record, and readers that subscribe from now on receive no
// KindConnecting record. Neither goes into the backlog.
func (s *Stream) Connected() {
	r := &Record{Kind: KindConnected}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Time = nowUTC()
	s.conn = nil
	s.fanoutLocked(r)
}

// backlogEntry is one record of a Stream's backlog: rec, or, for a pump
// event observed while no reader was connected, the event itself (ev,
// when rec is nil and event is set), made a record only when a reader
// subscribes.
type backlogEntry struct {
	rec   *Record
	ev    pump.Event
	event bool
}

// record returns e's record, made from its event (and kept) when it has
// none yet; nil for an empty slot. s.mu is held.
func (s *Stream) record(e *backlogEntry) *Record {
	if e.rec == nil && e.event {
		r := FromEventRedacted(e.ev, s.red.Load())
		*e = backlogEntry{rec: &r}
	}
	return e.rec
}

// Observe implements pump.Observer. With no reader connected, the event
// goes into the backlog as it is, a value in the ring: the pump pays for
// no record (two a message: received and acknowledged), which is made when
// a reader subscribes and reads the backlog, as it would have been made
// now (the pump and transports never modify what a record reads of a
// message once it has been received; see FromEventRedacted).
func (s *Stream) Observe(e pump.Event) {
	s.mu.Lock()
	if len(s.readers) == 0 {
		if len(s.backlog) > 0 {
			s.backlog[s.next] = backlogEntry{ev: e, event: true}
			s.advanceLocked()
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	r := FromEventRedacted(e, s.red.Load())
	s.publish(&r)
}

// advanceLocked moves the backlog's ring on by one; s.mu is held.
func (s *Stream) advanceLocked() {
	s.next++
	if s.next == len(s.backlog) {
		s.next, s.filled = 0, true
	}
}

// Publish sends r to every reader and keeps it in the backlog; the latest
// KindDLQDepth record of each subscription is kept for new readers instead.
func (s *Stream) Publish(r Record) { s.publish(&r) }

// publish shares r (read-only from here on) with every reader: the pump
// pays for one pointer per reader, not a copy of the record.
func (s *Stream) publish(r *Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Kind == KindDLQDepth {
		s.depths[r.Subscription] = r
	} else if len(s.backlog) > 0 {
		s.backlog[s.next] = backlogEntry{rec: r}
		s.advanceLocked()
	}
	s.fanoutLocked(r)
}

func (s *Stream) fanoutLocked(r *Record) {
	for rd := range s.readers {
		select {
		case rd.ch <- r:
		default:
			rd.dropped.Add(1)
			s.dropped.Add(1)
		}
	}
}

// Dropped returns how many records were dropped, over all readers, because
// a reader's buffer was full.
func (s *Stream) Dropped() uint64 { return s.dropped.Load() }

// Readers returns the number of connected readers.
func (s *Stream) Readers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.readers)
}

// Subscribe adds a reader. It first receives the subscription descriptions,
// the latest DLQ depths, the latest KindConnecting record while the
// channels open (Connecting) and the backlog, then live records. The caller must
// Close it.
func (s *Stream) Subscribe() *Reader {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.infos) + len(s.depths) + 1 + len(s.backlog)
	rd := &Reader{s: s, ch: make(chan *Record, n+s.readerBuffer)}
	for _, r := range s.infos {
		rd.ch <- r
	}
	for _, r := range s.depths {
		rd.ch <- r
	}
	if s.conn != nil {
		rd.ch <- s.conn
	}
	if s.filled {
		for i := range s.backlog[s.next:] {
			rd.ch <- s.record(&s.backlog[s.next+i])
		}
	}
	for i := range s.backlog[:s.next] {
		rd.ch <- s.record(&s.backlog[i])
	}
	s.readers[rd] = struct{}{}
	return rd
}

// Reader is one subscriber of a Stream.
type Reader struct {
	s       *Stream
	ch      chan *Record
	dropped atomic.Uint64
	once    sync.Once
}

// C delivers the reader's records, shared with other readers: treat them
// as read-only. It is never closed; stop reading after Close.
func (rd *Reader) C() <-chan *Record { return rd.ch }

// TakeDropped returns how many records this reader missed since the last
// call, and resets the count.
func (rd *Reader) TakeDropped() uint64 { return rd.dropped.Swap(0) }

// Close removes the reader from its stream.
func (rd *Reader) Close() {
	rd.once.Do(func() {
		rd.s.mu.Lock()
		delete(rd.s.readers, rd)
		rd.s.mu.Unlock()
	})
}
