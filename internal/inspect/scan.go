package inspect

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// Defaults of a Source.
const (
	// DefaultWait is how long one receive of a scan waits for messages;
	// emptyReceives receives in a row that return none end the scan.
	DefaultWait = time.Second
	// emptyReceives is how many empty receives in a row end a scan: one
	// alone can come early from a busy broker (seen on the SQS emulator
	// under load) and would make a peek or replay miss messages.
	emptyReceives = 2
	// DefaultReleaseWorkers is how many release calls run at once when a
	// scan ends.
	DefaultReleaseWorkers = 16
	// releaseBatch is the most messages one release call makes visible
	// again with a broker.BatchReleaser: SQS's batch limit of ten.
	releaseBatch = 10
	// staleBatches is how many receives in a row may bring only messages the
	// scan has seen (their hold lapsed) before it stops.
	staleBatches = 3
	// receiveTries is how many times a scan tries a receive that fails with
	// a channel failure (a dropped connection, a client that lost the
	// broker's answer) before it gives up, backing off from
	// receiveRetryDelay (doubling, with jitter) between tries.
	receiveTries      = 3
	receiveRetryDelay = 200 * time.Millisecond
)

// Stable log message texts of this package (tests match them).
const (
	LogReleaseFailed = "dlq message could not be released; it reappears when its visibility timeout lapses"
	LogReplayed      = "dlq message replayed"
	LogReplayFailed  = "dlq message replay failed; it stays in the dead-letter destination"
	LogReplayRefused = "dlq message not replayed: its originalTopic is not on the allow-list; it stays in the dead-letter destination"
	LogRemoveFailed  = "dlq message replayed but not removed; it is now in both places"
	// LogReplayLeft is logged (Warn) for a message dead-lettered again
	// while the replay ran (Outcome.Left).
	LogReplayLeft    = "dlq message dead-lettered again while the replay ran; it stays in the dead-letter destination for a later run"
	LogJournalFailed = "dlq replay journal not written; a rerun after a crash may publish these copies again"
	LogReceiveRetry  = "dlq receive failed; retrying"
	// LogJournalCut is logged once when a replay journal's last line was
	// cut by a crash mid-write (FileJournal.Cut): the run resumes from the
	// records before it.
	LogJournalCut = "dlq replay journal ended in a line cut short by a crash; it was dropped and the run resumes from the records before it"
	// LogJournalNoID is logged once when a replay journal holds lines
	// with an empty replay id (FileJournal.NoID): they name no copy and
	// were passed over.
	LogJournalNoID   = "dlq replay journal holds records with an empty replay id (written by an older dlq edit); they name no copy and were passed over"
	LogHistoryFailed = "dlq retry not recorded in the retry history"
)

