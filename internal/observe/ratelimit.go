package observe

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of RateLimit: an Error record may repeat DefaultLogBurst times
// at once, then once per DefaultLogEvery.
const (
	DefaultLogEvery = 10 * time.Second
	DefaultLogBurst = 5
)

// SuppressedKey is the attribute a rate-limited record carries: how many
// records like it (same message text and subscription) were suppressed
// since the last one written.
const SuppressedKey = "suppressed"

// RateLimit returns a handler that passes every record below Error to
// inner unchanged and rate-limits Error records per message text and
// subscription (the "subscription" attribute, from the record or the
// logger's With): burst at once, then one per every. The next record of a
// key that passes says how many were dropped in SuppressedKey, so a
// repeating failure (a broker that is down, a dead-letter queue that
// refuses every publish) costs a few lines a minute, not hundreds a second,
// and the count is not lost.
func RateLimit(inner slog.Handler, every time.Duration, burst int) slog.Handler {
	return &rateLimited{inner: inner, s: &limitState{every: every, burst: max(burst, 1), now: time.Now, keys: map[limitKey]*limiterEntry{}}}
}

type limitKey struct{ msg, sub string }

type limiterEntry struct {
	lim        *rate.Limiter
	suppressed int
}

type limitState struct {
	every time.Duration
	burst int
	now   func() time.Time // the clock (tests replace it)
	mu    sync.Mutex
	keys  map[limitKey]*limiterEntry
}

// allow reports whether a record of key k may be written now, and how many
// were suppressed before it.
func (s *limitState) allow(k limitKey) (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[k]
	if e == nil {
		e = &limiterEntry{lim: rate.NewLimiter(rate.Every(s.every), s.burst)}
		s.keys[k] = e
	}
	if !e.lim.AllowN(s.now(), 1) {
		e.suppressed++
		return false, 0
	}
	n := e.suppressed
	e.suppressed = 0
	return true, n
}

type rateLimited struct {
	inner slog.Handler
	s     *limitState
	sub   string // the "subscription" of the logger's With, if any
}

func (h *rateLimited) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *rateLimited) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError {
		return h.inner.Handle(ctx, r)
	}
	sub := h.sub
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "subscription" {
			sub = a.Value.String()
			return false
		}
		return true
	})
	ok, n := h.s.allow(limitKey{msg: r.Message, sub: sub})
	if !ok {
		return nil
	}
	if n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int(SuppressedKey, n))
	}
	return h.inner.Handle(ctx, r)
}

func (h *rateLimited) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	for _, a := range as {
		if a.Key == "subscription" {
			c.sub = a.Value.String()
		}
	}
	return &c
}

func (h *rateLimited) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	return &c
}
