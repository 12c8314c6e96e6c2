package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/polltest"
	"github.com/brightergo/brighter/internal/pump"
)

// Timing of the suite: every behaviour must complete well inside NFR-7's
// 60 s observation window.
const (
	waitLong  = 45 * time.Second
	waitShort = 15 * time.Second
)

// Variants are the two pump variants every behaviour runs in (NFR-8).
var Variants = []pump.Variant{pump.Reactor, pump.Proactor}

// shortLease is the lease a behaviour with a negative check asks for, so
// its window (quietWindow) stays short; fixtures raise it to their broker's
// minimum.
const shortLease = 3 * time.Second

// orderedLease is the lease of the ordered rows (R-4/ordered-deferral, R-4/ack-hold,
// R-29/lapse-hold). Each asserts that no message is handled twice, and a
// lease that lapses while a handler runs rightly brings its message back:
// on a loaded machine a 3 s lease's extension can reach the broker too
// late, so these rows hold their messages twice as long. Their negative
// windows (quietWindow) grow with it.
const orderedLease = 2 * shortLease

// quietWindow is how long a negative check on ch watches: the channel's
// redelivery bound, half as much again for a loaded machine, plus one pump
// receive timeout (never a guessed constant).
func quietWindow(ch Channel) time.Duration {
	b := ch.RedeliveryBound()
	return b + b/2 + pumpTimeOut
}

// pumpTimeOut is the pump's receive timeout in every cell.
const pumpTimeOut = time.Second

// scale is the pump's buffer size and performer count in variant v:
// Reactor cells run one performer with a buffer of 1; Proactor cells run
// production scale, a buffer of 10 and three performers (every
// pump row also runs at production scale in one column).
func scale(v pump.Variant) (bufferSize, performers int) {
	if v == pump.Proactor {
		return 10, 3
	}
	return 1, 1
}

func pumpOptions(v pump.Variant, budget int) pump.Options {
	buffer, performers := scale(v)
	return pump.Options{
		Subscription:        "conformance",
		Variant:             v,
		NoOfPerformers:      performers,
		BufferSize:          buffer,
		TimeOut:             pumpTimeOut,
		RequeueCount:        budget,
		EmptyChannelDelay:   10 * time.Millisecond,
		ChannelFailureDelay: 100 * time.Millisecond,
		DrainTimeout:        10 * time.Second,
	}
}

func newMessage(f Fixture, id string) *message.Message {
	m := message.New(id, "", message.MTCommand, []byte(`{"conformance":"`+id+`"}`))
	if f.Ordered() {
		m.Header.PartitionKey = "group-" + id
	}
	m.Header.CorrelationID = "corr-" + id
	return m
}

func always(o pump.Outcome) pump.Handler {
	return func(ctx context.Context, m *message.Message) pump.Result {
		return pump.Result{Outcome: o, Reason: "conformance handler says " + o.String()}
	}
}

func uniqueID(t *testing.T) string {
	return strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()) + "-" + time.Now().Format("150405.000000")
}

// scenario is one pump run over a fresh channel.
type scenario struct {
	ch       Channel
	rec      *RecordingConsumer
	counter  *DispatchCounter
	running  *Running
	logs     *LogBuffer
	id       string
	consumer broker.Consumer
}

func run(t *testing.T, f Fixture, v pump.Variant, s Setup, h pump.Handler) *scenario {
	t.Helper()
	logger, logs := NewLogger()
	s.Logger = logger
	ch := f.Open(t, s)
	sc := &scenario{ch: ch, logs: logs, counter: &DispatchCounter{}, id: uniqueID(t)}
	buffer, _ := scale(v)
	sc.consumer = ch.Consumer(t, buffer)
	sc.rec = NewRecordingConsumer(sc.consumer)
	ch.Send(t, newMessage(f, sc.id))
	sc.running = Start(t, sc.rec.View(t), sc.counter.Wrap(h), pumpOptions(v, s.RequeueCount), pump.LogObserver{Logger: logger})
	return sc
}

