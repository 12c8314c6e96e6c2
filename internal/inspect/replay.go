package inspect

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// KeyDeduplicationID is the bag key of the FIFO deduplication id (SQS
// MessageDeduplicationId, as Brighter names it). Replay writes a fresh one
// on a message with a partition key, so SQS does not silently drop a
// re-send inside its five-minute deduplication window.
const KeyDeduplicationID = "messageDeduplicationId"

// ErrNoDestination is returned (wrapped) for a message that names no
// original topic (or only the destination it sits in) when no --to was
// given.
var ErrNoDestination = errors.New("no destination: the message carries no originalTopic; give --to")

// ErrNoRedriveSource is returned (wrapped) for a message without rejection
// metadata (moved by the broker's own redrive policy, or sent by hand) that
// names no topic but the destination being read, when no --to was given and
// the source its redrive came from is not known
// (ReplayOptions.RedriveSource is nil or answers "").
var ErrNoRedriveSource = errors.New("no destination: the message carries no rejection metadata (moved here by the broker's own redrive policy, or sent here by hand) and names no topic but this one, and no single source whose redrive policy targets this destination is known (from the subscriptions file, or on SQS from ListDeadLetterSourceQueues); give --to")

// ErrRefused is returned (wrapped) for a message whose originalTopic is not
// on the replay's allow-list (ReplayOptions.Allow) when no --to was given:
// the message is left where it is (the originalTopic is written
// by whoever wrote the message, so it may name any queue).
var ErrRefused = errors.New("refused: its originalTopic is not a destination the subscriptions file knows for this dead-letter destination; give --to, or --allow-any-destination")

