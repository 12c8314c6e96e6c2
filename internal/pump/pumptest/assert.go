package pumptest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
)

// HandledEach reports an error (t.Errorf, the test goes on) for each
// message id the handler of r was invoked for a number of times other than
// times: the redelivery budget held.
//
// On a failure it also says what the leases did (extension calls failed,
// messages dropped as lapsed before dispatch): a lease that lapsed on a
// loaded machine spends a delivery attempt without a handler.
func HandledEach(t *testing.T, r *Run, times int) {
	t.Helper()
	bad := false
	for id, n := range r.Handled() {
		if n != times {
			bad = true
			t.Errorf("%s handled %d times, want %d", id, n, times)
		}
	}
	if bad {
		t.Logf("leases: %d extended, %d extension failures %v, %d lapsed before dispatch %v", r.Count(pump.EventLeaseExtended), r.Count(pump.EventLeaseExtendFailed), r.Of(pump.EventLeaseExtendFailed), r.Count(pump.EventLeaseLapsed), r.Of(pump.EventLeaseLapsed))
	}
}

// HandledOnceEach reports an error unless the handler of r was invoked for
// exactly distinct message ids, each of them once: no lease lapsed into a
// redelivery.
func HandledOnceEach(t *testing.T, r *Run, distinct int) {
	t.Helper()
	got := r.Handled()
	if len(got) != distinct {
		t.Errorf("handled %d distinct messages, want %d", len(got), distinct)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("%s handled %d times, want once", id, n)
		}
	}
}

// DeadLetteredOnce reports an error unless copies (dead-letter copies per
// message id, read from where: "dead-letter topic", "dead-letter queue")
// holds exactly distinct message ids, each once (R-5: one dead-letter copy).
func DeadLetteredOnce(t *testing.T, where string, copies map[string]int, distinct int) {
	t.Helper()
	if len(copies) != distinct {
		t.Errorf("%s holds %d distinct messages, want %d", where, len(copies), distinct)
	}
	for id, n := range copies {
		if n != 1 {
			t.Errorf("%s dead-lettered %d times, want once", id, n)
		}
	}
}

// LeasesExtendedAndSettled reports an error unless r extended a lease at
// least once and no settle failed (ModifyAckDeadline,
// ChangeVisibility or ChangeInvisibleDuration kept the leases).
func LeasesExtendedAndSettled(t *testing.T, r *Run) {
	t.Helper()
	if r.Count(pump.EventLeaseExtended) == 0 {
		t.Error("no lease extended")
	}
	if fails := r.Of(pump.EventSettleFailed); len(fails) != 0 {
		t.Errorf("%d settles failed: %v", len(fails), fails)
	}
}

// ExtendFailureLogged reports an error unless r's log holds an Error
// pump.LogLeaseExtendFailed and names message id (a JSON string), as the
// lease-extension fault tests require.
func ExtendFailureLogged(t *testing.T, r *Run, id string) {
	t.Helper()
	logs := r.LogText()
	want := fmt.Sprintf(`"level":"ERROR","msg":%q`, pump.LogLeaseExtendFailed)
	if !strings.Contains(logs, want) || !strings.Contains(logs, fmt.Sprintf("%q", id)) {
		t.Errorf("log lacks an ERROR %q naming %s:\n%s", pump.LogLeaseExtendFailed, id, logs)
	}
}

// ExtensionEconomy runs a pump of variant v over c, whose queue holds msgs
// messages leased for lease each, a lease too short for ADR 0005's
// economical schedule (under about 8 s), with a handler that holds each
// message for hold and acknowledges it, and checks the cost of keeping the
// leases (NFR-3; ADR 0005's half-lease schedule: an extension
// whenever half a lease is left, each to a full lease from now):
//   - each message is extended at most 2n+1 times, n being the leases it
//     was held (waiting in the buffer, then handled), and at least n-1;
//   - calls() (the transport's extension calls counted on the wire, read
//     after the run) is at most about as many per receive batch as one
//     message costs: a batch's due messages share each call.
//
// An extension asking for less than a lease (half: four times the calls)
// or a call per message where the broker allows a batch fails it. perMessage
// is true for a transport whose protocol has no batch form (RocketMQ: one
// call per message).
func ExtensionEconomy(t *testing.T, v pump.Variant, c broker.Consumer, msgs int, lease, hold time.Duration, calls func() int64, perMessage bool) {
	t.Helper()
	economy(t, v, c, msgs, lease, hold, calls, perMessage, 2)
}