// firstOn waits for the scenario's message on a destination consumer and
// returns it as received.
func firstOn(t *testing.T, c broker.Consumer, id string, wait time.Duration) *message.Message {
	t.Helper()
	if c == nil {
		t.Fatalf("the fixture has no such destination")
	}
	var got *message.Message
	polltest.Until(t, wait, "message "+id+" on the destination", func() bool {
		for _, m := range Drain(t, c, 2*time.Second, 10) {
			if m.OriginalID() == id {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// checkMetadata checks the routed copy's rejection metadata values:
// the reason, the original message type, a non-empty rejectionMessage
// (every behaviour rejects with a description), a rejectionTimestamp that
// parses and is not in the future, and originalTopic naming ch's source.
func checkMetadata(t *testing.T, ch Channel, m *message.Message, reason message.RejectionReason) {
	t.Helper()
	for _, k := range message.RejectionKeys {
		if _, ok := m.Header.Bag[k]; !ok {
			t.Errorf("routed copy lacks %s; bag = %v", k, m.Header.Bag)
		}
	}
	if got, _ := m.Header.Bag.String(message.KeyRejectionReason); got != reason.String() {
		t.Errorf("rejectionReason = %q, want %q", got, reason)
	}
	if got, _ := m.Header.Bag.String(message.KeyOriginalMessageType); got != message.MTCommand.String() {
		t.Errorf("originalMessageType = %q, want MT_COMMAND", got)
	}
	if got, _ := m.Header.Bag.String(message.KeyRejectionMessage); strings.TrimSpace(got) == "" {
		t.Errorf("rejectionMessage is empty; bag = %v", m.Header.Bag)
	}
	ts, _ := m.Header.Bag.String(message.KeyRejectionTimestamp)
	if at, err := time.Parse(message.RejectionTimestampLayout, ts); err != nil {
		t.Errorf("rejectionTimestamp %q does not parse: %v", ts, err)
	} else if at.After(time.Now().Add(time.Minute)) || at.Before(time.Now().Add(-10*time.Minute)) {
		t.Errorf("rejectionTimestamp %s is not the time of this run's rejection", at)
	}
	if got, _ := m.Header.Bag.String(message.KeyOriginalTopic); got != ch.SourceTopic() {
		t.Errorf("originalTopic = %q, want the source %q", got, ch.SourceTopic())
	}
}

// checkDiscarded checks R-17 on a scenario whose handler rejected with reason
// and whose channel has no rejection destination: exactly one Warn record with
// the discard text naming the message id and the reason, one rejection, and no
// further invocation for a window past the lease while the pump keeps running
// (an unacknowledged message would have come back). It waits through
// AwaitFinal for the positive evidence, the discard's acknowledgement the
// broker accepted, so a message the broker stopped handing out (Google's
// emulator, docs/emulators.md#googles-pubsub-emulator) fails the row as
// "emulator lost it" and never passes its invocation count.
func checkDiscarded(t *testing.T, sc *scenario, reason message.RejectionReason) {
	t.Helper()
	awaitScenario(t, sc, waitShort, "the discard, acknowledged", 1, func() bool { return discards(sc.rec, sc.id) > 0 })
	polltest.Stays(t, quietWindow(sc.ch), "the discarded message came back: it was not acknowledged (R-17)", func() bool {
		return sc.counter.Count(sc.id) == 1
	})
	sc.running.Quit(t)
	if rj := sc.rec.Rejects(sc.id); len(rj) != 1 || rj[0].Result.Route != broker.RouteNone || rj[0].Result.Err != nil || rj[0].Result.Released {
		t.Errorf("rejections %+v, want one discarded (route none, acknowledged)", rj)
	}
	recs := sc.logs.Records(t, broker.LogDiscarded)
	if len(recs) != 1 {
		t.Fatalf("%d %q records, want 1:\n%s", len(recs), broker.LogDiscarded, sc.logs.String())
	}
	r := recs[0]
	if r["level"] != "WARN" || r["message_id"] != sc.id || r["reason"] != reason.String() {
		t.Fatalf("the discard record is %v, want level WARN, message_id %s, reason %s (R-17)", r, sc.id, reason)
	}
}

// receiveOnce is one Receive of c that treats a channel failure as an empty
// receive (transient, as the pump treats it) and fails on any other error.
func receiveOnce(t testing.TB, c broker.Consumer, timeout time.Duration) []*message.Message {
	t.Helper()
	ms, err := c.Receive(context.Background(), timeout)
	if errors.Is(err, broker.ErrChannelFailure) {
		t.Logf("receive (retried): %v", err)
		return nil
	}
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return ms
}

// RunAll runs every pump row over f in variant v and records each cell in
// l. The consumer rows run once per fixture through RunConsumerRows.
func RunAll(t *testing.T, l *Ledger, f Fixture, v pump.Variant) {
	g := l.Group()
	RunRows(t, g, f, v)
	g.Wait()
}

// RunRows declares every shared pump row over f in variant v in g; the
// caller waits for g.
func RunRows(t *testing.T, g *Group, f Fixture, v pump.Variant) {
	l := g.l
	g.Run(t, "AC-1", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: -1}, always(pump.Defer))
		awaitScenario(t, sc, waitLong, "four deliveries", 4, func() bool { return len(sc.rec.Counts(sc.id)) >= 4 })
		sc.running.Quit(t)
		counts := sc.rec.Counts(sc.id)
		for i := 1; i < len(counts); i++ {
			if counts[i] <= counts[i-1] {
				t.Fatalf("counts %v do not strictly increase (R-1)", counts)
			}
		}
	})
	g.Run(t, "AC-2", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, Lease: shortLease}, always(pump.Ack))
		polltest.Until(t, waitShort, "one delivery", func() bool { return sc.counter.Count(sc.id) == 1 })
		// acknowledged: not delivered again past the lease (the pump's
		// acknowledgement path, batched where the consumer batches)
		polltest.Stays(t, quietWindow(sc.ch), "the acknowledged message came back", func() bool { return sc.counter.Count(sc.id) == 1 })
		// Not on redelivery alone (Google's emulator can stop redelivering,
		// docs/emulators.md#googles-pubsub-emulator): the broker accepted the
		// pump's acknowledgement.
		if n := sc.rec.Acks(sc.id); n != 1 {
			t.Errorf("%d acknowledgements accepted, want 1: the quiet window proves nothing if the broker dropped the message", n)
		}
		sc.running.Quit(t)
		if c := sc.rec.Counts(sc.id); len(c) != 1 || c[0] != 0 {
			t.Fatalf("counts %v, want [0] (R-2)", c)
		}
	})

	// AC-3, AC-4 and AC-41 read one budget run in turn.
	g.Go(func() {
		var dlqCopy *message.Message
		var budgetRun *scenario
		l.Run(t, "AC-3", f, v, func(t *testing.T) {
			budgetRun = run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true}, always(pump.Defer))
			sc := budgetRun
			// At most R invocations only once the message reached the
			// dead-letter topic (never because the broker
			// stopped redelivering it).
			awaitScenario(t, sc, waitLong, "a rejection routed to the dead-letter queue", 3, func() bool { return routed(sc.rec, sc.id) })
			sc.running.Quit(t)
			if n := sc.counter.Count(sc.id); n < 1 || n > 3 {
				t.Errorf("handler invoked %d times, want 1..3 (R-4)", n)
			}
			rj := sc.rec.Rejects(sc.id)
			if len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonDeliveryError || rj[0].Result.Route != broker.RouteDeadLetter {
				t.Fatalf("rejections %+v, want exactly one DeliveryError to the dead-letter queue", rj)
			}
			if n := sc.logs.Count(pump.LogBudgetExhausted); n != 1 {
				t.Errorf("%d budget-exhausted log records, want 1", n)
			}
		})
		l.Run(t, "AC-4", f, v, func(t *testing.T) {
			if budgetRun == nil {
				t.Fatal("AC-3 did not run")
			}
			dlqCopy = firstOn(t, budgetRun.ch.DeadLetter(t), budgetRun.id, waitShort)
			checkMetadata(t, budgetRun.ch, dlqCopy, message.ReasonDeliveryError)
			if dlqCopy.Header.HandledCount < 2 {
				t.Errorf("dead-letter copy presents %d, want >= 2 (R-5)", dlqCopy.Header.HandledCount)
			}
			if dlqCopy.Receipt == nil {
				t.Errorf("a copy read from the dead-letter queue has no receipt of its own")
			}
		})
		l.Run(t, "AC-41", f, v, func(t *testing.T) {
			if dlqCopy == nil {
				t.Fatal("AC-4 did not read the dead-letter copy")
			}
			// The second read goes through the same reader channel (Drain
			// released the first), whose own delivery counter must have
			// advanced: otherwise a codec presenting that counter instead of the
			// stamped count would pass.
			again := firstOn(t, budgetRun.ch.DeadLetter(t), budgetRun.id, waitShort)
			if again.DeliveryAttempt <= dlqCopy.DeliveryAttempt {
				t.Fatalf("the dead-letter reader's delivery attempt went %d then %d: it does not advance, so this check could not fail", dlqCopy.DeliveryAttempt, again.DeliveryAttempt)
			}
			if dlqCopy.Header.HandledCount < 3 || again.Header.HandledCount != dlqCopy.Header.HandledCount {
				t.Fatalf("dead-letter reads present %d then %d (delivery attempts %d, %d), want the stamped count (>= 3) both times (R-28)",
					dlqCopy.Header.HandledCount, again.Header.HandledCount, dlqCopy.DeliveryAttempt, again.DeliveryAttempt)
			}
		})
	})
	g.Run(t, "AC-5", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: -1, DeadLetter: true}, always(pump.Defer))
		awaitScenario(t, sc, waitLong, "more than 3 invocations", 4, func() bool { return sc.counter.Count(sc.id) > 3 })
		sc.running.Quit(t)
		if rj := sc.rec.Rejects(sc.id); len(rj) != 0 {
			t.Fatalf("rejections %+v with budget -1 (R-6)", rj)
		}
		for _, m := range Drain(t, sc.ch.DeadLetter(t), 2*pumpTimeOut, 10) {
			if m.OriginalID() == sc.id {
				t.Fatalf("message dead-lettered with budget -1 (R-6)")
			}
		}
	})
	g.Run(t, "AC-6/AC-35", f, v, func(t *testing.T) {
		for _, budget := range []int{1, 0, -3} {
			sc := run(t, f, v, Setup{RequeueCount: budget, DeadLetter: true}, always(pump.Defer))
			// Positive evidence first: the rejection routed and
			// the original acknowledged; a message the broker never handed
			// out fails as "emulator lost it", so a drop cannot pass the
			// invocation count below.
			awaitScenario(t, sc, waitShort, "a rejection routed to the dead-letter queue", 1, func() bool { return routed(sc.rec, sc.id) })
			sc.running.Quit(t)
			if n := sc.counter.Count(sc.id); n != 1 {
				t.Errorf("budget %d: %d invocations, want 1 (R-7)", budget, n)
			}
			if n := sc.rec.Requeues(sc.id); n != 0 {
				t.Errorf("budget %d: %d requeue calls, want 0 (R-7)", budget, n)
			}
			if rj := sc.rec.Rejects(sc.id); len(rj) != 1 || rj[0].Rejection.Reason != message.ReasonDeliveryError {
				t.Errorf("budget %d: rejections %+v, want one DeliveryError", budget, rj)
			}
		}
	})
	g.Run(t, "AC-8", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true, NativeMaxDeliveries: 5, Lease: shortLease}, always(pump.Defer))
		awaitScenario(t, sc, waitLong, "a rejection routed to the dead-letter queue", 3, func() bool { return routed(sc.rec, sc.id) })
		// The routed message must have left the source: with the pump still
		// running, an original left unacknowledged would come back within
		// the lease and be handled (and rejected) again.
		n := sc.counter.Count(sc.id)
		polltest.Stays(t, quietWindow(sc.ch), "the source redelivered the routed message", func() bool { return sc.counter.Count(sc.id) == n })
		sc.running.Quit(t)
		if rj := sc.rec.Rejects(sc.id); len(rj) != 1 || rj[0].Result.Route != broker.RouteDeadLetter || rj[0].Result.Err != nil {
			t.Fatalf("rejections %+v, want one to the dead-letter queue", rj)
		}
		m := firstOn(t, sc.ch.DeadLetter(t), sc.id, waitShort)
		checkMetadata(t, sc.ch, m, message.ReasonDeliveryError)
		native := sc.ch.Native(t)
		if native == nil {
			t.Fatal("the fixture configured no native redrive target")
		}
		for _, n := range Drain(t, native, 2*pumpTimeOut, 10) {
			if n.OriginalID() == sc.id {
				t.Fatalf("message also on the native redrive target (R-8)")
			}
		}
	})
	g.Run(t, "AC-9", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 10, DeadLetter: true, NativeMaxDeliveries: 3}, always(pump.Defer))
		native := sc.ch.Native(t)
		if native == nil {
			t.Fatal("the fixture configured no native redrive target")
		}
		m := firstOn(t, native, sc.id, waitLong)
		sc.running.Quit(t)
		if m.HasRejectionMetadata() {
			t.Errorf("native copy carries rejection metadata %v (R-9)", m.Header.Bag)
		}
		if rj := sc.rec.Rejects(sc.id); len(rj) != 0 {
			t.Errorf("Brighter rejected too: %+v (R-8: the native limit fired first)", rj)
		}
	})
	g.Run(t, "R-16/unacceptable", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true, Invalid: true}, always(pump.Unacceptable))
		m := firstOn(t, sc.ch.Invalid(t), sc.id, waitLong)
		sc.running.Quit(t)
		checkMetadata(t, sc.ch, m, message.ReasonUnacceptable)
		if rj := sc.rec.Rejects(sc.id); len(rj) != 1 || rj[0].Result.Route != broker.RouteInvalidMessage {
			t.Errorf("rejections %+v, want one to the invalid-message channel", rj)
		}
	})
	g.Run(t, "R-16/fallback", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, DeadLetter: true}, always(pump.Unacceptable))
		m := firstOn(t, sc.ch.DeadLetter(t), sc.id, waitLong)
		sc.running.Quit(t)
		checkMetadata(t, sc.ch, m, message.ReasonUnacceptable)
	})
	g.Run(t, "R-17", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, Lease: shortLease}, always(pump.Reject))
		checkDiscarded(t, sc, message.ReasonDeliveryError)
	})
	g.Run(t, "R-19", f, v, func(t *testing.T) {
		sc := run(t, f, v, Setup{RequeueCount: 3, MissingDeadLetter: true}, always(pump.Reject))
		// The redelivery is routed again without a handler run (a
		// handler's rejection is final): it shows as a second rejection.
		awaitScenario(t, sc, waitShort, "a redelivery after the failed route", 2, func() bool { return len(sc.rec.Rejects(sc.id)) >= 2 })
		sc.running.Quit(t)
		rj := sc.rec.Rejects(sc.id)
		if len(rj) == 0 || !rj[0].Result.Released || rj[0].Result.Err == nil {
			t.Fatalf("rejections %+v, want the first released with the publish error", rj)
		}
		if n := sc.counter.Count(sc.id); n != 1 {
			t.Fatalf("handler ran %d times, want 1: the redelivery of a rejection whose routing failed is routed again without a handler run", n)
		}
		found := false
		for _, r := range sc.logs.Records(t, broker.LogRoutingFailed) {
			if r["level"] == "ERROR" && r["message_id"] == sc.id && r["reason"] == message.ReasonDeliveryError.String() {
				found = true
			}
		}
		if !found {
			t.Fatalf("no %q Error naming the id and DeliveryError:\n%s", broker.LogRoutingFailed, sc.logs.String())
		}
	})
	runHostile(t, g, f, v)
	runLimits(t, g, f, v)
	runLeases(t, g, f, v)
	runRedeliveries(t, g, f, v)
	runDelay(t, g, f, v)
	runReplicas(t, g, f, v)
	runRestart(t, g, f, v)
	runExhausted(t, g, f, v)
	runStops(t, g, f, v)
	runOrdering(t, g, f, v)
	runCeiling(t, g, f, v)
	runLatePoll(t, g, f, v)
	runAckHold(t, g, f, v)
	runAckRetry(t, g, f, v)
	runAckWaiting(t, g, f, v)
	runLapseHold(t, g, f, v)
	runOversize(t, g, f, v)
}

