package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// RejectCall records one Reject made through a RecordingConsumer.
type RejectCall struct {
	ID string
	// Message is the message as the pump rejected it (a corpus case may
	// have no usable id: tests find it by correlation id or body).
	Message   *message.Message
	Rejection message.Rejection
	Result    broker.RejectResult
}

// RecordingConsumer decorates a real consumer: it records the integer
// delivery count presented at each receive and counts Requeue and Reject
// calls, keyed by original message id (R-27(c)). Hand the pump View, not the
// RecordingConsumer itself: View exposes exactly the optional capabilities
// of the wrapped consumer, so the pump takes the same paths it
// takes in production.
type RecordingConsumer struct {
	broker.Consumer
	mu       sync.Mutex
	counts   map[string][]int
	requeues map[string]int
	acks     map[string]int
	rejects  []RejectCall
	receives atomic.Int64
	killed   atomic.Bool
	// handed and ackedWith are the receipts each message was handed out
	// with, in order, and those its successful acknowledgements used
	// (a settle with the newest receipt is what settles a
	// message for good); handedBegan, when the Receive that handed out
	// each of handed began, and ackedAt, when each of ackedWith was
	// answered (AckCrossed).
	handed, ackedWith    map[string][]any
	handedBegan, ackedAt map[string][]time.Time
	// AfterReceive, when set before the pump starts, is called with each
	// batch a Receive returns, before the pump gets it; it may block (a
	// receive held back). BeforeAck is called before each acknowledgement
	// reaches the broker.
	AfterReceive func(ms []*message.Message)
	BeforeAck    func(m *message.Message)
	// AckFault, when set before the pump starts, is asked before each
	// acknowledgement: a non-nil error fails that acknowledgement without
	// it reaching the broker, as a network failure does.
	AckFault func(m *message.Message) error
	// ExtendFault, when set before the pump starts, is asked before each
	// lease extension of a message (broker.LeaseExtender): a non-nil error
	// fails that message's extension without it reaching the broker, as a
	// network failure does; the others of the call go through.
	ExtendFault func(m *message.Message) error
	// Receive timing (under mu): open holds the start of every Receive
	// under way, by call number; lags, per original id, how long after
	// its Receive began each delivery was returned; emptyPoll the
	// shortest Receive that returned nothing (0 before one did).
	open      map[uint64]time.Time
	calls     uint64
	lags      map[string][]time.Duration
	emptyPoll time.Duration
}

// NewRecordingConsumer wraps c.
func NewRecordingConsumer(c broker.Consumer) *RecordingConsumer {
	return &RecordingConsumer{Consumer: c, counts: map[string][]int{}, requeues: map[string]int{}, acks: map[string]int{}}
}

// errKilled is what every call of a killed RecordingConsumer returns.
var errKilled = errors.New("conformance: the consumer's process was killed; the call never reached the broker")

// Kill cuts the consumer off from its broker as a SIGKILL of its process
// would (R-4/replica-killed): from now on every Receive, settle (Acknowledge,
// AcknowledgeBatch, Requeue, Reject) and lease extension fails without
// reaching the broker and is not recorded, so whatever the consumer holds
// is settled, released and extended no more and returns to the broker only
// when its lease lapses. A call already under way completes. Close and
// Purge still reach the broker (the test's cleanup).
func (r *RecordingConsumer) Kill() { r.killed.Store(true) }

// Receives returns how many receive calls reached the broker.
func (r *RecordingConsumer) Receives() int64 { return r.receives.Load() }

// record records ms, handed out by a Receive that began at began.
func (r *RecordingConsumer) record(ms []*message.Message, began time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range ms {
		if m.Header.MessageType == message.MTQuit || m.Header.MessageType == message.MTNone {
			continue
		}
		id := m.OriginalID()
		r.counts[id] = append(r.counts[id], m.Header.HandledCount)
		if r.handed == nil {
			r.handed, r.handedBegan = map[string][]any{}, map[string][]time.Time{}
		}
		r.handed[id] = append(r.handed[id], m.Receipt)
		r.handedBegan[id] = append(r.handedBegan[id], began)
	}
}

// began records the start of a Receive and returns its call number.
func (r *RecordingConsumer) began() (uint64, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open == nil {
		r.open, r.lags = map[uint64]time.Time{}, map[string][]time.Duration{}
	}
	r.calls++
	now := time.Now()
	r.open[r.calls] = now
	return r.calls, now
}

// ended records the end of Receive call, begun at began, that returned ms.
func (r *RecordingConsumer) ended(call uint64, began time.Time, ms []*message.Message, err error) {
	took := time.Since(began)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.open, call)
	if len(ms) == 0 && err == nil && (r.emptyPoll == 0 || took < r.emptyPoll) {
		r.emptyPoll = took
	}
	for _, m := range ms {
		r.lags[m.OriginalID()] = append(r.lags[m.OriginalID()], took)
	}
}

// OpenReceives returns the start of every Receive under way.
func (r *RecordingConsumer) OpenReceives() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Time, 0, len(r.open))
	for _, at := range r.open {
		out = append(out, at)
	}
	return out
}

// Lags returns, for each delivery of the message in order, how long after
// the Receive that returned it began it was returned: how late in a long
// poll the broker handed it out (a little more: the answer's way back).
func (r *RecordingConsumer) Lags(id string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.lags[id]...)
}

// EmptyPoll returns how long the shortest Receive that returned nothing
// took (the broker's long poll), 0 before one did.
func (r *RecordingConsumer) EmptyPoll() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.emptyPoll
}

