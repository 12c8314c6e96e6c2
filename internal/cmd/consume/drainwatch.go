package consume

import (
	"context"
	"log/slog"
	"time"
)

// logConsumeAwaitingReceive is logged (Info) once per subscription when a
// stop's drain is waiting only for the receive in flight on its broker (an
// SQS long poll, up to the subscription's timeOut): the pump lets it end so
// that the messages it takes are released rather than left invisible. Its
// attributes are the subscription and up_to, the bound of that wait:
// timeOut plus the pump's receive margin (pump.Pump.ReceiveBound), which a
// broker that never answers makes the receive wait in full.
const logConsumeAwaitingReceive = "draining: waiting for the receive in flight to return; its messages will be released"

// awaitingReceivePoll is how often a drain looks whether a pump is waiting
// only for its receive in flight; it must say so twice in a row (a
// Proactor lane between two buffered messages runs no handler for an
// instant).
const awaitingReceivePoll = 100 * time.Millisecond

// awaitingPump is a pump as the drain watch sees it (pump.Pump).
type awaitingPump interface {
	AwaitingReceive() bool
	ReceiveBound() time.Duration
}

// drainWatched is one subscription the drain watch follows: its name and
// its pump (whose ReceiveBound is how long its receive in flight may wait).
type drainWatched struct {
	name string
	pump awaitingPump
}

// watchDrain waits for runCtx to end (a stop) and then, until done closes
// (the pumps have returned), says once per subscription when its drain is
// waiting only for the receive in flight: logged (Info,
// logConsumeAwaitingReceive) and told to notify (the dashboard's status
// line). Once it has said so for every subscription it stops polling
// (the rest of a stop's wait, up to a ReceiveBound, wakes nothing).
func watchDrain(runCtx context.Context, done <-chan struct{}, logger *slog.Logger, subs []drainWatched, notify func(sub string, upTo time.Duration)) {
	select {
	case <-runCtx.Done():
	case <-done:
		return
	}
	t := time.NewTicker(awaitingReceivePoll)
	defer t.Stop()
	seen := make([]int, len(subs)) // polls in a row that saw it waiting; -1 once said
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		said := 0
		for i, s := range subs {
			if seen[i] < 0 {
				said++
				continue
			}
			if !s.pump.AwaitingReceive() {
				seen[i] = 0
				continue
			}
			if seen[i]++; seen[i] >= 2 {
				seen[i] = -1
				upTo := s.pump.ReceiveBound()
				logger.Info(logConsumeAwaitingReceive, "subscription", s.name, "up_to", upTo)
				notify(s.name, upTo)
				said++
			}
		}
		if said == len(subs) {
			return
		}
	}
}