// Replay scans the source and, for each message the filter selects,
// publishes its ReplayCopy with p and only then acknowledges (removes) it
// from the source: a failed publish leaves the message where it was and the
// replay goes on; a failed acknowledge leaves it in both places. At no
// instant is a message in neither place. Messages not selected, not
// replayed or not removed are released when the scan ends.
// With o.Copy nothing is removed: each selected message is published and
// stays, held until the scan ends, then released.
//
// Each message is handled at most once a run: a message dead-lettered
// again while the run ran (replayRun.cameBack: a copy this run
// replayed, or a failure after the run began of an id it handled) is left
// untouched (held, then released), reported with Outcome.Left and counted
// in Summary.Left, so a replay beside a consumer that dead-letters the
// replayed copies again ends. Every other stored copy of an id is replayed:
// a copy of the same failure (same id and rejection time) is removed, not
// published twice; one with another rejection time from before the run (a
// duplicate delivery, two subscriptions sharing a dead-letter destination)
// is a failure of its own, published and removed.
//
// When ctx ends (an interrupt) the scan stops reading; publishes already
// under way finish with their removes, messages handed over but not yet
// published are released, and every message the scan holds is made
// visible again before Replay returns ctx's error.
//
// It returns the summary and an error only when the scan itself failed
// (receive, ctx) or a write of o.Journal failed (the error names the
// journal's file; a copy whose "sending" record failed was not published,
// so its message stays in the source); per-message failures are counted in
// Summary.Failed and logged at Error with the message id.
func Replay(ctx context.Context, src *Source, self string, p broker.Producer, f Filter, o ReplayOptions) (Summary, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	pacer, batchMax := newReplayPacer(o)
	log := src.logger()
	sum := Summary{DryRun: o.DryRun}
	var (
		mu sync.Mutex
		// journalErr is the first failed write of the journal (under mu):
		// Replay returns it, so that the command fails naming the file.
		journalErr error
	)
	journalFailed := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if journalErr == nil {
			journalErr = err
		}
	}
	report := func(out Outcome) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case out.Left:
			sum.Left++
		case out.Refused:
			sum.Refused++
		case out.Err != nil:
			sum.Failed++
			if out.Unpublished {
				sum.FailedUnpublished++
			}
		default:
			sum.Replayed++
			if o.History != nil && !out.DryRun && !out.Resumed && !out.Duplicate {
				action := "replay"
				if edited := o.Transform != nil; edited {
					action = "edit"
				}
				r := Retry{At: now().UTC(), Action: action, ID: out.ID, From: src.Name, To: redact.URL(out.Destination)}
				if err := o.History.Record(r); err != nil {
					log.WarnContext(ctx, LogHistoryFailed, "message_id", out.ID, "source", src.Name, "error", err.Error())
				}
			}
		}
		if o.Progress != nil {
			o.Progress.Done(out)
		}
	}
	type job = replayJob
	// publish publishes the copies of jobs, one error each. With a journal
	// a copy an earlier run sent is not published again (its job is marked
	// Resumed), the others are recorded sending before and sent after.
	publish := func(ctx context.Context, jobs []job) []error {
		journal := o.Journal
		if o.Copy {
			journal = nil
		}
		perr := make([]error, len(jobs))
		var idx []int
		var copies []*message.Message
		var rids []string
		for i, j := range jobs {
			rid, _ := j.c.Header.Bag.String(KeyReplayID)
			if journal != nil && journal.Sent(rid) {
				jobs[i].out.Resumed = true
				continue
			}
			if j.out.Duplicate {
				// Another copy of a failure this run published (or is
				// publishing): removed, not published twice.
				continue
			}
			idx, copies, rids = append(idx, i), append(copies, j.c), append(rids, rid)
		}
		if len(copies) == 0 {
			return perr
		}
		if journal != nil {
			if err := journal.Sending(rids); err != nil {
				// Not durably recorded: nothing is published (so nothing
				// is removed); the messages stay where they are.
				journalFailed(err)
				for _, i := range idx {
					perr[i] = err
				}
				return perr
			}
		}
		var sent []string
		for k, err := range sendAll(ctx, p, copies) {
			perr[idx[k]] = err
			if err == nil {
				sent = append(sent, rids[k])
			}
		}
		if journal != nil {
			if err := journal.Published(sent); err != nil {
				// Published: remove them all the same; only a crash before
				// the remove would now publish them again.
				journalFailed(err)
				log.ErrorContext(ctx, LogJournalFailed, "source", src.Name, "error", err)
			}
		}
		return perr
	}
	// move publishes a batch of messages and only then removes the ones
	// that were published; a message whose publish failed is released at
	// once and stays in the destination it was read from, one whose remove
	// failed is released and is in both places. With a broker.BatchProducer
	// the publishes, and with a broker.BatchAcknowledger the removes, take
	// one call per ten messages instead of one each (faster, and
	// fewer requests also cost less on SQS). It returns how many
	// were removed.
	//
	// It runs with ctx's values but not its cancellation: once a publish has
	// started, an interrupt lets it and the remove that follows finish, so
	// an interrupted replay leaves no message published but not removed.
	move := func(ctx context.Context, jobs []job) int64 {
		ctx = context.WithoutCancel(ctx)
		perr := publish(ctx, jobs)
		var sent []int // indexes into jobs of the published messages
		var back []held
		for i, j := range jobs {
			if perr[i] == nil {
				sent = append(sent, i)
				continue
			}
			jobs[i].out.Err = fmt.Errorf("publish to %s: %w", j.out.Destination, perr[i])
			log.ErrorContext(ctx, LogReplayFailed, "message_id", j.m.Header.MessageID, "source", src.Name, "destination", j.out.Destination, "error", perr[i])
			if !o.Copy {
				back = append(back, holdOf(j.m))
			}
		}
		originals := make([]*message.Message, len(sent))
		for k, i := range sent {
			originals[k] = jobs[i].m
		}
		if o.Copy {
			// The scan holds every message (visit did not take them over)
			// and releases them when it ends: nothing to remove or release.
			for _, i := range sent {
				log.DebugContext(ctx, LogReplayed, "message_id", jobs[i].m.Header.MessageID, "new_id", jobs[i].c.Header.MessageID, "source", src.Name, "destination", jobs[i].out.Destination, "copy", true)
			}
			for _, j := range jobs {
				report(j.out)
			}
			return 0
		}
		aerr := acknowledgeAll(ctx, src.Consumer, originals)
		var moved int64
		var removedRIDs []string
		for k, i := range sent {
			j := &jobs[i]
			id := j.m.Header.MessageID
			if aerr[k] != nil {
				j.out.Err = fmt.Errorf("published to %s but not removed from %s (it is now in both places): %w", j.out.Destination, src.Name, aerr[k])
				log.ErrorContext(ctx, LogRemoveFailed, "message_id", id, "source", src.Name, "destination", j.out.Destination, "error", aerr[k])
				back = append(back, holdOf(j.m))
				continue
			}
			moved++
			rid, _ := j.c.Header.Bag.String(KeyReplayID)
			removedRIDs = append(removedRIDs, rid)
			log.DebugContext(ctx, LogReplayed, "message_id", id, "new_id", j.c.Header.MessageID, "source", src.Name, "destination", j.out.Destination)
		}
		if o.Journal != nil {
			if err := o.Journal.Removed(removedRIDs); err != nil {
				log.ErrorContext(ctx, LogJournalFailed, "source", src.Name, "error", err)
			}
		}
		release(ctx, src, back)
		for _, j := range jobs {
			report(j.out)
		}
		return moved
	}
	workers := o.Workers
	if workers <= 0 {
		workers = DefaultReplayWorkers
	}
	lanes := make([]chan []job, workers)
	var (
		wg      sync.WaitGroup
		pending sync.WaitGroup // jobs handed to a lane and not yet settled
		removed atomic.Int64   // messages removed since the last settle
	)
	for i := range lanes {
		lanes[i] = make(chan []job, 2)
		wg.Add(1)
		go func(in <-chan []job) {
			defer wg.Done()
			batch := make([]job, 0, batchMax)
			// run moves the batch (or, interrupted before its publish
			// began, leaves it where it is) and settles its jobs. With a
			// rate it first waits for the batch's tokens (replayPacer.wait).
			run := func() {
				paced := ctx.Err() == nil && pacer.wait(ctx, batch)
				switch {
				case !paced && o.Copy:
					// Interrupted before their publish began; the scan
					// releases them (it holds every message of a copy).
				case !paced:
					// Interrupted before their publish began: leave them
					// where they are, visible at once, counted neither way.
					back := make([]held, len(batch))
					for k, b := range batch {
						back[k] = holdOf(b.m)
					}
					release(context.WithoutCancel(ctx), src, back)
				default:
					removed.Add(move(ctx, batch))
				}
				for range batch {
					pending.Done()
				}
				batch = batch[:0]
			}
			for js := range in {
				// Take what else the scan has already queued on this lane,
				// without waiting, while it fits one call: a lane that
				// falls behind moves up to batchMax messages per round
				// trip, in the order read.
				batch = append(batch, js...)
			fill:
				for len(batch) < batchMax {
					select {
					case next, ok := <-in:
						if !ok {
							break fill
						}
						if len(batch)+len(next) > batchMax {
							run()
						}
						batch = append(batch, next...)
					default:
						break fill
					}
				}
				run()
			}
		}(lanes[i])
	}
	seed := maphash.MakeSeed()
	// run remembers what this run handled, to tell a copy that came back
	// while it ran (left) from one stored before it (replayRun.cameBack).
	run := newReplayRun(src.Name, now(), seed)
	known := func(m *message.Message) bool {
		if !run.cameBack(m) {
			return false
		}
		if run.leftOnce(m) {
			log.WarnContext(ctx, LogReplayLeft, "message_id", m.Header.MessageID, "source", src.Name)
			report(Outcome{ID: m.Header.MessageID, DryRun: o.DryRun, Left: true})
		}
		return true
	}
	// The scan collects what one receive brought before it hands it over
	// (flush, after each receive): the messages without a partition key
	// together to the next lane in turn, so that a receive of ten is one
	// SendMessageBatch and one DeleteMessageBatch; those with a key to the
	// lane of their key, in the order read.
	var (
		loose []job
		keyed = make([][]job, workers)
		turn  int
		// handed is how many messages the scan handed to the lanes since
		// the last settle.
		handed int
	)
	flush := func() {
		if len(loose) > 0 {
			handed += len(loose)
			lanes[turn%workers] <- loose
			turn++
			loose = nil
		}
		for l, js := range keyed {
			if len(js) > 0 {
				handed += len(js)
				lanes[l] <- js
				keyed[l] = nil
			}
		}
	}
	settle := func() bool {
		flush()
		pending.Wait()
		handed = 0
		return removed.Swap(0) > 0
	}
	h := hooks{settle: settle, known: known, batch: func() error { flush(); return nil }}
	if src.ShortPoll {
		// Once messages were handed over, the scan receives with short
		// polls (an empty answer then waits for the moves in settle and
		// does not count): proving the source empty costs one long poll
		// made after every move, confirmed by a short poll, as for
		// archive.
		h.pollShort = func() bool { return handed > 0 }
	}
	counts, err := scan(ctx, src, f, func(ctx context.Context, m *message.Message) (bool, error) {
		id := m.Header.MessageID
		again := run.read(m)
		c, dest, err := ReplayCopy(m, src.Name, self, o, now())
		if errors.Is(err, ErrRefused) {
			// Left in place (released when the scan ends), listed and
			// counted; a dry run shows the same decision.
			log.WarnContext(ctx, LogReplayRefused, "message_id", id, "source", src.Name, "destination", redact.Cut(dest))
			report(Outcome{ID: id, Destination: dest, DryRun: o.DryRun, Refused: true, Err: err})
			return false, nil
		}
		if err != nil {
			log.ErrorContext(ctx, LogReplayFailed, "message_id", id, "source", src.Name, "error", err)
			report(Outcome{ID: id, Err: err, Unpublished: true})
			return false, nil
		}
		if o.Transform != nil {
			if err := o.Transform(m, c); err != nil {
				log.ErrorContext(ctx, LogReplayFailed, "message_id", id, "source", src.Name, "destination", redact.Cut(dest), "error", err)
				report(Outcome{ID: id, Destination: dest, DryRun: o.DryRun, Err: err, Unpublished: true})
				return false, nil
			}
		}
		run.handledID(c.Header.MessageID)
		out := Outcome{ID: id, NewID: c.Header.MessageID, Destination: dest, DryRun: o.DryRun, Duplicate: again}
		if o.DryRun {
			if o.Check != nil {
				if err := o.Check(c); err != nil {
					log.ErrorContext(ctx, LogReplayFailed, "message_id", id, "source", src.Name, "destination", redact.Cut(dest), "error", err)
					out.Err = err
				}
			}
			report(out)
			return false, nil
		}
		key := m.Header.PartitionKey
		if key == "" {
			key = id
		}
		// The worker owns the message from here: it removes or releases it
		// (with Copy the scan keeps holding it and releases it at its end).
		pending.Add(1)
		j := job{m: m, c: c, out: out}
		if m.Header.PartitionKey == "" {
			loose = append(loose, j)
			if len(loose) == batchMax {
				flush()
			}
		} else {
			l := maphash.String(seed, key) % uint64(workers)
			if keyed[l] = append(keyed[l], j); len(keyed[l]) == batchMax {
				flush()
			}
		}
		return !o.Copy, nil
	}, h)
	flush()
	for _, l := range lanes {
		close(l)
	}
	wg.Wait()
	sum.Skipped = counts.Skipped
	if err == nil && journalErr != nil {
		err = fmt.Errorf("the replay journal could not be written: %w", journalErr)
	}
	return sum, err
}

// Count scans the source and returns how many messages the filter selects
// (at most its limit); nothing is removed. Replay uses it to ask for
// confirmation before a large replay.
func Count(ctx context.Context, src *Source, f Filter) (int, error) {
	counts, err := Scan(ctx, src, f, func(context.Context, *message.Message) (bool, error) { return false, nil })
	return counts.Selected, err
}
