package conformance

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// What stops and kills of a consumer cost a message's redelivery budget
// (R-4, AC-3; docs/adr/0001-delivery-count-contract.md §10): on SQS, Pub/Sub
// and RocketMQ the broker counts every delivery, handled or not.
const (
	rowStopsWasteNoBudget = "R4/stops-waste-no-budget"
	rowKillCost           = "R4/kill-cost"
)

// stopBudget is the requeueCount of the stop and kill rows.
const stopBudget = 3

// stopBehaviours are the rows of what stops and kills cost.
var stopBehaviours = []Behaviour{
	{rowStopsWasteNoBudget, "R-4, AC-3", "budget 3; graceful stops (a short drainTimeout) until a message was delivered 3 times (three stops where one receive takes them all) each catch a few messages in the handlers and in the buffer or batch " +
		"(Reactor: a batch of 3), handlers blocked so the stop releases them: each stop spends a delivery of each with no handler decision; " +
		"a last run's acknowledging handler gets every message, at least one at or past the budget, and acknowledges it: none rejected, " +
		"the dead-letter destination empty", KindPump},
	{rowKillCost, "R-4, AC-3", "budget 3; two kills (nothing settled or released; back after the lease) each catch a few messages in the handlers and in the buffer or batch; " +
		"a deferring run then handles each at least once and at most 3 times across the runs, and routes it to the dead-letter destination with a " +
		"rejection message saying how many times it was delivered and handled there, as the broker and the handler counted them. " +
		"A delivery past twice the budget with no handler run (routed without one) is proven by the pump's TestDeliveriesPastTwiceTheBudgetAreRoutedWithoutARun_R4: " +
		"arranging it here takes six releases in a row, which Google's emulator drops", KindPump},
}

// stopScale is the buffer, performers and messages of a stop or kill row in
// variant v: the Proactor at production scale with more messages than
// performers (some in the handlers, the rest in the receive-ahead buffer);
// the Reactor with a batch of 3, one in the handler and two held behind it.
func stopScale(v pump.Variant) (buffer, performers, messages int) {
	if v == pump.Proactor {
		buffer, performers = scale(v)
		return buffer, performers, performers + 2
	}
	return 3, 1, 3
}

// stopRun is one pump run of a stop or kill row: its consumer, recorded,
// and what its handler saw.
type stopRun struct {
	rec     *RecordingConsumer
	running *Running
	c       broker.Consumer
	sever   func()
	mu      sync.Mutex
	handled map[string][]int // original id -> counts presented to the handler
	blocked atomic.Int64     // handlers under way that block until cut off
}

func (r *stopRun) saw(m *message.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handled == nil {
		r.handled = map[string][]int{}
	}
	r.handled[m.OriginalID()] = append(r.handled[m.OriginalID()], m.Header.HandledCount)
}

// runs returns the handler runs of id in this run.
func (r *stopRun) runs(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.handled[id])
}

// presented returns the counts presented to the handler for id.
func (r *stopRun) presented(id string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.handled[id]...)
}

// blockingHandler hands each message to nobody: it blocks until the run
// cuts its handlers off (a stop's drain ending, a kill), as a handler does
// that is under way when its process stops.
func blockingHandler(r *stopRun) pump.Handler {
	return func(ctx context.Context, m *message.Message) pump.Result {
		r.saw(m)
		r.blocked.Add(1)
		<-ctx.Done()
		return pump.Result{Outcome: pump.Defer, Reason: "conformance handler cut off"}
	}
}

// delivered returns the deliveries of id the broker has counted as far as
// the runs saw: the count presented at its latest receive plus one (a
// stream client's receive-ahead may deliver it without a receive of ours,
// which the next presented count shows).
func delivered(runs []*stopRun, id string) int {
	n := 0
	for _, r := range runs {
		if c := r.rec.Counts(id); len(c) > 0 {
			n = max(n, c[len(c)-1]+1)
		}
	}
	return n
}

// receivedIn reports whether every id was received by run r, or, in the
// Reactor, whether its batch is held: its handler blocks on the first and
// the rest wait behind it (a Reactor receives no more until it returns).
func receivedIn(r *stopRun, v pump.Variant) func(string) bool {
	return func(id string) bool {
		if v == pump.Reactor && r.blocked.Load() > 0 {
			return true
		}
		return len(r.rec.Counts(id)) > 0
	}
}

// runStops runs the stop and kill rows over f in variant v (RunRows calls
// it).
func runStops(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	g.Run(t, rowStopsWasteNoBudget, f, v, func(t *testing.T) {
		retryOnDropper(t, f, func() string { return stopsAttempt(t, f, v) })
	})
	g.Run(t, rowKillCost, f, v, func(t *testing.T) {
		retryOnDropper(t, f, func() string { return killsAttempt(t, f, v) })
	})
}