// Receive records the presented count of each message received, and when
// each Receive began and ended.
func (r *RecordingConsumer) Receive(ctx context.Context, timeout time.Duration) ([]*message.Message, error) {
	if r.killed.Load() {
		return nil, fmt.Errorf("%w: %w", broker.ErrChannelFailure, errKilled)
	}
	r.receives.Add(1)
	call, began := r.began()
	ms, err := r.Consumer.Receive(ctx, timeout)
	r.ended(call, began, ms, err)
	r.record(ms, began)
	if r.AfterReceive != nil && len(ms) > 0 {
		r.AfterReceive(ms)
	}
	return ms, err
}

// Acknowledge forwards the call and counts it when it succeeds.
func (r *RecordingConsumer) Acknowledge(ctx context.Context, m *message.Message) error {
	if r.killed.Load() {
		return errKilled
	}
	if r.BeforeAck != nil {
		r.BeforeAck(m)
	}
	if r.AckFault != nil {
		if err := r.AckFault(m); err != nil {
			return err
		}
	}
	err := r.Consumer.Acknowledge(ctx, m)
	if err == nil {
		r.acked(m)
	}
	return err
}

// acked records a successful acknowledgement of m, answered just now.
func (r *RecordingConsumer) acked(m *message.Message) {
	at := time.Now()
	r.mu.Lock()
	id := m.OriginalID()
	r.acks[id]++
	if r.ackedWith == nil {
		r.ackedWith, r.ackedAt = map[string][]any{}, map[string][]time.Time{}
	}
	r.ackedWith[id] = append(r.ackedWith[id], m.Receipt)
	r.ackedAt[id] = append(r.ackedAt[id], at)
	r.mu.Unlock()
}

// Handed returns how many times the message was handed out.
func (r *RecordingConsumer) Handed(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.handed[id])
}

// SettledNewest reports whether a successful acknowledgement of the
// message used the newest receipt it was handed out with: on every broker
// that settles it for good, where an acknowledgement with an
// older receipt may do nothing and answer success (SQS).
func (r *RecordingConsumer) SettledNewest(id string) bool {
	_, ok := r.SettledNewestOf(id)
	return ok
}

// SettledNewestOf is SettledNewest, with how many times the message had
// been handed out when it held (Handed, read under the same lock).
func (r *RecordingConsumer) SettledNewestOf(id string) (handed int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.handed[id]
	if len(h) == 0 {
		return 0, false
	}
	newest := h[len(h)-1]
	for _, a := range r.ackedWith[id] {
		if sameReceipt(a, newest) {
			return len(h), true
		}
	}
	return len(h), false
}

// AckCrossed reports whether the message's deliveries after its first
// from (from is the count SettledNewestOf returned when it held) all
// crossed the acknowledgement SettledNewest saw: each came from a Receive
// that began before the first successful acknowledgement with the
// receipt that was newest then, delivery from-1's, was answered. The
// broker may have handed such a delivery out before it applied that
// acknowledgement (the two calls were under way together, and the Receive's
// answer was recorded after the acknowledgement's), or applied it as doing
// nothing because the ack id had lapsed; it is not a hand-out after the
// acknowledgement, and the message is settled for good only once the
// newest of them is acknowledged. It reports false when there is no such
// delivery or no such acknowledgement.
func (r *RecordingConsumer) AckCrossed(id string, from int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, began := r.handed[id], r.handedBegan[id]
	if from < 1 || from >= len(h) {
		return false
	}
	var answered time.Time
	for i, a := range r.ackedWith[id] {
		if sameReceipt(a, h[from-1]) {
			answered = r.ackedAt[id][i]
			break
		}
	}
	if answered.IsZero() {
		return false
	}
	for _, b := range began[from:] {
		if !b.Before(answered) {
			return false
		}
	}
	return true
}

// sameReceipt compares two receipts of one transport (strings, comparable
// structs or pointers); receipts of a type that cannot be compared never
// match.
func sameReceipt(a, b any) bool {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}

// AppliedDelay forwards broker.DelayApplier to the wrapped consumer (the
// delay itself when it bounds none), so that the pump reports the delay
// the broker applies through the recording too.
func (r *RecordingConsumer) AppliedDelay(d time.Duration) time.Duration {
	return broker.AppliedDelay(r.Consumer, d)
}

// Requeue counts the call and forwards it.
func (r *RecordingConsumer) Requeue(ctx context.Context, m *message.Message, delay time.Duration) error {
	if r.killed.Load() {
		return errKilled
	}
	r.mu.Lock()
	r.requeues[m.OriginalID()]++
	r.mu.Unlock()
	return r.Consumer.Requeue(ctx, m, delay)
}

// Reject records the call and its result and forwards it.
func (r *RecordingConsumer) Reject(ctx context.Context, m *message.Message, rej message.Rejection) broker.RejectResult {
	if r.killed.Load() {
		return broker.RejectResult{Err: errKilled}
	}
	res := r.Consumer.Reject(ctx, m, rej)
	r.mu.Lock()
	r.rejects = append(r.rejects, RejectCall{ID: m.OriginalID(), Message: m, Rejection: rej, Result: res})
	r.mu.Unlock()
	return res
}

// Counts returns the presented counts of every receive of the message, in
// order.
func (r *RecordingConsumer) Counts(id string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.counts[id]...)
}

// Acks returns how many acknowledgements of the message succeeded.
func (r *RecordingConsumer) Acks(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.acks[id]
}

// Requeues returns how many Requeue calls the message had.
func (r *RecordingConsumer) Requeues(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requeues[id]
}

// Rejects returns every Reject call for the message.
// AllRejects returns every Reject call so far, in order.
func (r *RecordingConsumer) AllRejects() []RejectCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.rejects)
}

// Rejects returns the Reject calls of the message with this original id.
func (r *RecordingConsumer) Rejects(id string) []RejectCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RejectCall
	for _, c := range r.rejects {
		if c.ID == id {
			out = append(out, c)
		}
	}
	return out
}
