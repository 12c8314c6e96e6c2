package pump

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// channelHealth is a pump's view of its channel: how many
// broker calls in a row failed, since when, and whether that has lasted
// StallAfter. It is not state the delivery semantics depend on: losing it
// (a restart) changes no message's fate.
type channelHealth struct {
	failing atomic.Bool // fast path of succeeded: false while healthy

	mu       sync.Mutex
	failures int // consecutive channel failures
	// since is when the current episode's first failing call started
	// (the earliest, when calls overlap): no call has succeeded since,
	// so the stall clock runs from there, not from the end of
	// the first failed call, which a black-holed receive reports only
	// its deadline later.
	since   time.Time
	lastErr error       // the episode's latest failure
	stalled bool        // EventStalled was emitted for this episode
	episode uint64      // counts episodes, so a stale timer does nothing
	timer   *time.Timer // fires at since + StallAfter; nil when none
	ended   bool        // the run ended: no more timers
}

// backoff returns the pause after the n-th consecutive channel failure
// (n >= 1): base doubled n-1 times, capped at limit, with "equal jitter"
// (a random point in the upper half), so replicas that failed together do
// not retry in step; never less than base, so the first pause is
// channelFailureDelay exactly.
func backoff(base, limit time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return max(base, half+rand.N(d-half+1))
}

// failed records a broker call that started at start and failed with err,
// and returns how long the receiver should back off. It emits
// EventChannelFailure, and EventStalled once per failure episode when
// StallAfter has passed since the episode's first failing call started:
// at once if it has already, else from a timer, so that the stall shows
// StallAfter after that start even while the next call hangs to its
// deadline. Only receives back off (pause true); a settle call that timed
// out reports through settled, with no delay in its event.
func (p *Pump) failed(err error, pause bool, start time.Time) time.Duration {
	now := time.Now()
	h := &p.health
	h.mu.Lock()
	h.failures++
	h.lastErr = err
	if h.failures == 1 {
		h.since = start
		h.episode++
		h.failing.Store(true)
		if !h.ended {
			ep := h.episode
			h.timer = time.AfterFunc(max(start.Add(p.opts.StallAfter).Sub(now), 0), func() { p.stallDue(ep) })
		}
	} else if start.Before(h.since) {
		h.since = start
	}
	n, since := h.failures, h.since
	stall := !h.stalled && now.Sub(since) >= p.opts.StallAfter
	if stall {
		h.stalled = true
	}
	h.mu.Unlock()
	var delay time.Duration
	if pause {
		delay = backoff(p.opts.ChannelFailureDelay, p.opts.MaxChannelFailureDelay, n)
	}
	p.emit(Event{Kind: EventChannelFailure, Err: err, Delay: delay, Since: since, Failures: n})
	if stall {
		p.emit(Event{Kind: EventStalled, Err: err, Since: since, Failures: n})
	}
	return delay
}

// stallDue is the stall timer of episode ep: it emits EventStalled if that
// episode is still failing and has not been reported stalled.
func (p *Pump) stallDue(ep uint64) {
	h := &p.health
	h.mu.Lock()
	if h.ended || h.episode != ep || h.failures == 0 || h.stalled {
		h.mu.Unlock()
		return
	}
	h.stalled = true
	n, since, err := h.failures, h.since, h.lastErr
	h.mu.Unlock()
	p.emit(Event{Kind: EventStalled, Err: err, Since: since, Failures: n})
}

// endHealth stops the stall timer when a run ends: no stall is reported
// after EventStopped.
func (p *Pump) endHealth() {
	h := &p.health
	h.mu.Lock()
	h.ended = true
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.mu.Unlock()
}

// succeeded records a broker call that was answered; after failures it
// emits EventChannelRecovered.
func (p *Pump) succeeded() {
	h := &p.health
	if !h.failing.Load() {
		return
	}
	h.mu.Lock()
	n, since := h.failures, h.since
	was := h.failures > 0
	h.failures, h.since, h.stalled, h.lastErr = 0, time.Time{}, false, nil
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.failing.Store(false)
	h.mu.Unlock()
	if was {
		p.emit(Event{Kind: EventChannelRecovered, Since: since, Failures: n})
	}
}

// settled records the result of a settle call: a call the broker did not
// answer within CallTimeout counts as a channel failure (without a pause:
// the message stays on the broker); a success shows the channel works;
// other refusals (a stale receipt, say) change nothing.
func (p *Pump) settled(err error) {
	switch {
	case err == nil:
		p.succeeded()
	case errors.Is(err, context.DeadlineExceeded):
		// It ran to its deadline: it started CallTimeout ago.
		p.failed(err, false, time.Now().Add(-p.opts.CallTimeout))
	}
}
