package pump

import (
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// A batch a long-poll receive returned late in its poll is on a lease that
// started when the receive call began, the earliest the broker can have
// handed it out: its lease ends, and it is due for extension, that much
// earlier than had the clock started when Receive returned, and the first
// extension is decided before the lease the broker counts from the call's
// start has run out.
func TestLeaseClockStartsAtTheReceiveCallsStart(t *testing.T) {
	const lease, lag = 10 * time.Second, 4 * time.Second
	c := &scheduleConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease})}
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
		if c.calls > 0 {
			// Decided at the first tick with no more than the grace left.
			if left := lease - now.Sub(began); left < l.grace-l.tick() || left > l.grace {
				t.Fatalf("extended with %s of the lease counted from the receive call's start left, want the grace %s (within a tick, %s)", left, l.grace, l.tick())
			}
			return
		}
	}
}
