package shared

import (
	"log/slog"
	"sync"
	"time"
)

// LogDLQAwaitingReceive is logged (Info) right after LogDLQStopping when a
// receive is in flight: a stop waits for it to return, so that the
// messages it takes are released rather than left invisible for
// --visibility. Its attributes are source and up_to, how long it may still
// wait (whole seconds, rounded up; at most --wait).
const LogDLQAwaitingReceive = "interrupted; waiting for the receive in flight to return so its messages are not left invisible"

// receiving tracks the receives a run's scans have in flight, so the
// first signal can say how long the stop waits for them.
type receiving struct {
	mu     sync.Mutex
	next   int
	ends   map[int]time.Time
	source string
}

// start records a receive of source that may wait up to wait; the
// returned function records its return.
func (r *receiving) start(source string, wait time.Duration) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends == nil {
		r.ends = map[int]time.Time{}
	}
	r.next++
	id := r.next
	r.ends[id], r.source = time.Now().Add(wait), source
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.ends, id)
	}
}

// left is how long the receives in flight may still wait (the longest),
// and the source of the latest; 0 when none is in flight.
func (r *receiving) left() (time.Duration, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var d time.Duration
	for _, end := range r.ends {
		d = max(d, time.Until(end))
	}
	return d, r.source
}

// sayAwaiting logs LogDLQAwaitingReceive when a receive is in flight that
// may wait another half second or more (a shorter wait ends before anyone
// reads the line).
func (r *receiving) sayAwaiting(logger *slog.Logger) {
	d, source := r.left()
	if d < 500*time.Millisecond {
		return
	}
	upTo := (d + time.Second - 1).Truncate(time.Second)
	logger.Info(LogDLQAwaitingReceive, "source", source, "up_to", upTo)
}
