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
func HandledEach(t *testing.T, r *Run, times int) {
	t.Helper()
	for id, n := range r.Handled() {
		if n != times {
			t.Errorf("%s handled %d times, want %d", id, n, times)
		}
	}
}

// HandledOnceEach reports an error unless the handler of r was invoked for
// exactly distinct message ids, each of them once: no lease lapsed into a
// redelivery (R-4, issue 12).
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
// least once and no settle failed (issue 12: ModifyAckDeadline,
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
// issue 12 fault test requires.
func ExtendFailureLogged(t *testing.T, r *Run, id string) {
	t.Helper()
	logs := r.LogText()
	want := fmt.Sprintf(`"level":"ERROR","msg":%q`, pump.LogLeaseExtendFailed)
	if !strings.Contains(logs, want) || !strings.Contains(logs, fmt.Sprintf("%q", id)) {
		t.Errorf("log lacks an ERROR %q naming %s:\n%s", pump.LogLeaseExtendFailed, id, logs)
	}
}

// ExtensionEconomy runs a pump of variant v over c, whose queue holds msgs
// messages leased for lease each, with a handler that holds each message
// for hold and acknowledges it, and checks the cost of keeping the leases
// (issue 31, NFR-3; ADR 0005's schedule: an extension whenever half a
// lease is left, each to a full lease from now):
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
	per := map[string]int{}
	for _, e := range r.Of(pump.EventLeaseExtended) {
		per[e.MessageID()]++
	}
	mu.Lock()
	defer mu.Unlock()
	var longest time.Duration
	for id, d := range held {
		longest = max(longest, d)
		n := float64(d) / float64(lease)
		if k, most := per[id], int(2*n)+1; k > most || float64(k) < n-1 {
			t.Errorf("message %s extended %d times while held %.1f leases, want at most %d (two a lease) and at least %d", id, per[id], n, most, max(int(n)-1, 0))
		}
	}
	batches := 1
	if v == pump.Proactor || perMessage {
		batches = msgs // the Proactor may receive them one by one
	}
	if got, most := calls(), int64(batches*(int(2*float64(longest)/float64(lease))+1)); got == 0 || got > most {
		t.Errorf("%d extension calls for %d messages held up to %s (lease %s), want 1 to %d", got, msgs, longest.Round(time.Millisecond), lease, most)
	}
}
