package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// rowOrderedDeferral is the ordered-channel row.
const rowOrderedDeferral = "R-4/ordered-deferral"

// orderingBehaviours are the ordered-channel rows.
var orderingBehaviours = []Behaviour{
	{rowOrderedDeferral, "R-4, ADR 0006", "a deferred message holds back its key: no later message of the key is handled before it settles, and none is handled twice (ordered configurations; bufferSize 10, 3 performers)", KindPump},
}

// The shape of R-4/ordered-deferral: keys x perKey messages, published in order before the
// pump starts, so that receives bring several messages of a key at once.
const (
	orderKeys   = 3
	orderPerKey = 4
	// orderDelay is the delay of each deferral: long enough that a later
	// message handled before the deferred one comes back is seen doing so.
	orderDelay = time.Second
	// orderBuffer and orderPerformers are the row's scale in both variants.
	orderBuffer     = 10
	orderPerformers = 3
)

// orderRun is one handler invocation of R-4/ordered-deferral.
type orderRun struct {
	key, seq   int
	start, end time.Time
	outcome    pump.Outcome
}

// orderDefers says whether R-4/ordered-deferral's handler defers message seq of key on
// its first delivery: the second message of every key, and the first of
// key 0, so that a key is held back from its head and from its middle.
func orderDefers(key, seq int) bool { return seq == 1 || (key == 0 && seq == 0) }

// runOrdering runs the ordered-channel row over an ordered fixture
// in variant v (RunRows calls it; unordered configurations have no cell).
func runOrdering(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	if !f.Ordered() {
		return
	}
	g.Run(t, rowOrderedDeferral, f, v, func(t *testing.T) {
		logger, logs := NewLogger()
		logOnFailure(t, logs)
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: orderedLease, Logger: logger, FIFOBatches: true})
		base := uniqueID(t)
		where := map[string][2]int{}
		for k := range orderKeys {
			for s := range orderPerKey {
				id := fmt.Sprintf("%s-k%d-%d", base, k, s)
				where[id] = [2]int{k, s}
				m := newMessage(f, id)
				m.Header.PartitionKey = fmt.Sprintf("%s-key%d", base, k)
				ch.Send(t, m)
			}
		}
		var (
			mu   sync.Mutex
			runs []orderRun
			seen = map[string]int{}
		)
		h := func(_ context.Context, m *message.Message) pump.Result {
			pos, ok := where[m.OriginalID()]
			if !ok {
				return pump.Result{Outcome: pump.Ack}
			}
			start := time.Now()
			mu.Lock()
			seen[m.OriginalID()]++
			first := seen[m.OriginalID()] == 1
			mu.Unlock()
			res := pump.Result{Outcome: pump.Ack}
			if first && orderDefers(pos[0], pos[1]) {
				res = pump.Result{Outcome: pump.Defer, Delay: orderDelay, Reason: "conformance defers the first delivery"}
			}
			mu.Lock()
			runs = append(runs, orderRun{key: pos[0], seq: pos[1], start: start, end: time.Now(), outcome: res.Outcome})
			mu.Unlock()
			return res
		}
		t.Cleanup(func() {
			if !t.Failed() {
				return
			}
			mu.Lock()
			all := slices.Clone(runs)
			mu.Unlock()
			slices.SortFunc(all, func(a, b orderRun) int { return a.start.Compare(b.start) })
			for _, r := range all {
				t.Logf("run key %d message %d %s %s..%s", r.key, r.seq, r.outcome, r.start.Format("05.000"), r.end.Format("05.000"))
			}
		})
		rec := NewRecordingConsumer(ch.Consumer(t, orderBuffer))
		opts := pumpOptions(v, -1)
		opts.BufferSize, opts.NoOfPerformers = orderBuffer, orderPerformers
		running := Start(t, rec.View(t), h, opts, pump.LogObserver{Logger: logger})
		acked := func() int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, r := range runs {
				if r.outcome == pump.Ack {
					n++
				}
			}
			return n
		}
		// Every message must be handled to the end: a pass can never come
		// from a broker (Google's emulator) that stopped redelivering.
		polltest.Until(t, waitLong, "every message of every key acknowledged by its handler", func() bool { return acked() >= orderKeys*orderPerKey })
		// None is handled again past the channel's redelivery bound: an
		// ordered broker redelivers the later messages of a key with a
		// released one, so one handled early would come back.
		polltest.Stays(t, quietWindow(ch), "a message was handled again after every message had been acknowledged", func() bool { return acked() == orderKeys*orderPerKey })
		running.Quit(t)
		mu.Lock()
		all := slices.Clone(runs)
		mu.Unlock()
		checkOrder(t, all)
		held := logs.Count(pump.LogHeldBack)
		if held == 0 && batchesGroups(f) {
			t.Errorf("no delivery was released unhandled behind a deferred message of its key: no receive returned a later message of a key with its deferred one, so the row did not take the path it proves (%s returns several messages of a group in one receive: is the FIFOBatcher in front of the emulator?)", f.Configuration())
		}
		t.Logf("%d deliveries released unhandled behind a deferred message of their key", held)
	})
}

// checkOrder checks R-4/ordered-deferral's two promises on the handler runs: for each
// key, every run of message s starts after the run that acknowledged each
// earlier message of the key ended, and each message runs once, or twice
// when its first delivery was deferred.
func checkOrder(t *testing.T, runs []orderRun) {
	t.Helper()
	for k := range orderKeys {
		ackEnd := make([]time.Time, orderPerKey)
		count := make([]int, orderPerKey)
		for _, r := range runs {
			if r.key != k {
				continue
			}
			count[r.seq]++
			if r.outcome == pump.Ack {
				ackEnd[r.seq] = r.end
			}
		}
		for s := range orderPerKey {
			want := 1
			if orderDefers(k, s) {
				want = 2
			}
			if count[s] != want {
				t.Errorf("key %d message %d: handled %d times, want %d (none handled twice)", k, s, count[s], want)
			}
		}
		for _, r := range runs {
			if r.key != k {
				continue
			}
			for earlier := range r.seq {
				if ackEnd[earlier].IsZero() || r.start.Before(ackEnd[earlier]) {
					t.Errorf("key %d: message %d was handled (%s, started %s) before message %d had been acknowledged (%s)",
						k, r.seq, r.outcome, r.start.Format("15:04:05.000"), earlier, fmtTime(ackEnd[earlier]))
				}
			}
		}
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format("15:04:05.000")
}

// init registers the ordered-channel row after the rows every
// transport runs, before the Pub/Sub-specific ones.
func init() { registerRows(orderingBehaviours...) }

// groupBatchFixture is implemented by fixtures whose ordered channel,
// opened with Setup.FIFOBatches, returns every waiting message of a group
// in one receive (SQS FIFO, through sqstest.FIFOBatcher in front of fauxqs,
// which alone returns one message per group). The ordered rows prove their
// promise only on such a receive (a later message of a key received with a
// deferred, lapsed or unacknowledged one); where a broker hands out one
// message of a group at a time they pass without reaching that path. So
// where the fixture batches groups, a row requires that a receive did so:
// a broken FIFOBatcher wiring then fails the row instead of passing it.
type groupBatchFixture interface{ BatchesGroups() bool }

// batchesGroups reports whether f's ordered channel returns several
// messages of a group in one receive (groupBatchFixture).
func batchesGroups(f Fixture) bool {
	b, ok := f.(groupBatchFixture)
	return ok && b.BatchesGroups()
}
