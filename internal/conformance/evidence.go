package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Evidence is what a row that counts invocations or checks that nothing was
// lost watches of its messages: Google's Pub/Sub emulator stops redelivering a
// message after two or three nacks under load
// (docs/emulators.md#googles-pubsub-emulator), so such a row passes only on
// positive evidence that each message reached its final place (an
// acknowledgement the broker accepted, a rejection routed and acknowledged, a
// copy on the dead-letter destination), never on a message that merely stopped
// coming back.
type Evidence struct {
	// IDs are the row's messages.
	IDs []string
	// Want is how many deliveries of each message the row expects at
	// least before its final place: the budget for a deferring message, 1
	// for one settled on its first delivery.
	Want int
	// Delivered returns how many times the broker has delivered id so far
	// (RecordingConsumer.Counts, or the handler's runs where the row sees
	// no receive).
	Delivered func(id string) int
	// Final reports the positive evidence that id reached its final place.
	Final func(id string) bool
	// Settled, when set, returns how many times brighter itself settled id
	// for good (acknowledgements and discards the broker accepted): a
	// message brighter settled that never reached the row's final place is
	// brighter's loss, not the broker's.
	Settled func(id string) int
}

// recorded fills Delivered and Settled from rec where they are unset.
func (e Evidence) recorded(rec *RecordingConsumer) Evidence {
	if e.Delivered == nil {
		e.Delivered = func(id string) int { return len(rec.Counts(id)) }
	}
	if e.Settled == nil {
		e.Settled = func(id string) int { return rec.Acks(id) + discards(rec, id) }
	}
	return e
}

// discards counts id's rejections the Router settled without a destination.
func discards(rec *RecordingConsumer, id string) int {
	n := 0
	for _, rj := range rec.Rejects(id) {
		if rj.Result.Route == broker.RouteNone && rj.Result.Err == nil && !rj.Result.Released {
			n++
		}
	}
	return n
}

// AwaitFinal waits up to timeout for every message's positive evidence
// (Evidence.Final; what names it). Without it the cell fails, never passes. A
// message delivered fewer than Want times by then, that brighter did not
// settle, fails as "emulator lost it": the broker stopped redelivering a
// message it still holds, which Google's Pub/Sub emulator does under load
// (docs/emulators.md#googles-pubsub-emulator) and which proves nothing about
// brighter either way; a message delivered Want times or settled by brighter
// fails as a missing final place (brighter's bug). The first is a heuristic: a
// message brighter kept leased, or acknowledged inside a rejection whose
// result does not say so (the recording consumer sees the Router's result, not
// the broker call), looks the same (mutants routing-order and
// lease-extension-to-cap fail that way on SQS), and the failure says so.
func AwaitFinal(t testing.TB, timeout time.Duration, what string, e Evidence) {
	t.Helper()
	if lost := awaitFinalOrLost(t, timeout, what, e); lost != "" {
		t.Errorf("%s", lost)
		t.FailNow()
	}
}

// awaitFinalOrLost is AwaitFinal that returns, instead of failing t, the
// "emulator lost it" failure when every message without its final place
// is one the broker stopped delivering (and brighter never settled): a row
// that may run again on a broker known to drop messages (RedeliveryDropper)
// reads that attempt as inconclusive. It returns "" once every message
// reached its final place; a message delivered Want times or settled by
// brighter without reaching it fails t at once (brighter's bug).
func awaitFinalOrLost(t testing.TB, timeout time.Duration, what string, e Evidence) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		missing := 0
		for _, id := range e.IDs {
			if !e.Final(id) {
				missing++
			}
		}
		if missing == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var lost, stuck []string
	for _, id := range e.IDs {
		if e.Final(id) {
			continue
		}
		n, settled := e.Delivered(id), 0
		if e.Settled != nil {
			settled = e.Settled(id)
		}
		if n < e.Want && settled == 0 {
			lost = append(lost, fmt.Sprintf("%s (delivered %d of %d times)", id, n, e.Want))
		} else {
			stuck = append(stuck, fmt.Sprintf("%s (delivered %d times, settled %d times by brighter)", id, n, settled))
		}
	}
	if len(stuck) > 0 {
		t.Errorf("timed out after %s: %s: no evidence for %s", timeout, what, strings.Join(stuck, ", "))
		if len(lost) > 0 {
			t.Errorf("%s", emulatorLost(lost, timeout, what))
		}
		t.FailNow()
	}
	return emulatorLost(lost, timeout, what)
}

