package inspect

import (
	"time"

	"github.com/brightergo/brighter/internal/message"
)

// What a replay is asked to do (ReplayOptions) and what it tells of each
// message (Outcome, Progress) and at its end (Summary).

// ReplayOptions say how to replay.
type ReplayOptions struct {
	// To is the topic (or queue) every replayed message is published to;
	// "" means each message's originalTopic.
	To string
	// Allow decides, when To is "", whether a message may be replayed to
	// its originalTopic (a name as the message carries it): a message it
	// refuses is counted in Summary.Refused, reported with ErrRefused and
	// left in place. nil allows any destination (--allow-any-destination).
	// It is called from the scan's goroutine only.
	Allow func(destination string) bool
	// Route, when To is "", maps an allowed originalTopic to where the copy
	// is published instead (Outcome.Destination, Header.Topic): `dlq
	// replay`'s fan-out guard sends a copy for an SNS topic straight to the
	// failed subscription's queue. nil, or a name returned
	// unchanged, publishes to the originalTopic. It is called from the
	// scan's goroutine only.
	Route func(destination string) string
	// NewID gives each replayed message a new id (a UUID).
	NewID bool
	// KeepCount keeps the presented HandledCount; by default it is reset to
	// 0 so the replayed message's budget starts afresh.
	KeepCount bool
	// DryRun reports what would be replayed and changes nothing.
	DryRun bool
	// Copy keeps each replayed message in the dead-letter destination
	// (`dlq replay --copy`): it is published and then only
	// released, never removed. The scan holds every message it read until it
	// ends, as a peek does, so each is copied once a run; on an SQS FIFO
	// queue or a RocketMQ message group only what the broker delivers while
	// the earlier messages are held (the first batch of each group) is
	// reached.
	Copy bool
	// Journal, when set (and not Copy or DryRun), makes the replay
	// resumable: a copy whose replay id (ReplayID) it records as
	// sent by an earlier run is not published again, its message only
	// removed; every other copy is recorded sending before its publish and
	// sent once the broker accepted it, before the message is removed.
	Journal ReplayJournal
	// Rate limits publishes to this many per second; 0 means no limit. The
	// limiter paces the publishes themselves: a batch takes its tokens just
	// before its send, and batches are no larger than the limiter admits at
	// once (rateBatch), so the first message goes at once and the others
	// follow spaced, each reported as its batch is done.
	Rate float64
	// Workers is how many batches of messages are published and removed at
	// once; 0 means DefaultReplayWorkers. The messages of one receive that
	// have no partition key go to one worker together (one batch); messages
	// with the same partition key (a FIFO group, an ordering key) always go
	// through the same worker, in the order they were read.
	Workers int
	// Progress is told about every selected message; nil means none. It is
	// called from one goroutine at a time.
	Progress Progress
	// Now is the clock for replayedAt; nil means time.Now.
	Now func() time.Time
	// Transform, when set, changes each replay copy c of the original m
	// before it is published (`dlq edit`: Edit.Transform). An error counts
	// the message failed and leaves it where it is, nothing published; it
	// is called from the scan's goroutine only, in a dry run too.
	Transform func(m, c *message.Message) error
	// History, when set, records every copy the replay published (not in a
	// dry run, not a copy an earlier run sent, not a second stored copy):
	// the retry history the console shows. A failed record is logged,
	// never a failure of the replay.
	History *RetryHistory
	// RedriveSource, when set, returns where a message without rejection
	// metadata that names no topic but the destination being read is
	// replayed without To: the one source whose redrive policy targets
	// that destination ("" when unknown; ReplayCopy). It is called only
	// for such a message, from any goroutine, and should remember its
	// answer (it may ask the broker).
	RedriveSource func() string
	// Check, when set, is asked with DryRun about each copy: an error (what
	// the producer would refuse before any call, e.g. a body the transport
	// cannot carry) makes the copy a failure of the dry run, as it would
	// be of the real one.
	Check func(c *message.Message) error
}

// DefaultReplayWorkers is the default of ReplayOptions.Workers.
const DefaultReplayWorkers = 4

// Outcome is what happened to one selected message.
type Outcome struct {
	// ID is the message's id in the destination it was read from.
	ID string
	// NewID is the id it was published with (ID unless ReplayOptions.NewID).
	NewID string
	// Destination is where it was (or would be) published.
	Destination string
	// DryRun is true when nothing was done.
	DryRun bool
	// Refused is true when the allow-list refused Destination (Err wraps
	// ErrRefused); the message was left in place.
	Refused bool
	// Resumed is true when an earlier, interrupted run had published the
	// copy (ReplayOptions.Journal): this run only removed the message.
	Resumed bool
	// Duplicate is true when this run already handled another stored copy
	// of the same failure (same id and rejection time): this copy is
	// removed (kept with Copy), not published again.
	Duplicate bool
	// Err is why it failed; nil when it was replayed.
	Err error
	// Unpublished is true when it failed before any publish was tried (no
	// destination, a copy that could not be made or edited): nothing of
	// it can have reached a destination.
	Unpublished bool
	// Left is true when the message was dead-lettered again while this
	// run ran (a copy this run replayed that came back, or a new failure of
	// an id this run handled): it is left in the dead-letter destination,
	// neither published nor removed, and counted in Summary.Left.
	Left bool
}

// Progress is told about every selected message of a replay, in order.
type Progress interface {
	Done(o Outcome)
}

// Summary is the end of a replay.
type Summary struct {
	// Replayed is how many were published and removed (or, with DryRun,
	// would be).
	Replayed int `json:"replayed"`
	// Skipped is how many were read and not selected; they stay in place.
	Skipped int `json:"skipped"`
	// Failed is how many selected messages could not be replayed (each
	// stays in the dead-letter destination) or were published but not
	// removed (each is in both places).
	Failed int `json:"failed"`
	// Refused is how many selected messages the allow-list refused
	// (ReplayOptions.Allow); each stays in the dead-letter destination.
	Refused int `json:"refused"`
	// Left is how many messages were dead-lettered again while the replay
	// ran (Outcome.Left); each stays in the dead-letter destination, for a
	// later run. With Replayed, Skipped, Failed and Refused it accounts for
	// every message read.
	Left int `json:"left"`
	// DryRun is true when nothing was changed.
	DryRun bool `json:"dryRun"`
	// FailedUnpublished is how many of Failed failed before any publish
	// was tried (Outcome.Unpublished): none of them can have reached a
	// destination. Not part of the JSON summary.
	FailedUnpublished int `json:"-"`
}