// Source is a destination to inspect, read through the transport's
// ordinary consumer.
type Source struct {
	// Consumer reads the destination. It should hold each received message
	// invisible for longer than the scan takes (the commands ask for a
	// visibility timeout of several minutes).
	Consumer broker.Consumer
	// Name names the destination in replayedFrom and in messages, as a URL
	// (sqs://orders-dlq, memory://orders-dlq).
	Name string
	// Wait is how long one receive waits; 0 means DefaultWait. A receive
	// that brings nothing ends the scan once another receive confirms it
	// (emptyReceives in a row).
	Wait time.Duration
	// ShortPoll, when true, says the consumer's Receive with timeout 0 is a
	// short poll that answers at once with what it finds, and a waiting
	// receive that returns nothing has asked every server, as an SQS long
	// poll (WaitTimeSeconds >= 1) does. The scan then makes the receives
	// that confirm an empty receive short polls, so proving the destination
	// empty costs one Wait instead of two: the confirmation guards against
	// an empty answer that came early (a busy emulator), not against a
	// sample of the servers; the first empty receive always waits Wait.
	// Archive and replay also receive with short polls while they write,
	// publish or remove what earlier receives brought (without that overlap
	// `dlq archive` ran at 0.8 of a plain SDK loop's rate); an empty short
	// poll made then never counts towards the end, so the end is still one
	// long poll made after every remove, confirmed by a short poll.
	ShortPoll bool
	// ReleaseWorkers is how many releases run at once; 0 means
	// DefaultReleaseWorkers.
	ReleaseWorkers int
	// ReleaseEach, when true, makes a scan release the messages of each
	// receive as soon as it has visited them, instead of holding every
	// message until the scan ends: a message is invisible to other
	// consumers only between a receive and its release (milliseconds),
	// never for the consumer's visibility timeout. The scan then ends when
	// receives bring nothing or only messages it has seen (staleBatches in
	// a row). A released message goes back behind the unread ones on SQS,
	// so the scan still meets each; a broker that hands the released ones
	// back first may make such a scan miss some. For re-reads that only
	// show (the console's refresh), never for an action that removes.
	ReleaseEach bool
	// Logger receives the package's records; nil means slog.Default().
	Logger *slog.Logger
	// Receiving, when not nil, is called as each receive of a scan starts,
	// with how long it may wait for messages; the function it returns is
	// called when that receive returns. A command tells with it how long
	// an interrupt waits for the receive in flight.
	Receiving func(wait time.Duration) (returned func())
}

func (s *Source) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Visit is called for each selected message of a scan. It returns removed
// true when it acknowledged (removed) the message itself; otherwise the scan
// releases the message when it ends. An error stops the scan.
type Visit func(ctx context.Context, m *message.Message) (removed bool, err error)

// ScanCounts reports what a scan saw.
type ScanCounts struct {
	// Scanned is how many distinct stored copies were received (two copies
	// with the same id count twice).
	Scanned int
	// Selected is how many passed the filter (at most Filter.Limit).
	Selected int
	// Skipped is Scanned - Selected: received, not selected, left in place.
	Skipped int
	// ReleaseFailed is how many held messages could not be released at once
	// (they reappear when their visibility timeout lapses).
	ReleaseFailed int
}

// held is what a scan keeps per message until it releases it: the id for
// logs and the transport's receipt.
type held struct {
	id      string
	receipt any
}

// holdOf is what a scan keeps of m: copies of its id and (when it is a
// string, as SQS's receipt handle is) its receipt, so the strings kept do
// not pin the buffers the transport decoded them from.
func holdOf(m *message.Message) held {
	r := m.Receipt
	if s, ok := r.(string); ok {
		r = strings.Clone(s)
	}
	return held{strings.Clone(m.Header.MessageID), r}
}

// identity is the key a scan recognises a message it has seen by: the
// broker's id of the stored copy (message.Message.StoredID) when the
// transport gives one, so every stored copy counts, even two with the same
// id and rejection time (a message restored twice), while a re-read of one
// stored copy is one. Without a StoredID it is the message's id, for a
// routed copy its rejection time, and for a replayed copy its replay time
// (a message rejected twice, or a replayed copy beside its original, is
// two entries). It is kept as a 64-bit hash (8 bytes a message, not the
// strings).
func identity(seed maphash.Seed, m *message.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if m.StoredID != "" {
		h.WriteByte(1)
		h.WriteString(m.StoredID)
		return h.Sum64()
	}
	ts, _ := m.Header.Bag.String(message.KeyRejectionTimestamp)
	at, _ := m.Header.Bag.String(message.KeyReplayedAt)
	h.WriteString(m.Header.MessageID)
	h.WriteByte(0)
	h.WriteString(ts)
	h.WriteByte(0)
	h.WriteString(at)
	return h.Sum64()
}

