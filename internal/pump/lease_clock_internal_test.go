package pump

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
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

// slowExtender is a scheduleConsumer whose every extension call takes took.
type slowExtender struct {
	*scheduleConsumer
	took time.Duration
}

func (c slowExtender) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	time.Sleep(c.took) // the slow answer under test, injected on purpose
	return c.scheduleConsumer.ExtendLeases(ctx, ms, d)
}

// Each extension is recorded with when its call was sent, how long the
// broker took to answer and how much of the message's lease the pump's
// clock had left when it was sent, in the event and in the Debug line: a
// lease that lapsed although it was extended (a starved process, a slow
// broker) is told apart from one that was never extended by the log alone.
func TestLeaseExtensionRecordsItsCallsTiming(t *testing.T) {
	const lease, took = 10 * time.Second, 30 * time.Millisecond
	c := slowExtender{&scheduleConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease})}, took}
	var events []Event
	l := newLeases(c, time.Hour, func(e Event) { events = append(events, e) })
	m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "m1"}}
	returned := time.Now()
	l.holdSince([]*message.Message{m}, returned)
	tick := returned.Add(lease - l.grace + 100*time.Millisecond) // a little less than the grace left: due
	before := time.Now()
	l.extendDue(t.Context(), tick)
	after := time.Now()
	if len(events) != 1 || events[0].Kind != EventLeaseExtended {
		t.Fatalf("events %v, want one lease-extended", events)
	}
	e := events[0]
	if e.Since.Before(before) || e.Since.After(after.Add(-took)) {
		t.Errorf("Since %s, want the call's send, between %s and %s", e.Since, before, after.Add(-took))
	}
	if e.Duration < took || e.Duration > after.Sub(before) {
		t.Errorf("Duration %s, want the call's length, %s to %s", e.Duration, took, after.Sub(before))
	}
	if want, d := l.grace-100*time.Millisecond, e.Left-(l.grace-100*time.Millisecond); d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("Left %s, want the lease left at the tick, %s", e.Left, want)
	}
	if e.Delay != lease {
		t.Errorf("Delay %s, want the lease asked, %s", e.Delay, lease)
	}
	var buf bytes.Buffer
	e.Subscription = "s"
	LogObserver{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}.Observe(e)
	var rec struct {
		Msg   string        `json:"msg"`
		Lease time.Duration `json:"lease"`
		Sent  time.Time     `json:"sent"`
		Call  time.Duration `json:"call"`
		Left  time.Duration `json:"left"`
	}
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if rec.Msg != LogLeaseExtended || rec.Lease != lease || !rec.Sent.Equal(e.Since) || rec.Call != e.Duration || rec.Left != e.Left {
		t.Errorf("Debug line %s, want lease %s, sent %s, call %s, left %s", buf.String(), lease, e.Since, e.Duration, e.Left)
	}
}
