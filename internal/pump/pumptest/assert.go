package pumptest

import (
	"fmt"
	"strings"
	"testing"

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