// EconomicalLease is the lease ExtensionEconomyLong's queue must lend:
// long enough for ADR 0005's economical schedule (an extension when two
// calls' deadlines and two ticks are left), and the shortest ack deadline
// Pub/Sub takes.
const EconomicalLease = 10 * time.Second

// ExtensionEconomyLong runs a pump of variant v over c, whose queue holds
// two messages leased for EconomicalLease each, with a handler that holds
// them for 3.5 leases in all (the Proactor handles both at once for 3.5
// leases; the Reactor handles them one after the other for 1.75 leases
// each, the second waiting in the buffer meanwhile), and checks that
// keeping the leases costs about one extension a lease (NFR-3):
// each message at most n+1 extensions, n being the leases it was held, and
// calls() (counted on the wire) at most that per receive batch (per
// message when perMessage: RocketMQ). The half-lease schedule (about two a
// lease) fails it. If an extension call failed (a broker too slow for the
// economical call deadline, on a loaded machine), the schedule is wary for
// ten leases, by design, and the bound is the half-lease one (2n+1); that
// is logged.
func ExtensionEconomyLong(t *testing.T, v pump.Variant, c broker.Consumer, calls func() int64, perMessage bool) {
	t.Helper()
	hold := EconomicalLease * 7 / 2
	if v == pump.Reactor {
		hold /= 2
	}
	economy(t, v, c, 2, EconomicalLease, hold, calls, perMessage, 1)
}

// economy is ExtensionEconomy with per extensions a lease (plus one)
// allowed each message and each receive batch.
func economy(t *testing.T, v pump.Variant, c broker.Consumer, msgs int, lease, hold time.Duration, calls func() int64, perMessage bool, per float64) {
	t.Helper()
	var (
		mu    sync.Mutex
		held  = map[string]time.Duration{}
		start = time.Now()
	)
	opts := Options(v, msgs)
	opts.NoOfPerformers = msgs
	r := Start(t, c, opts, func(ctx context.Context, m *message.Message) pump.Result {
		SleepFor(ctx, hold)
		mu.Lock()
		held[m.Header.MessageID] = time.Since(start)
		mu.Unlock()
		return pump.Result{Outcome: pump.Ack}
	})
	WaitUntil(t, time.Duration(msgs)*hold+60*time.Second, "every message acknowledged", func() bool { return r.Count(pump.EventAcknowledged) >= msgs })
	r.Stop(t)
	HandledOnceEach(t, r, msgs)
	if failed := r.Count(pump.EventLeaseExtendFailed); failed > 0 && per < 2 {
		t.Logf("%d extension calls failed (a slow broker): the schedule was wary, so the bound is two a lease", failed)
		per = 2
	}
	extended := map[string]int{}
	for _, e := range r.Of(pump.EventLeaseExtended) {
		extended[e.MessageID()]++
	}
	mu.Lock()
	defer mu.Unlock()
	var longest time.Duration
	var notes []string // logged after the checks, so that a failure reads first
	defer func() {
		for _, n := range notes {
			t.Log(n)
		}
	}()
	for id, d := range held {
		longest = max(longest, d)
		n := float64(d) / float64(lease)
		notes = append(notes, fmt.Sprintf("message %s: %d extensions while held %.2f leases of %s", id, extended[id], n, lease))
		if k, most := extended[id], int(per*n)+1; k > most || float64(k) < n-1 {
			t.Errorf("message %s extended %d times while held %.1f leases, want at most %d (%.0f a lease, plus one) and at least %d", id, extended[id], n, most, per, max(int(n)-1, 0))
		}
	}
	batches := 1
	if v == pump.Proactor || perMessage {
		batches = msgs // the Proactor may receive them one by one
	}
	if got, most := calls(), int64(batches*(int(per*float64(longest)/float64(lease))+1)); got == 0 || got > most {
		t.Errorf("%d extension calls for %d messages held up to %s (lease %s), want 1 to %d", got, msgs, longest.Round(time.Millisecond), lease, most)
	}
}
