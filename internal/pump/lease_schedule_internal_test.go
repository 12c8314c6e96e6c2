package pump

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker/memory"
	"github.com/brightergo/brighter/internal/message"
)

// scheduleConsumer is a memory consumer that records the extensions asked
// of it instead of making them, failing those fail picks: the schedule is
// driven by an injected clock (each tick a call of extendDue), hours of
// holding in a moment.
type scheduleConsumer struct {
	*memory.Consumer
	fail  func(call int) bool // call counts from 1
	calls int
	// deadlines holds each call's deadline, as time left when it was made.
	deadlines []time.Duration
}

func (c *scheduleConsumer) ExtendLeases(ctx context.Context, ms []*message.Message, _ time.Duration) []error {
	c.calls++
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(24 * time.Hour)
	}
	c.deadlines = append(c.deadlines, time.Until(dl))
	errs := make([]error, len(ms))
	if c.fail != nil && c.fail(c.calls) {
		for i := range errs {
			errs[i] = errors.New("black-holed: context deadline exceeded")
		}
	}
	return errs
}

// heldFor drives l's schedule for one message held for hold from its
// receive, a tick at a time; a failed call takes its whole deadline (a
// black-holed broker). It returns each extension call's time from the
// receive and the lease the message had left when it was made, and fails t
// if the message's lease ever lapses while it is held.
func heldFor(t *testing.T, l *leases, c *scheduleConsumer, hold time.Duration) (at, left []time.Duration) {
	t.Helper()
	m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "held"}}
	h := l.hold([]*message.Message{m})
	received := l.base.Add(h.b.received)
	for now := received; now.Sub(received) < hold; now = now.Add(l.tick()) {
		st := h.b.state(0)
		rest := l.expires(h.b, st) - l.at(now)
		if rest <= 0 {
			t.Fatalf("the lease lapsed %s after the receive, while held", now.Sub(received))
		}
		before := c.calls
		_, call := l.due(l.at(now))
		l.extendDue(t.Context(), now)
		if c.calls > before {
			at = append(at, now.Sub(received))
			left = append(left, rest)
			if c.fail != nil && c.fail(c.calls) {
				now = now.Add(call) // the call ran to its deadline
			}
		}
	}
	return at, left
}

func newScheduleLeases(t *testing.T, lease time.Duration, fail func(int) bool) (*leases, *scheduleConsumer) {
	t.Helper()
	c := &scheduleConsumer{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease}), fail: fail}
	l := newLeases(c, 24*time.Hour, func(Event) {})
	if l == nil {
		t.Fatal("no lease tracker")
	}
	return l, c
}

// TestLeaseScheduleAboutOneCallALease (NFR-3, ADR 0005): a
// message held for n leases costs about n extension calls: at most 1.2n+1
// from the 30 s lease that is every transport's default (SQS's visibility
// timeout, Pub/Sub's ack deadline, RocketMQ's invisible duration) up, and
// at most 1.5n+1 from 8 s; each call is made with room left for it to run
// to its deadline, the tick that decides a retry, and the retry. Shorter
// leases keep the half-lease schedule (at most 2n+1). The clock is
// injected.
func TestLeaseScheduleAboutOneCallALease(t *testing.T) {
	const n = 12 // leases held
	for _, lease := range []time.Duration{8 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute} {
		t.Run(lease.String(), func(t *testing.T) {
			l, c := newScheduleLeases(t, lease, nil)
			grace, call, tick := leaseSchedule(lease)
			if grace == 0 {
				t.Fatalf("a %s lease has no economical schedule", lease)
			}
			at, left := heldFor(t, l, c, n*lease)
			defer t.Logf("lease %s: %d calls in %d leases (%.2f a lease), grace %s, call deadline %s, tick %s", lease, len(at), n, float64(len(at))/n, grace, call, tick)
			per := 1.5
			if lease >= 30*time.Second {
				per = 1.2
			}
			if most := int(per*n) + 1; len(at) > most || len(at) < n-1 {
				t.Errorf("%d extension calls while held for %d leases of %s, want about %d (%d to %d: %.1f a lease)", len(at), n, lease, n, n-1, most, per)
			}
			for i, r := range left {
				if r < 2*call+tick {
					t.Errorf("call %d (%s after the receive) made with %s of the lease left, want at least %s: a call to its deadline, a tick and a retry", i+1, at[i], r, 2*call+tick)
				}
				// The deadline the call carried leaves room for the tick
				// and a retry as long.
				if d := c.deadlines[i]; d > (r-tick)/2 || d < call-time.Second/2 {
					t.Errorf("call %d made with %s of the lease left had a deadline %s away, want about %s (at most %s)", i+1, r, d.Round(time.Millisecond), call, (r-tick)/2)
				}
			}
		})
	}
	for _, lease := range []time.Duration{400 * time.Millisecond, 2 * time.Second, 5 * time.Second} {
		t.Run(lease.String(), func(t *testing.T) {
			if g, _, _ := leaseSchedule(lease); g != 0 {
				t.Fatalf("a %s lease has an economical schedule (grace %s): too short to retry a call", lease, g)
			}
			l, c := newScheduleLeases(t, lease, nil)
			at, left := heldFor(t, l, c, n*lease)
			if len(at) > 2*n+1 {
				t.Errorf("%d extension calls while held for %d leases of %s, want at most %d", len(at), n, lease, 2*n+1)
			}
			for i, r := range left {
				if r > lease/2 || r <= lease/2-l.tick() {
					t.Errorf("call %d made with %s of the %s lease left, want half of it (less a tick at most)", i+1, r, lease)
				}
			}
		})
	}
}

