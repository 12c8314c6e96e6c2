package observe

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// MaxLogValueBytes is the most of a log line's text or of one attribute
// value a KindLog record carries; longer ones are cut at a rune boundary
// and end in "…".
const MaxLogValueBytes = 512

// Attribute keys a KindLog record lifts into its own fields.
const (
	logKeySubscription = "subscription"
	logKeyMessageID    = "message_id"
)

// LogTee returns a handler that passes every record to inner, as inner
// would have it (inner's own Enabled decides), and also publishes each
// record at level min or above to s as a KindLog record (the
// dashboard of `consume --tui` and `brighter watch` shows the last Warn and
// Error lines; with --tui and stderr a terminal, inner is
// slog.DiscardHandler and the dashboard is where they go). The message
// text is kept as logged (the stable texts), the attributes in order with
// groups dotted; subscription and message_id fill the record's own fields.
// Publishing never blocks (Stream.Publish drops for a slow reader).
func LogTee(inner slog.Handler, min slog.Level, s *Stream) slog.Handler {
	return &logTee{inner: inner, min: min, s: s}
}

type logTee struct {
	inner slog.Handler
	min   slog.Level
	s     *Stream
	// attrs are the logger's With attributes, already prefixed by the
	// groups open when they were added; group is the open groups' prefix.
	attrs []LogAttr
	sub   string
	msgID string
	group string
}

func (h *logTee) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min || h.inner.Enabled(ctx, l)
}

func (h *logTee) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.inner.Enabled(ctx, r.Level) {
		err = h.inner.Handle(ctx, r)
	}
	if r.Level < h.min {
		return err
	}
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	rec := Record{Kind: KindLog, Time: t.UTC(), Level: r.Level.String(), Text: cut(r.Message),
		Subscription: h.sub, MessageID: h.msgID, Attrs: slices.Clip(h.attrs)}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs = addAttr(rec.Attrs, &rec, h.group, a)
		return true
	})
	h.s.Publish(rec)
	return err
}

func (h *logTee) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	var rec Record
	rec.Subscription, rec.MessageID = h.sub, h.msgID
	c.attrs = slices.Clip(h.attrs)
	for _, a := range as {
		c.attrs = addAttr(c.attrs, &rec, h.group, a)
	}
	c.sub, c.msgID = rec.Subscription, rec.MessageID
	return &c
}

func (h *logTee) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.group = h.group + name + "."
	return &c
}

// addAttr appends a (resolved, groups flattened into dotted keys) to out;
// a top-level subscription or message_id goes to rec's field instead.
func addAttr(out []LogAttr, rec *Record, prefix string, a slog.Attr) []LogAttr {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			out = addAttr(out, rec, p, g)
		}
		return out
	}
	if a.Key == "" {
		return out
	}
	s := cut(v.String())
	switch {
	case prefix == "" && a.Key == logKeySubscription:
		rec.Subscription = s
	case prefix == "" && a.Key == logKeyMessageID:
		rec.MessageID = s
	default:
		out = append(out, LogAttr{Key: prefix + a.Key, Value: s})
	}
	return out
}

// cut shortens s to MaxLogValueBytes at a rune boundary.
func cut(s string) string {
	if len(s) <= MaxLogValueBytes {
		return s
	}
	s = strings.ToValidUTF8(s[:MaxLogValueBytes], "")
	return s + "…"
}
