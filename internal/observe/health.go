package observe

import (
	"net/http"
	"sync"
	"time"
)

func nowUTC() time.Time { return time.Now().UTC() }

// Health is the consumer's readiness (issue 8): not ready until every
// channel is open, ready while pumping, not ready again while draining.
// /healthz answers 200 whenever the process serves HTTP.
type Health struct {
	mu     sync.Mutex
	ready  bool
	reason string
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
	f := h.onChange
	h.mu.Unlock()
	if f != nil {
		f(ready)
	}
}

// Ready reports readiness and, when not ready, why.
func (h *Health) Ready() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ready, h.reason
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
	ready := h.ready
	h.mu.Unlock()
	f(ready)
}