// Scan reads the source until a receive brings nothing (or only messages it
// has already seen, staleBatches times in a row), the filter's limit is
// reached, visit fails or ctx ends. Each distinct message that passes f is
// handed to visit; every message visit did not remove, selected or not, is
// held (kept invisible) and released at once when the scan ends, so a scan
// never removes anything by itself and reads each message once. Memory grows
// with a receipt and an identity key per message, never with bodies.
//
// It returns the counts and the first error of receive, visit or ctx; the
// releases happen even then (with ctx's values but not its cancellation).
// When ctx ends (an interrupt) the receive under way finishes (it waits at
// most src.Wait), nothing more is visited, and everything held, including
// what that receive brought, is released before Scan returns ctx's error.
func Scan(ctx context.Context, src *Source, f Filter, visit Visit) (ScanCounts, error) {
	return scan(ctx, src, f, visit, hooks{})
}

// hooks are scan's optional callbacks; the zero value has none.
type hooks struct {
	// settle: see scan.
	settle func() bool
	// known: see scan.
	known func(*message.Message) bool
	// batch is called after each non-empty receive has been visited (peek
	// flushes its output there, so what was read is shown at once).
	batch func() error
	// pollShort, when not nil and src.ShortPoll is set, is asked before
	// each receive: true makes it a short poll (archive, while the previous
	// receive's commit is under way; replay, once it handed messages to its
	// workers since the last settle). An empty answer then goes to settle
	// and never counts towards the end; settle must make pollShort false.
	pollShort func() bool
}

// receive is one receive of a scan: a channel failure is retried
// receiveTries times in all with back-off (logged at Warn with the source
// and error); any other error, or the last failure, is returned. The
// receive itself is not cancelled with ctx (see scan); the waits between
// tries are.
func receive(ctx context.Context, src *Source, wait time.Duration) ([]*message.Message, error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = receiveRetryDelay
	return backoff.Retry(ctx, func() ([]*message.Message, error) {
		if src.Receiving != nil {
			defer src.Receiving(wait)()
		}
		ms, err := src.Consumer.Receive(context.WithoutCancel(ctx), wait)
		if err != nil && !errors.Is(err, broker.ErrChannelFailure) {
			return nil, backoff.Permanent(err)
		}
		return ms, err
	}, backoff.WithBackOff(b), backoff.WithMaxTries(receiveTries), backoff.WithNotify(func(err error, d time.Duration) {
		src.logger().Warn(LogReceiveRetry, "source", src.Name, "retry_in", d, "error", err.Error())
	}))
}

