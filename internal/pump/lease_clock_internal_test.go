package pump

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// callStartConsumer is a scheduleConsumer whose leases run from the receive
// call's start, as the RocketMQ consumer's do.
type callStartConsumer struct{ *scheduleConsumer }

func (callStartConsumer) LeaseFromReceiveStart() bool { return true }

// For a consumer whose leases run from the receive call's start
// (broker.LeaseFromReceiveStart: RocketMQ), a batch a long-poll receive
// returned late in its poll is on a lease that started when the receive
// call began: its lease ends, and it is due for extension, that much
// earlier than had the clock started when Receive returned, and the first
// extension is decided before that lease has run out.
func TestLeaseClockStartsAtTheReceiveCallsStart(t *testing.T) {
	const lease, lag = 10 * time.Second, 4 * time.Second
	sc := &scheduleConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease})}
	c := callStartConsumer{sc}
	l := newLeases(c, time.Hour, func(Event) {})
	m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "late"}}
	began := time.Now().Add(-lag) // the receive began lag ago and returns now
	h := l.holdSince([]*message.Message{m}, began)
	if got, want := l.expires(h.b, h.b.state(0)), l.at(began)+lease; got != want {
		t.Fatalf("the lease ends %s after the receive began, want %s: the clock does not start at the call's start", got-l.at(began), want-l.at(began))
	}
	// Drive the ticks from the call's start: the first extension must be
	// decided before the lease counted from there ends.
	for now := began; ; now = now.Add(l.tick()) {
		if now.Sub(began) >= lease {
			t.Fatalf("no extension within the lease counted from the receive call's start (%s)", lease)
		}
		l.extendDue(t.Context(), now)
		if sc.calls > 0 {
			// Decided at the first tick with no more than the grace left.
			if left := lease - now.Sub(began); left < l.grace-l.tick() || left > l.grace {
				t.Fatalf("extended with %s of the lease counted from the receive call's start left, want the grace %s (within a tick, %s)", left, l.grace, l.tick())
			}
			return
		}
	}
}

// For a consumer whose broker hands a message out when the long poll
// returns it (SQS, Pub/Sub pull: no broker.LeaseFromReceiveStart), the
// lease clock starts at the receive's return: a message handed out late in
// a poll keeps its whole lease by brighter's count, so a lease no longer
// than the poll is not dropped as lapsed on arrival.
func TestLeaseClockStartsAtTheReturnWhereTheBrokerHandsOutThere(t *testing.T) {
	const lease, lag = 10 * time.Second, 9500 * time.Millisecond
	c := &scheduleConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease})}
	l := newLeases(c, time.Hour, func(Event) {})
	m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "late"}}
	returned := time.Now()
	h := l.holdSince([]*message.Message{m}, returned.Add(-lag)) // the receive began lag ago and returns now
	if got, want := l.expires(h.b, h.b.state(0)), l.at(returned); got < want+lease-100*time.Millisecond || got > want+lease+100*time.Millisecond {
		t.Fatalf("the lease ends %s after the receive returned, want the whole lease %s", got-l.at(returned), lease)
	}
	if l.lapsed(h.at(0), returned) {
		t.Fatal("a message handed out at the end of a poll as long as its lease is dropped as lapsed on arrival")
	}
}
