package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowLateInPoll is the row of a message a broker hands out late in a long
// poll (docs/adr/0005-leases.md, "where each lease clock starts").
const rowLateInPoll = "R-4/late-in-poll"

// latePollBehaviours are the rows of where a lease clock starts.
var latePollBehaviours = []Behaviour{
	{rowLateInPoll, "R-4", "messages handed out 3-7 s into a 10 s long-poll receive, on two replicas of one channel, with a 10 s lease and a handler that outlives three leases: " +
		"every extension reaches the broker before the lease ends, each message is delivered once, handled once and acknowledged once (where a receive long-polls: not the Pub/Sub stream)", KindPump},
}

// longPollFixture is implemented by fixtures whose consumer's Receive is a
// long poll (the broker hands a message out at any moment of it), as
// opposed to a client that receives on its own (the Pub/Sub stream).
type longPollFixture interface{ LongPolls() bool }

// The shape of the row.
const (
	// latePollLease is the row's lease (Pub/Sub's minimum): long enough
	// for ADR 0005's economical schedule, which extends a message with
	// about 2.7 s of its lease left.
	latePollLease = 10 * time.Second
	// latePoll is each receive's long poll (the pump's timeOut, and
	// RocketMQ's AwaitDuration).
	latePoll = 10 * time.Second
	// latePollLag and latePollLate bound how far into the receives' long
	// polls each message is published: counted from the Receive's return,
	// the message's first extension would come lease-grace after its
	// arrival, past the lease's end on the broker (RocketMQ's consumer
	// refuses it as a stale receipt) once the lag is over the grace (2.7
	// s at a 10 s lease); counted from the receive call's start, it comes
	// with the grace left, and a message handed out latePollLate into its
	// poll still has more than the grace.
	latePollLag  = 3 * time.Second
	latePollLate = 7 * time.Second
	// latePollHolds is how many leases the handler outlives.
	latePollHolds = 3
	// latePollAttempts bounds the attempts of a cell whose messages could
	// not be handed out late in a poll: such an attempt proves nothing and
	// runs again on a fresh channel; a message waits at most
	// latePollPlacements polls for its moment.
	latePollAttempts   = 3
	latePollPlacements = 5
	// latePollSteady is how long the receives under way must stay the
	// same before a message is published: longer than the pump's pause
	// after an empty receive.
	latePollSteady = 100 * time.Millisecond
)

// runLatePoll runs the late-in-a-long-poll row over f in variant v
// (RunRows calls it; fixtures with no long poll have no cell).
func runLatePoll(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if lp, ok := f.(longPollFixture); !ok || !lp.LongPolls() {
		return
	}
	g.Run(t, rowLateInPoll, f, v, func(t *testing.T) {
		retryInconclusive(t, latePollAttempts, "no attempt handed its messages out late in a long poll", func() string { return latePollAttempt(t, f, v) })
	})
}