// retryOnDropper runs attempt until it returns "" (every message reached
// its final place and the row's checks ran), at most attemptsFor(f) times:
// an attempt that returns the "emulator lost it" failure of a
// RedeliveryDropper is inconclusive and runs again on a fresh channel.
func retryOnDropper(t *testing.T, f Fixture, attempt func() string) {
	t.Helper()
	retryInconclusive(t, attemptsFor(f), "every attempt lost a message", attempt)
}

// retryInconclusive runs attempt until it returns "" (the row's checks ran
// and passed), at most attempts times. A non-empty return says why that
// attempt proves nothing; it is logged, and after the last attempt t fails
// with failure, the number of attempts and every attempt's reason. An
// attempt fails t itself on any real failure.
func retryInconclusive(t *testing.T, attempts int, failure string, attempt func() string) {
	t.Helper()
	var why []string
	for a := 1; a <= attempts; a++ {
		out := attempt()
		if out == "" {
			if len(why) > 0 {
				t.Logf("passed on attempt %d of %d; before it: %s", a, attempts, strings.Join(why, "; "))
			}
			return
		}
		why = append(why, fmt.Sprintf("attempt %d: %s", a, out))
		t.Logf("attempt %d of %d inconclusive: %s", a, attempts, out)
	}
	t.Fatalf("%s (%d): %s", failure, attempts, strings.Join(why, "; "))
}

// stopIDs sends n fresh messages to ch and returns their ids.
func stopIDs(t *testing.T, f Fixture, ch Channel, n int) []string {
	base := uniqueID(t)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("%s-%d", base, i)
		ids = append(ids, id)
		ch.Send(t, newMessage(f, id))
	}
	return ids
}

// explainStops logs, when t failed, what each run saw of each message.
func explainStops(t *testing.T, ids []string, runs *[]*stopRun) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, id := range ids {
			var by []string
			for i, r := range *runs {
				by = append(by, fmt.Sprintf("run %d: received %v, handler saw %v, acknowledged %d, rejected %d", i+1, r.rec.Counts(id), r.presented(id), r.rec.Acks(id), len(r.rec.Rejects(id))))
			}
			t.Logf("%s: %s", id, strings.Join(by, "; "))
		}
	})
}

