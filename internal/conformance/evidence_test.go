package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// failRecorder is a testing.TB that records Errorf and ends the goroutine
// on FailNow, so AwaitFinal's failures can be inspected.
type failRecorder struct {
	testing.TB
	msgs []string
}

func (r *failRecorder) Helper() {}
func (r *failRecorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// await runs AwaitFinal on a recorder and returns its failures (nil: it
// passed).
func await(e Evidence) []string {
	r := &failRecorder{}
	done := make(chan bool)
	go func() {
		defer close(done)
		defer func() { recover() }()
		AwaitFinal(r, 200*time.Millisecond, "the copy on the dead-letter queue", e)
		r.msgs = nil
	}()
	<-done
	return r.msgs
}

func (r *failRecorder) FailNow() {
	if r.msgs == nil {
		r.msgs = []string{}
	}
	panic("FailNow")
}

// TestAwaitFinal_EmulatorLostIt: a row counting invocations passes on positive
// evidence only; without it, a message delivered fewer times than the row
// expects that brighter did not settle fails as "emulator lost it" (Google's
// emulator stops redelivering, docs/emulators.md#googles-pubsub-emulator), and
// one delivered enough times, or settled by brighter, fails as brighter's.
func TestAwaitFinal_EmulatorLostIt(t *testing.T) {
	delivered := map[string]int{"a": 2, "b": 3, "c": 1}
	settled := map[string]int{"c": 1}
	e := func(final bool, ids ...string) Evidence {
		return Evidence{IDs: ids, Want: 3, Delivered: func(id string) int { return delivered[id] },
			Settled: func(id string) int { return settled[id] }, Final: func(string) bool { return final }}
	}
	if msgs := await(e(true, "a", "b")); msgs != nil {
		t.Errorf("evidence present: failed with %q", msgs)
	}
	msgs := await(e(false, "a"))
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "emulator lost it") || !strings.Contains(msgs[0], "a (delivered 2 of 3 times)") {
		t.Errorf("fewer deliveries, nothing settled: failed with %q, want one \"emulator lost it\" naming a", msgs)
	}
	for _, id := range []string{"b", "c"} {
		msgs := await(e(false, id))
		if len(msgs) != 1 || strings.Contains(msgs[0], "emulator lost it") || !strings.Contains(msgs[0], "no evidence for "+id) {
			t.Errorf("%s (delivered %d, settled %d): failed with %q, want brighter's failure, not the emulator's", id, delivered[id], settled[id], msgs)
		}
	}
}