// latePollAttempt runs the row once on a fresh channel. It returns "" when
// the row's checks ran, or why the attempt proves nothing (a message could
// not be handed out late in a poll); any other failure fails t.
func latePollAttempt(t *testing.T, f Fixture, v pump.Variant) string {
	t.Helper()
	const msgs, budget = 2, 3
	logger, logs := NewLogger()
	ch := f.Open(t, Setup{RequeueCount: budget, Lease: latePollLease, LongPoll: latePoll, Logger: logger})
	base := uniqueID(t)
	buffer, _ := scale(v)
	replicas := []string{"first", "second"}
	recs := map[string]*RecordingConsumer{}
	for _, r := range replicas {
		recs[r] = NewRecordingConsumer(ch.Consumer(t, buffer))
	}
	lease := leaseOf(ch, recs["first"].Consumer)
	hold := latePollHolds * lease
	var mu sync.Mutex
	handled := map[string]map[string]int{} // replica -> id -> invocations
	handler := func(replica string) pump.Handler {
		return func(ctx context.Context, m *message.Message) pump.Result {
			mu.Lock()
			if handled[replica] == nil {
				handled[replica] = map[string]int{}
			}
			handled[replica][m.OriginalID()]++
			mu.Unlock()
			sleepCtx(ctx, hold)
			return pump.Result{Outcome: pump.Ack}
		}
	}
	handlings := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, by := range handled {
			n += by[id]
		}
		return n
	}
	ext := &leaseTally{}
	opts := pumpOptions(v, budget)
	opts.TimeOut = latePoll
	var running []*Running
	for _, r := range replicas {
		running = append(running, Start(t, recs[r].View(t), handler(r), opts, ext, pump.LogObserver{Logger: logger.With("replica", r)}))
	}
	defer func() {
		for _, r := range running {
			r.Quit(t)
		}
	}()
	var ids []string
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, id := range ids {
			var by []string
			for _, r := range replicas {
				by = append(by, fmt.Sprintf("%s: delivered %v %v into its receive, acknowledged %d", r, recs[r].Counts(id), recs[r].Lags(id), recs[r].Acks(id)))
			}
			t.Logf("%s: %s; extended %d times, extensions failed: %v", id, strings.Join(by, "; "), ext.extended(id), ext.failures(id))
		}
		var lines []string
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, base) {
				lines = append(lines, line)
			}
		}
		t.Logf("the pumps' log lines naming the row's messages:\n%s", strings.Join(lines, "\n"))
	})

	// The broker's long poll: the shortest empty receive of either
	// replica.
	var poll time.Duration
	polltest.Until(t, waitShort+2*latePoll, "an empty receive of each replica", func() bool {
		poll = 0
		for _, r := range replicas {
			p := recs[r].EmptyPoll()
			if p == 0 {
				return false
			}
			if poll == 0 || p < poll {
				poll = p
			}
		}
		return true
	})
	// How late each message is handed out: latePollLag to latePollLate,
	// or three to seven tenths of a shorter poll.
	lag := min(latePollLag, poll*3/10)
	late := min(latePollLate, poll*7/10)
	deliveries := func(id string) int {
		n := 0
		for _, r := range replicas {
			n += len(recs[r].Counts(id))
		}
		return n
	}
	open := func() []time.Time {
		var at []time.Time
		for _, r := range replicas {
			at = append(at, recs[r].OpenReceives()...)
		}
		return at
	}
	// The replicas' receives began together (the pumps started together,
	// and a long poll that ends empty is followed at once by the next),
	// so each message is published when all the receives under way are
	// lag to late into their polls, and none began or ended for a while
	// (a replica between two receives has none under way): the broker can
	// hand it only to one of those. A receive that returned a message
	// begins its next poll out of step, so the next message waits for its
	// moment. Cancelling receives to line them up would not do: fauxqs
	// goes on holding a poll its client gave up, and hands a message to
	// it.
	calls := func() int64 {
		n := int64(0)
		for _, r := range replicas {
			n += recs[r].Receives()
		}
		return n
	}
	inStep := func() bool {
		ages, now := open(), time.Now()
		for _, at := range ages {
			if age := now.Sub(at); age < lag || age > late {
				return false
			}
		}
		return len(ages) > 0
	}
	place := func() bool {
		deadline := time.Now().Add(latePollPlacements * poll)
		for time.Now().Before(deadline) {
			before := calls()
			if inStep() {
				time.Sleep(latePollSteady)
				if calls() == before && inStep() {
					return true
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		return false
	}
	for i := range msgs {
		id := fmt.Sprintf("%s-%d", base, i)
		if !place() {
			return fmt.Sprintf("%s: the receives under way were never all %s to %s into their %s polls at once", id, lag, late, poll)
		}
		ids = append(ids, id)
		ch.Send(t, newMessage(f, id))
		polltest.Until(t, waitShort, "the message delivered", func() bool { return deliveries(id) > 0 })
		for _, r := range replicas {
			if lags := recs[r].Lags(id); len(lags) > 0 && lags[0] < lag {
				return fmt.Sprintf("%s was handed out %s into its receive, not late (wanted %s)", id, lags[0], lag)
			}
		}
	}
	if lost := awaitFinalOrLost(t, waitLong+hold, "every message acknowledged", Evidence{IDs: ids, Want: 1, Delivered: deliveries,
		Settled: func(id string) int { return recs["first"].Acks(id) + recs["second"].Acks(id) },
		Final:   func(id string) bool { return recs["first"].Acks(id)+recs["second"].Acks(id) > 0 }}); lost != "" {
		t.Fatalf("%s", lost)
	}
	// A lease lapsed in the handler's last lease would bring a message
	// back within the channel's redelivery bound.
	polltest.Stays(t, ch.RedeliveryBound()+pumpTimeOut, "a message delivered again after it was acknowledged", func() bool {
		for _, id := range ids {
			if deliveries(id) > 1 {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		for _, r := range replicas {
			if lags := recs[r].Lags(id); len(lags) > 0 {
				t.Logf("%s handed out %s into a %s poll of the %s replica, extended %d times", id, lags[0].Round(time.Millisecond), poll.Round(time.Millisecond), r, ext.extended(id))
			}
		}
		if n := deliveries(id); n != 1 {
			t.Errorf("%s delivered %d times to the two replicas, want once: its lease lapsed while its handler ran (R-4)", id, n)
		}
		if n := handlings(id); n != 1 {
			t.Errorf("%s handled %d times, want once (R-4)", id, n)
		}
		if n := recs["first"].Acks(id) + recs["second"].Acks(id); n != 1 {
			t.Errorf("%s acknowledged %d times, want once", id, n)
		}
		if n := ext.extended(id); n < latePollHolds-1 {
			t.Errorf("%s extended %d times, want at least %d: its handler outlived %d leases", id, n, latePollHolds-1, latePollHolds)
		}
		if errs := ext.failures(id); len(errs) > 0 {
			t.Errorf("%s: %d extensions failed, want none: %v", id, len(errs), errs)
		}
	}
	return ""
}

// leaseTally counts, per original id, the extensions the pumps made and
// the errors of those that failed, and the lapses before dispatch.
type leaseTally struct {
	mu     sync.Mutex
	ext    map[string]int
	failed map[string][]error
}

func (l *leaseTally) Observe(e pump.Event) {
	if e.Message == nil {
		return
	}
	id := e.Message.OriginalID()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ext == nil {
		l.ext, l.failed = map[string]int{}, map[string][]error{}
	}
	switch e.Kind {
	case pump.EventLeaseExtended:
		l.ext[id]++
	case pump.EventLeaseExtendFailed:
		l.failed[id] = append(l.failed[id], e.Err)
	case pump.EventLeaseLapsed:
		l.failed[id] = append(l.failed[id], errors.Join(broker.ErrStaleReceipt, errors.New("its lease lapsed before dispatch")))
	}
}

func (l *leaseTally) extended(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ext[id]
}

func (l *leaseTally) failures(id string) []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.failed[id]...)
}

// init registers the row after the other lease rows.
func init() { registerRows(latePollBehaviours...) }
