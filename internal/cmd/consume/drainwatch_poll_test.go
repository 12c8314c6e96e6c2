package consume

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brightergo/brighter/internal/polltest"
)

// countingPump is a pump as the drain watch sees it, counting its polls.
type countingPump struct {
	awaiting bool
	polls    atomic.Int64
}

func (p *countingPump) AwaitingReceive() bool { p.polls.Add(1); return p.awaiting }

func (p *countingPump) ReceiveBound() time.Duration { return time.Second }

// TestWatchDrain_StopsPollingOnceEverySubscriptionIsSaid: once the drain
// watch has said for every subscription that its drain waits only for the
// receive in flight, it polls no more (the rest of the stop's wait, up to
// a timeOut, wakes nothing); while a subscription has not been said (its
// handler still runs), every subscription it has not said is still polled.
func TestWatchDrain_StopsPollingOnceEverySubscriptionIsSaid(t *testing.T) {
	t.Parallel()
	runCtx, cancel := context.WithCancel(context.Background())
	cancel() // the stop
	logger := slog.New(slog.DiscardHandler)

	a, b := &countingPump{awaiting: true}, &countingPump{awaiting: true}
	said := make(chan string, 4)
	done := make(chan struct{})
	returned := make(chan struct{})
	go func() {
		watchDrain(runCtx, done, logger, []drainWatched{{name: "a", pump: a}, {name: "b", pump: b}},
			func(sub string, _ time.Duration) { said <- sub })
		close(returned)
	}()
	for range 2 {
		select {
		case <-said:
		case <-time.After(5 * time.Second):
			t.Fatal("the drain watch did not say within 5s that both drains wait for their receive")
		}
	}
	select {
	case <-returned:
	case <-time.After(time.Second):
		t.Fatal("the drain watch still runs 1s after it said so for every subscription")
	}
	pa, pb := a.polls.Load(), b.polls.Load()
	if pa != 2 || pb != 2 {
		t.Errorf("polls %d and %d, want 2 each (two in a row say it)", pa, pb)
	}
	polltest.Stays(t, 3*awaitingReceivePoll, "the drain watch polled again after it had said so for every subscription", func() bool {
		return a.polls.Load() == pa && b.polls.Load() == pb
	})
	close(done)

	// A subscription whose handler still runs keeps the watch polling it.
	busy, idle := &countingPump{}, &countingPump{awaiting: true}
	done2 := make(chan struct{})
	returned2 := make(chan struct{})
	go func() {
		watchDrain(runCtx, done2, logger, []drainWatched{{name: "busy", pump: busy}, {name: "idle", pump: idle}}, func(string, time.Duration) {})
		close(returned2)
	}()
	polltest.Until(t, 5*time.Second, "the busy subscription polled three times", func() bool { return busy.polls.Load() >= 3 })
	select {
	case <-returned2:
		t.Error("the drain watch returned while a subscription had not been said")
	default:
	}
	close(done2)
	<-returned2
}