// scan is Scan with hooks. h.settle: called when a receive brings nothing, it waits
// until every message visit took over has been removed or released and
// reports whether any was removed since its last call; then the scan
// receives again instead of ending. A broker that holds back what follows
// an in-flight message (an SQS FIFO message group, a RocketMQ message group)
// returns nothing while a replay's removals are still under way, and only
// the removal lets it deliver the rest of the group.
//
// h.known, when not nil, names messages the caller has already dealt with in
// this run (a replayed message dead-lettered again while the scan runs): such
// a message is held and released like a re-read, never counted by the scan
// (the caller counts it), filtered or visited, so a scan that keeps meeting
// them ends as a stale one does.
func scan(ctx context.Context, src *Source, f Filter, visit Visit, h hooks) (ScanCounts, error) {
	var (
		counts ScanCounts
		hold   []held
		seen   = map[uint64]struct{}{}
		seed   = maphash.MakeSeed()
		stale  int
		empty  int
		err    error
	)
	wait := src.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
scan:
	for ctx.Err() == nil {
		// The receive is not cancelled with ctx: a receive cancelled after
		// the broker answered would leave what it took invisible, out of
		// reach of the release below. An interrupt waits for it (at most
		// wait) and releases what it brought.
		w := wait
		// early: a short poll made while work handed over by the scan is
		// under way (h.pollShort). Its empty answer proves nothing, as the
		// first empty receive of a proof must wait w: the scan waits for
		// the work (h.settle) and receives again.
		early := false
		switch {
		case src.ShortPoll && empty > 0:
			w = 0
		case src.ShortPoll && h.pollShort != nil && h.pollShort():
			w, early = 0, true
		}
		ms, rerr := receive(ctx, src, w)
		if rerr != nil {
			err = fmt.Errorf("receive from %s: %w", src.Name, rerr)
			break
		}
		if len(ms) == 0 {
			if h.settle != nil && h.settle() {
				continue
			}
			if early {
				continue
			}
			if empty++; empty < emptyReceives {
				continue
			}
			break
		}
		empty = 0
		fresh := false
		for i, m := range ms {
			if ctx.Err() != nil {
				// Interrupted: visit nothing more, release the rest.
				for _, rest := range ms[i:] {
					if rest.Header.MessageType != message.MTQuit {
						hold = append(hold, holdOf(rest))
					}
				}
				break scan
			}
			if m.Header.MessageType == message.MTQuit {
				continue
			}
			key := identity(seed, m)
			if _, dup := seen[key]; dup || (h.known != nil && h.known(m)) {
				hold = append(hold, holdOf(m))
				continue
			}
			fresh = true
			seen[key] = struct{}{}
			counts.Scanned++
			if (f.Limit > 0 && counts.Selected >= f.Limit) || !f.Match(m) {
				counts.Skipped++
				hold = append(hold, holdOf(m))
				continue
			}
			counts.Selected++
			removed, verr := visit(ctx, m)
			if !removed {
				hold = append(hold, holdOf(m))
			}
			if verr != nil {
				err = verr
				for _, rest := range ms[i+1:] {
					hold = append(hold, holdOf(rest))
				}
				break scan
			}
			if f.Limit > 0 && counts.Selected >= f.Limit {
				for _, rest := range ms[i+1:] {
					hold = append(hold, holdOf(rest))
				}
				break scan
			}
		}
		if h.batch != nil {
			if berr := h.batch(); berr != nil {
				err = berr
				break
			}
		}
		if src.ReleaseEach {
			counts.ReleaseFailed += release(context.WithoutCancel(ctx), src, hold)
			hold = hold[:0]
		}
		if fresh {
			stale = 0
		} else if stale++; stale >= staleBatches {
			break
		}
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	counts.ReleaseFailed += release(context.WithoutCancel(ctx), src, hold)
	return counts, err
}

// release makes every held message visible again at once, several calls at
// a time, and returns how many failed (each logged with its id). With a
// broker.BatchReleaser consumer (SQS) each call releases up to
// releaseBatch messages (ChangeMessageVisibilityBatch), else one (Requeue
// with no delay).
func release(ctx context.Context, src *Source, hold []held) int {
	if len(hold) == 0 {
		return 0
	}
	size := 1
	br, batched := src.Consumer.(broker.BatchReleaser)
	if batched {
		size = releaseBatch
	}
	var chunks [][]held
	for start := 0; start < len(hold); start += size {
		chunks = append(chunks, hold[start:min(start+size, len(hold))])
	}
	workers := src.ReleaseWorkers
	if workers <= 0 {
		workers = DefaultReleaseWorkers
	}
	workers = min(workers, len(chunks))
	var (
		mu     sync.Mutex
		failed int
		wg     sync.WaitGroup
		next   = make(chan []held)
	)
	fail := func(h held, err error) {
		mu.Lock()
		failed++
		mu.Unlock()
		src.logger().WarnContext(ctx, LogReleaseFailed, "message_id", h.id, "source", src.Name, "error", err)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range next {
				ms := make([]*message.Message, len(chunk))
				for i, h := range chunk {
					ms[i] = &message.Message{Header: message.Header{MessageID: h.id}, Receipt: h.receipt}
				}
				if batched && len(ms) > 1 {
					for i, err := range br.ReleaseBatch(ctx, ms) {
						if err != nil {
							fail(chunk[i], err)
						}
					}
					continue
				}
				for i, m := range ms {
					if err := src.Consumer.Requeue(ctx, m, 0); err != nil {
						fail(chunk[i], err)
					}
				}
			}
		}()
	}
	for _, c := range chunks {
		next <- c
	}
	close(next)
	wg.Wait()
	return failed
}
