package observe

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brightergo/brighter/internal/pump"
)

func nowUTC() time.Time { return time.Now().UTC() }

// Health is the consumer's readiness: not ready until every
// channel is open, ready while pumping, not ready again while draining,
// and not ready while any subscription is stalled (its broker
// calls have failed for stallAfter with no success; pump.EventStalled
// until pump.EventChannelRecovered). /healthz answers 200 whenever the
// process serves HTTP: a stalled channel can recover, so a restart is not
// asked for. Health is a pump.Observer for the stall events.
type Health struct {
	mu      sync.Mutex
	ready   bool
	reason  string
	stalled map[string]stall // by subscription
	// onChange, if set, is told every change (the brighter_ready gauge).
	onChange func(ready bool)
}

// NewHealth returns a Health that is not ready, with reason "starting".
func NewHealth() *Health { return &Health{reason: "starting"} }

// SetReady marks the consumer ready.
func (h *Health) SetReady() { h.set(true, "") }

// SetNotReady marks it not ready; reason is shown by /readyz (e.g.
// "draining").
func (h *Health) SetNotReady(reason string) { h.set(false, reason) }

func (h *Health) set(ready bool, reason string) {
	h.mu.Lock()
	h.ready, h.reason = ready, reason
	h.changedLocked()
}

// changedLocked tells onChange the combined state and unlocks h.mu.
func (h *Health) changedLocked() {
	ok, _ := h.readyLocked()
	f := h.onChange
	h.mu.Unlock()
	if f != nil {
		f(ok)
	}
}

// Observe implements pump.Observer: EventStalled makes the consumer not
// ready, naming the subscription, since when, how many calls have failed
// and the last error; each EventChannelFailure while it stays stalled
// brings the count and the error up to date (the error that stalled it
// may not be the one it fails with now: a receive that got no answer,
// then connections reset); EventChannelRecovered (and EventStopped) undo
// it.
func (h *Health) Observe(e pump.Event) {
	switch e.Kind {
	case pump.EventStalled:
		h.mu.Lock()
		if h.stalled == nil {
			h.stalled = map[string]stall{}
		}
		h.stalled[e.Subscription] = stall{failures: e.Failures, why: stallReason(e)}
		h.changedLocked()
	case pump.EventChannelFailure:
		// Readiness does not change: no onChange.
		h.mu.Lock()
		if st, ok := h.stalled[e.Subscription]; ok && e.Failures >= st.failures {
			st.failures, st.why = e.Failures, stallReason(e)
			h.stalled[e.Subscription] = st
		}
		h.mu.Unlock()
	case pump.EventChannelRecovered, pump.EventStopped:
		h.mu.Lock()
		if _, ok := h.stalled[e.Subscription]; !ok {
			h.mu.Unlock()
			return
		}
		delete(h.stalled, e.Subscription)
		h.changedLocked()
	}
}

// stall is a stalled subscription's latest failure count and reason: a
// failure's event that overtook a later one's (a settle call's and a
// receive's, failing at once) does not turn the reason back.
type stall struct {
	failures int
	why      string
}

// stallReason is /readyz's reason for a stalled subscription, from its
// EventStalled or a later EventChannelFailure: since when no call has
// succeeded, how many have failed, and the latest failure.
func stallReason(e pump.Event) string {
	why := fmt.Sprintf("subscription %s: no successful broker call since %s (%d failed)", e.Subscription, e.Since.UTC().Format(time.RFC3339), e.Failures)
	if e.Err != nil {
		why += ": " + e.Err.Error()
	}
	return why
}

// Ready reports readiness and, when not ready, why.
func (h *Health) Ready() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.readyLocked()
}

func (h *Health) readyLocked() (bool, string) {
	if !h.ready {
		return false, h.reason
	}
	if len(h.stalled) == 0 {
		return true, ""
	}
	subs := make([]string, 0, len(h.stalled))
	for s := range h.stalled {
		subs = append(subs, s)
	}
	slices.Sort(subs)
	whys := make([]string, len(subs))
	for i, s := range subs {
		whys[i] = h.stalled[s].why
	}
	return false, strings.Join(whys, "; ")
}

// ServeReadyz answers 200 "ready" or 503 "not ready: <reason>".
func (h *Health) ServeReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ok, reason := h.Ready()
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: " + reason + "\n"))
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// ServeHealthz answers 200 "ok".
func ServeHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// OnChange registers f to be told every readiness change (for example
// Metrics.SetReady); it is called with the current state at once.
func (h *Health) OnChange(f func(ready bool)) {
	h.mu.Lock()
	h.onChange = f
	ready, _ := h.readyLocked()
	h.mu.Unlock()
	f(ready)
}
