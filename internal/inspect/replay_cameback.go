package inspect

import (
	"hash/maphash"
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// The rule that tells, for a message a replay reads with an id it has
// already handled, a copy dead-lettered again while the run ran (left)
// from another copy stored before it (replayed).

// replayRun is what one replay run remembers of the messages it handled.
// Only the scan's goroutine uses it.
type replayRun struct {
	src string // the source's name (a URL), as replayedFrom records it
	// handled holds the id (and the new id) of every message this run has
	// replayed, tried to replay or reported; failures holds the replay id
	// (ReplayID: id and rejection time) of each.
	handled  map[string]struct{}
	failures map[string]struct{}
	// markStart is the run's start by the clock that writes replayedAt on
	// its copies; wallStart by the wall clock that rejection times are
	// written by.
	markStart, wallStart time.Time
	// left holds the identity of every message reported left, so a copy
	// read again (a source that releases after each receive) is counted
	// once.
	left map[uint64]struct{}
	seed maphash.Seed
}

// newReplayRun starts the memory of a run reading src that started at
// markStart by the replay's clock (and now by the wall clock).
func newReplayRun(src string, markStart time.Time, seed maphash.Seed) *replayRun {
	return &replayRun{src: src, handled: map[string]struct{}{}, failures: map[string]struct{}{},
		markStart: markStart, wallStart: time.Now(), left: map[uint64]struct{}{}, seed: seed}
}

// read records m, selected by the scan, as handled, and reports whether
// the run already handled its failure (same id and rejection time:
// another stored copy of it, removed, not published again).
func (r *replayRun) read(m *message.Message) (again bool) {
	r.handled[m.Header.MessageID] = struct{}{}
	rid := ReplayID(m, r.src)
	_, again = r.failures[rid]
	r.failures[rid] = struct{}{}
	return again
}

// handledID records id (a copy's new id) as handled.
func (r *replayRun) handledID(id string) { r.handled[id] = struct{}{} }

// cameBack reports whether m, read again with an id this run handled,
// was dead-lettered again while the run ran, rather than stored before
// it:
//   - it carries this run's mark: replayedFrom this source and a
//     replayedAt no earlier than the run's start, both written by
//     ReplayCopy with this run's clock and kept by whatever dead-letters
//     the copy (the pump's Stamp and native redrives keep the bag), so a
//     consumer that sends every replayed copy back is met once and the
//     replay ends; checked first, since the copy of a native-redrive
//     dead letter that a native redrive moves back carries no rejection
//     time, as its original did, and would otherwise pass for a second
//     stored copy of that failure (removed, not left);
//   - else, unmarked, it is the same failure as one handled (another
//     stored copy: handled as a duplicate), or a failure rejected at or
//     after the run's start (or with no readable rejection time), which
//     cannot have been stored before the run. A copy that lost the mark
//     still comes back at most once a run, unless the rejecting host's
//     clock runs behind this one's, and then only for that lag.
//
// A copy rejected before the run began is what was there before (two
// subscriptions sharing a dead-letter destination, a duplicate
// delivery): replayed. The rule errs only towards leaving a message,
// and a left message is counted (Summary.Left) and makes the command
// fail, never silent.
func (r *replayRun) cameBack(m *message.Message) bool {
	if _, ok := r.handled[m.Header.MessageID]; !ok {
		return false
	}
	if from, _ := m.Header.Bag.String(message.KeyReplayedFrom); from == r.src {
		if s, ok := m.Header.Bag.String(message.KeyReplayedAt); ok {
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil && !at.Before(r.markStart) {
				return true
			}
		}
	}
	if _, dup := r.failures[ReplayID(m, r.src)]; dup {
		return false
	}
	at := Describe(m).RejectedAt
	return at.IsZero() || !at.Before(r.wallStart)
}

// leftOnce records m, which came back, as left and reports whether it
// was not recorded yet: it is reported (and counted) the first time only.
func (r *replayRun) leftOnce(m *message.Message) bool {
	k := identity(r.seed, m)
	if _, said := r.left[k]; said {
		return false
	}
	r.left[k] = struct{}{}
	return true
}