// stopsAttempt runs R4/stops-waste-no-budget once on a fresh channel of f.
//
// Up to 2*budget-1 runs are stopped gracefully, each once every message
// was received by it (the Reactor: once its batch is held), with handlers
// that block until cut off and a drainTimeout too short for them: the stop
// cuts the handlers off and releases what they held, and what waits in the
// buffer or batch, a delivery of each spent with no handler decision. The
// runs stop once a message was delivered budget times (three stops where a
// receive takes every message). A last run acknowledges. Nothing may be rejected and every message must be
// acknowledged; at least one must reach that handler at or past the budget,
// or the row proved nothing.
func stopsAttempt(t *testing.T, f Fixture, v pump.Variant) string {
	t.Helper()
	logger, _ := NewLogger()
	ch := f.Open(t, Setup{RequeueCount: stopBudget, DeadLetter: true, Logger: logger})
	buffer, performers, n := stopScale(v)
	opts := pumpOptions(v, stopBudget)
	opts.BufferSize, opts.NoOfPerformers = buffer, performers
	opts.DrainTimeout = 200 * time.Millisecond
	ids := stopIDs(t, f, ch, n)
	var runs []*stopRun
	explainStops(t, ids, &runs)
	start := func(h func(*stopRun) pump.Handler) *stopRun {
		r := &stopRun{c: ch.Consumer(t, buffer)}
		r.rec = NewRecordingConsumer(r.c)
		r.running = Start(t, r.rec.View(t), h(r), opts, pump.LogObserver{Logger: logger.With("run", len(runs)+1)})
		runs = append(runs, r)
		return r
	}
	// Enough once any message was delivered budget times: its next
	// delivery reaches the budget. Not every message: a receive may take
	// fewer than all (a Reactor's batch from a stream client's buffer),
	// and a stream client may take a released message again before it is
	// closed, a delivery the runs see only at the next receive; a stop can
	// so cost a message two deliveries, and a message already at the
	// budget stopped again could pass twice the budget's deliveries and be
	// routed, rightly, without a run.
	enough := func() bool {
		for _, id := range ids {
			if delivered(runs, id) >= stopBudget {
				return true
			}
		}
		return false
	}
	for stops := 0; stops < 2*stopBudget-1 && !enough(); stops++ {
		r := start(blockingHandler)
		if lost := awaitFinalOrLost(t, waitShort+ch.RedeliveryBound(), fmt.Sprintf("stop %d: every message received (the Reactor: its batch held)", stops+1),
			Evidence{IDs: ids, Want: 1, Final: receivedIn(r, v), Delivered: func(id string) int { return len(r.rec.Counts(id)) }, Settled: func(string) int { return 0 }}); lost != "" {
			r.running.Quit(t)
			return lost
		}
		began := time.Now()
		r.running.Quit(t) // a graceful stop: the drain ends before the blocked handlers do
		closeConsumer(t, r.c)
		t.Logf("stop %d took %s; deliveries so far %v", stops+1, time.Since(began).Round(time.Millisecond), deliveriesOf(runs, ids))
	}
	final := start(func(r *stopRun) pump.Handler {
		return func(_ context.Context, m *message.Message) pump.Result {
			r.saw(m)
			return pump.Result{Outcome: pump.Ack}
		}
	})
	// Final: acknowledged, or rejected (which fails the row below, at once
	// rather than after the wait).
	if lost := awaitFinalOrLost(t, waitShort+ch.RedeliveryBound(), "every message acknowledged (or rejected) by the last run", Evidence{IDs: ids, Want: 1,
		Final: func(id string) bool { return final.rec.Acks(id) > 0 || len(final.rec.Rejects(id)) > 0 }}.recorded(final.rec)); lost != "" {
		final.running.Quit(t)
		return lost
	}
	final.running.Quit(t)
	atBudget := 0
	for _, id := range ids {
		for _, r := range runs {
			if rj := r.rec.Rejects(id); len(rj) > 0 {
				t.Errorf("%s rejected %+v: a message whose deliveries were spent by stops was dead-lettered, not handed to its handler (R-4)", id, rj[0].Rejection)
			}
		}
		if p := final.presented(id); len(p) > 0 && p[0] >= stopBudget {
			atBudget++
		}
	}
	if atBudget == 0 {
		t.Fatalf("no message reached the last run's handler at or past the budget %d (deliveries %v): the stops did not spend enough deliveries and the row proves nothing", stopBudget, deliveriesOf(runs, ids))
	}
	for _, m := range Drain(t, ch.DeadLetter(t), 2*pumpTimeOut, 10) {
		for _, id := range ids {
			if m.OriginalID() == id {
				t.Errorf("%s is on the dead-letter destination", id)
			}
		}
	}
	t.Logf("%d of %d messages reached the last run at or past the budget; deliveries %v", atBudget, len(ids), deliveriesOf(runs, ids))
	return ""
}

// deliveriesOf returns each id's deliveries as the runs saw them
// (delivered), for the logs.
func deliveriesOf(runs []*stopRun, ids []string) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = delivered(runs, id)
	}
	return out
}

// closeConsumer closes c as consume does once its pump has stopped.
func closeConsumer(t *testing.T, c broker.Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Logf("close the stopped run's consumer: %v", err)
	}
}

// rejectionCounts reads "delivered N times, handled M times in this process" from a
// rejection message.
var rejectionCounts = regexp.MustCompile(`delivered (\d+) times?, handled (\d+) times? in this process`)