// TestLeaseScheduleWaryAfterAFailedCall (ADR 0005): when an
// extension call fails (here it runs to its deadline, a black-holed
// broker), the retry still reaches the broker before the lease ends with
// room for the call, and the next waryLeases leases are extended at half a
// lease (the longer margin and call deadline survive a broker that stalls
// for longer); then the economical schedule comes back.
func TestLeaseScheduleWaryAfterAFailedCall(t *testing.T) {
	for _, lease := range []time.Duration{10 * time.Second, 30 * time.Second, 5 * time.Minute} {
		t.Run(lease.String(), func(t *testing.T) {
			l, c := newScheduleLeases(t, lease, func(call int) bool { return call == 2 })
			grace, call, _ := leaseSchedule(lease)
			at, left := heldFor(t, l, c, (waryLeases+6)*lease)
			if len(at) < 4 {
				t.Fatalf("extension calls at %v, want more than three", at)
			}
			if left[2] < call {
				t.Errorf("the retry after a failed call was made with %s of the lease left, want at least the call's deadline %s", left[2], call)
			}
			var wary, after int
			for i := 3; i < len(at); i++ {
				switch {
				case at[i] < at[1]+waryLeases*lease:
					wary++
					if left[i] > lease/2 || left[i] <= lease/2-l.tick() {
						t.Errorf("call %d, %s after the failure, made with %s of the lease left, want half (%s): wary after a failure", i+1, at[i]-at[1], left[i], lease/2)
					}
				case at[i] > at[1]+(waryLeases+1)*lease:
					after++
					if left[i] > grace {
						t.Errorf("call %d, %s after the failure, made with %s of the lease left, want at most the grace %s: the economical schedule back", i+1, at[i]-at[1], left[i], grace)
					}
				}
			}
			if wary < waryLeases || after == 0 {
				t.Errorf("%d calls in the wary leases and %d after them, want at least %d and 1 (calls at %v)", wary, after, waryLeases, fmt.Sprint(at))
			}
		})
	}
}

// lateExtender is a memory consumer whose extension calls take took (real
// time) and then answer success, as Pub/Sub answers an extension of an ack
// id it has superseded.
type lateExtender struct {
	*memory.Consumer
	took  time.Duration
	calls int
}

func (c *lateExtender) ExtendLeases(ctx context.Context, ms []*message.Message, _ time.Duration) []error {
	c.calls++
	time.Sleep(c.took) // the slow answer under test, injected on purpose
	return make([]error, len(ms))
}

// TestLapsedLeaseNeverExtended (ADR 0005 decisions 5 and 6): a held
// message whose lease lapsed by the pump's clock is not extended, and an
// extension answered with success only once the lease it extends had
// lapsed does not count (ErrExtendedAfterLapse): either way the message
// stays lapsed, never dispatched, whatever the broker answered; an
// extension answered in time keeps it. The clock of the ticks is
// injected; the slow call takes real time.
func TestLapsedLeaseNeverExtended(t *testing.T) {
	const lease = 400 * time.Millisecond // the half-lease schedule: extended with 200 ms left
	for _, tc := range []struct {
		name    string
		tickAt  time.Duration // the tick, from the receive
		took    time.Duration // the call's answer
		calls   int
		lapsed  bool
		failure bool
	}{
		{name: "answered in time", tickAt: lease / 2, took: 0, calls: 1},
		{name: "answered after the lease", tickAt: lease / 2, took: 250 * time.Millisecond, calls: 1, lapsed: true, failure: true},
		{name: "lapsed before the tick", tickAt: lease + time.Millisecond, took: 0, calls: 0, lapsed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &lateExtender{Consumer: memory.NewBroker(false).NewConsumer(memory.ConsumerOptions{Queue: "q", VisibilityTimeout: lease}), took: tc.took}
			var events []Event
			l := newLeases(c, time.Hour, func(e Event) { events = append(events, e) })
			m := &message.Message{Receipt: 1, Header: message.Header{MessageID: "held"}}
			h := l.hold([]*message.Message{m})
			received := l.base.Add(h.b.received)
			tick := received.Add(tc.tickAt)
			l.extendDue(t.Context(), tick)
			if c.calls != tc.calls {
				t.Errorf("%d extension calls, want %d", c.calls, tc.calls)
			}
			// Dispatch is asked just after the call's answer.
			after := tick.Add(tc.took + time.Millisecond)
			if got := l.lapsed(h.at(0), after); got != tc.lapsed {
				t.Errorf("lapsed at dispatch = %v, want %v (events %v)", got, tc.lapsed, events)
			}
			failed := false
			for _, e := range events {
				switch e.Kind {
				case EventLeaseExtendFailed:
					failed = true
					if !errors.Is(e.Err, ErrExtendedAfterLapse) {
						t.Errorf("lease-extend-failed with %v, want ErrExtendedAfterLapse", e.Err)
					}
				case EventLeaseExtended:
					if tc.lapsed {
						t.Errorf("a lapsed lease reported extended: %+v", e)
					}
				}
			}
			if failed != tc.failure {
				t.Errorf("lease-extend-failed reported: %v, want %v (events %v)", failed, tc.failure, events)
			}
		})
	}
}
