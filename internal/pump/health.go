package pump

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// channelHealth is a pump's view of its channel (issue 13): how many
// broker calls in a row failed, since when, and whether that has lasted
// StallAfter. It is not state the delivery semantics depend on: losing it
// (a restart) changes no message's fate.
type channelHealth struct {
	failing atomic.Bool // fast path of succeeded: false while healthy

	mu       sync.Mutex
	failures int       // consecutive channel failures
	since    time.Time // first failure of the current episode
	stalled  bool      // EventStalled was emitted for this episode
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

// failed records a failed broker call err and returns how long the
// receiver should back off. It emits EventChannelFailure, and EventStalled
// once per failure episode when the channel has failed for StallAfter.
// Only receives back off (pause true); a settle call that timed out
// reports through settled, with no delay in its event.
func (p *Pump) failed(err error, pause bool) time.Duration {
	now := time.Now()
	h := &p.health
	h.mu.Lock()
	h.failures++
	if h.failures == 1 {
		h.since = now
		h.failing.Store(true)
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
	h.failures, h.since, h.stalled = 0, time.Time{}, false
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
		p.failed(err, false)
	}
}