// emulatorLost is the failure of a row whose messages lost were not
// delivered again within timeout.
func emulatorLost(lost []string, timeout time.Duration, what string) string {
	return fmt.Sprintf("emulator lost it: the broker stopped redelivering %s within %s though nothing settled it, and %s never came: "+
		"Google's Pub/Sub emulator drops nacked messages under load (docs/emulators.md#googles-pubsub-emulator); the cell fails rather than pass on a dropped message. "+
		"On a broker that does not drop messages (SQS, RocketMQ), or when it recurs on Pub/Sub, read it as brighter's: a message kept leased "+
		"(extended past its budget's deliveries) or settled where the recording consumer cannot see it (inside a rejection)",
		strings.Join(lost, ", "), timeout, what)
}

// RedeliveryDropper is a Fixture whose broker is known to stop redelivering a
// message it still holds (Google's Pub/Sub emulator,
// docs/emulators.md#googles-pubsub-emulator). A row may run such a cell again,
// on a fresh channel, when an attempt ends with "emulator lost it"
// (awaitFinalOrLost), at most DropperAttempts times; it never passes on an
// attempt that lost a message.
type RedeliveryDropper interface {
	// DropsRedeliveries reports whether the broker may drop a message.
	DropsRedeliveries() bool
}

// DropperAttempts bounds the attempts of a cell on a RedeliveryDropper.
const DropperAttempts = 3

// attemptsFor returns how many attempts a retrying row makes on f: 1,
// or DropperAttempts on a RedeliveryDropper.
func attemptsFor(f Fixture) int {
	if d, ok := f.(RedeliveryDropper); ok && d.DropsRedeliveries() {
		return DropperAttempts
	}
	return 1
}

// awaitScenario is AwaitFinal for a scenario's one message, its deliveries
// and brighter's settles read from the scenario's RecordingConsumer.
func awaitScenario(t testing.TB, sc *scenario, timeout time.Duration, what string, want int, final func() bool) {
	t.Helper()
	AwaitFinal(t, timeout, what, Evidence{IDs: []string{sc.id}, Want: want, Final: func(string) bool { return final() }}.recorded(sc.rec))
}

// routed reports whether rec saw id rejected to route with the broker
// accepting the routed copy and the acknowledgement of the original.
func routed(rec *RecordingConsumer, id string) bool {
	for _, rj := range rec.Rejects(id) {
		if rj.Result.Err == nil && !rj.Result.Released {
			return true
		}
	}
	return false
}

// arrivals polls destination c for copies of ids (their OriginalID), for
// Evidence.Final: a copy on the dead-letter destination is its message's
// final place. got returns the first copy of id read.
type arrivals struct {
	read func() []*message.Message
	seen map[string]*message.Message
}

func newArrivals(read func() []*message.Message) *arrivals {
	return &arrivals{read: read, seen: map[string]*message.Message{}}
}

// Final reads the destination once more and reports whether id's copy came.
func (a *arrivals) Final(id string) bool {
	if a.seen[id] != nil {
		return true
	}
	for _, m := range a.read() {
		if a.seen[m.OriginalID()] == nil {
			a.seen[m.OriginalID()] = m
		}
	}
	return a.seen[id] != nil
}

func (a *arrivals) got(id string) *message.Message { return a.seen[id] }