// killsAttempt runs R4/kill-cost once on a fresh channel of f.
//
// budget-1 runs are killed, each once every message was received by it
// (the Reactor: once its batch is held), its handlers blocked: the consumer
// is cut off from the broker (RecordingConsumer.Kill; a stream's
// connection closed, SeverableChannel) and the pump cut off, so nothing is
// settled or released and each message returns when its lease lapses, a
// delivery spent. A last run defers every message. Each must be routed to
// the dead-letter destination once, handled there at least once and at most
// budget times across the runs (a killed handler's run counts), and its
// copy's rejection message must say the deliveries and handler runs the
// pump counted: the deliveries its broker counted (the presented count of
// the routed delivery, plus one; never fewer than the runs received) and
// the last run's handler runs. At least one message must have been caught
// by every kill, or the row proved nothing.
func killsAttempt(t *testing.T, f Fixture, v pump.Variant) string {
	t.Helper()
	logger, _ := NewLogger()
	ch := f.Open(t, Setup{RequeueCount: stopBudget, DeadLetter: true, Lease: shortLease, Logger: logger})
	buffer, performers, n := stopScale(v)
	opts := pumpOptions(v, stopBudget)
	opts.BufferSize, opts.NoOfPerformers = buffer, performers
	ids := stopIDs(t, f, ch, n)
	var runs []*stopRun
	explainStops(t, ids, &runs)
	start := func(severable bool, h func(*stopRun) pump.Handler) *stopRun {
		r := &stopRun{sever: func() {}}
		if sc, ok := ch.(SeverableChannel); ok && severable {
			r.c, r.sever, _ = sc.SeverableConsumer(t, buffer)
		} else {
			r.c = ch.Consumer(t, buffer)
		}
		r.rec = NewRecordingConsumer(r.c)
		r.running = Start(t, r.rec.View(t), h(r), opts, pump.LogObserver{Logger: logger.With("run", len(runs)+1)})
		runs = append(runs, r)
		return r
	}
	const kills = stopBudget - 1
	for k := range kills {
		r := start(true, blockingHandler)
		if lost := awaitFinalOrLost(t, waitShort+ch.RedeliveryBound(), fmt.Sprintf("kill %d: every message received (the Reactor: its batch held)", k+1),
			Evidence{IDs: ids, Want: 1, Final: receivedIn(r, v), Delivered: func(id string) int { return len(r.rec.Counts(id)) }, Settled: func(string) int { return 0 }}); lost != "" {
			r.rec.Kill()
			r.running.CutOff(t)
			r.sever()
			return lost
		}
		r.rec.Kill()
		r.running.CutOff(t)
		r.sever() // once the pump has returned, as in R-4/replica-killed
	}
	caught := 0
	for _, id := range ids {
		every := true
		for _, r := range runs {
			every = every && len(r.rec.Counts(id)) > 0
		}
		if every {
			caught++
		}
	}
	if caught == 0 {
		t.Fatalf("no message was received by every killed run (deliveries %v): the kills cost nothing and the row proves nothing", deliveriesOf(runs, ids))
	}
	final := start(false, func(r *stopRun) pump.Handler {
		return func(_ context.Context, m *message.Message) pump.Result {
			r.saw(m)
			return pump.Result{Outcome: pump.Defer, Reason: "conformance handler defers"}
		}
	})
	// The killed runs' messages come back once their leases lapse; each
	// message then needs up to budget deliveries to reach the budget.
	wait := waitShort + time.Duration(stopBudget+1)*ch.RedeliveryBound()
	if lost := awaitFinalOrLost(t, wait, "every message routed to the dead-letter destination by the last run", Evidence{IDs: ids, Want: 1,
		Final: func(id string) bool { return routed(final.rec, id) }}.recorded(final.rec)); lost != "" {
		final.running.Quit(t)
		return lost
	}
	final.running.Quit(t)
	copies := map[string]*message.Message{}
	arrived := newArrivals(func() []*message.Message { return Drain(t, ch.DeadLetter(t), 2*time.Second, 10) })
	polltest.Until(t, waitShort, "every message's copy on the dead-letter destination", func() bool {
		for _, id := range ids {
			if !arrived.Final(id) {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		copies[id] = arrived.got(id)
	}
	for _, id := range ids {
		total, received := 0, 0
		for _, r := range runs {
			total += r.runs(id)
			received += len(r.rec.Counts(id))
		}
		last := final.runs(id)
		if last < 1 || total > stopBudget {
			t.Errorf("%s handled %d times in the last run and %d in all, want at least once there and at most %d in all (R-4: a kill costs a delivery, never a handler run of the budget's)", id, last, total, stopBudget)
		}
		rj := final.rec.Rejects(id)
		if len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonDeliveryError || rj[0].Result.Route != broker.RouteDeadLetter {
			t.Errorf("%s rejections %+v, want one DeliveryError to the dead-letter destination", id, rj)
			continue
		}
		desc, _ := copies[id].Header.Bag.String(message.KeyRejectionMessage)
		got := rejectionCounts.FindStringSubmatch(desc)
		if got == nil {
			t.Errorf("%s: rejection message %q does not say how many times it was delivered and handled", id, desc)
			continue
		}
		deliveries, _ := strconv.Atoi(got[1])
		handled, _ := strconv.Atoi(got[2])
		counts := final.rec.Counts(id)
		if want := counts[len(counts)-1] + 1; deliveries != want || deliveries < received {
			t.Errorf("%s: rejection message %q says delivered %d times; the broker counted %d at the routed delivery and the runs received it %d times", id, desc, deliveries, want, received)
		}
		if handled != last {
			t.Errorf("%s: rejection message %q says handled %d times in this process; the last run's handler ran %d times", id, desc, handled, last)
		}
	}
	t.Logf("%d of %d messages caught by every kill; deliveries %v", caught, len(ids), deliveriesOf(runs, ids))
	return ""
}

// init registers the stop and kill rows after the exhausted-is-final row.
func init() { registerRows(stopBehaviours...) }