// RunConsumerRows runs the consumer rows (no pump: one cell per
// configuration) over f and records each cell in l.
func RunConsumerRows(t *testing.T, l *Ledger, f Fixture) {
	g := l.Group()
	ConsumerRows(t, g, f)
	g.Wait()
}

// ConsumerRows declares the shared consumer rows over f in g; the caller
// waits for g.
func ConsumerRows(t *testing.T, g *Group, f Fixture) {
	g.RunConsumer(t, "AC-42", f, func(t *testing.T) {
		ch := f.Open(t, Setup{RequeueCount: -1, Lease: 2 * time.Second})
		c := ch.Consumer(t, 1)
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		var counts []int
		polltest.Until(t, waitLong, "two deliveries with no requeue between them", func() bool {
			for _, m := range receiveOnce(t, c, time.Second) {
				if m.OriginalID() == id {
					counts = append(counts, m.Header.HandledCount)
				}
			}
			return len(counts) >= 2
		})
		if counts[1] <= counts[0] {
			t.Fatalf("counts %v: the lease-lapse redelivery did not present a greater count (R-1)", counts)
		}
	})
	g.RunConsumer(t, "R-16/none", f, func(t *testing.T) {
		logger, _ := NewLogger()
		ch := f.Open(t, Setup{RequeueCount: 3, DeadLetter: true, Logger: logger})
		c := ch.Consumer(t, 1)
		id := uniqueID(t)
		ch.Send(t, newMessage(f, id))
		var got *message.Message
		polltest.Until(t, waitShort, "the message", func() bool {
			for _, m := range receiveOnce(t, c, time.Second) {
				if m.OriginalID() == id {
					got = m
				}
			}
			return got != nil
		})
		res := c.Reject(context.Background(), got, message.Rejection{Reason: message.ReasonNone, Description: "conformance rejects with reason None"})
		if res.Route != broker.RouteDeadLetter || res.Err != nil {
			t.Fatalf("reject result %+v", res)
		}
		m := firstOn(t, ch.DeadLetter(t), id, waitShort)
		checkMetadata(t, ch, m, message.ReasonNone)
	})
}
