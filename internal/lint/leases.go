package lint

import (
	"time"

	"github.com/brightergo/brighter/internal/config"
)

// LeaseExtender is implemented by TransportRules whose consumer lets the
// pump extend a held message's lease (docs/adr/0005-leases.md): SQS with a
// visibilityTimeout, Pub/Sub pull, RocketMQ, memory. With maxLeaseExtension
// above 0 such a message is held up to its first lease plus
// maxLeaseExtension, so a handler longer than the lease is not redelivered.
type LeaseExtender interface {
	// PumpExtendsLease reports whether the pump extends the lease of s's
	// messages when maxLeaseExtension allows it.
	PumpExtendsLease(s *config.Subscription) bool
}

// LeaseCeiling is implemented by TransportRules whose broker keeps a
// received message from other consumers at most a fixed time from its
// receive, however often its lease is extended (SQS: 12 h): the pump stops
// extending there, whatever maxLeaseExtension says.
type LeaseCeiling interface {
	// MaxHold returns the ceiling and names it, or false for none.
	MaxHold(s *config.Subscription) (Span, bool)
}

// ShortPoller is implemented by TransportRules whose receive can return at
// once on an empty channel: with emptyChannelDelay 0 the pump then polls
// without a pause (empty-channel-busy-poll).
type ShortPoller interface {
	// ReturnsAtOnce reports whether a receive for s returns at once when
	// the channel is empty, and why (naming the setting).
	ReturnsAtOnce(s *config.Subscription) (ok bool, why string)
}

// heldFor is the longest a message may be held before its settle: the wait
// in the buffer behind the messages received with it, then its own handler,
// each up to handler.timeout. A Reactor performer handles its batch of
// bufferSize one after another; a Proactor worker may also have received
// ahead a full buffer while it handles one.
func heldFor(s *config.Subscription) time.Duration {
	n := max(s.BufferSize, 1)
	if s.MessagePumpType != config.Reactor {
		n++
	}
	return time.Duration(n) * s.Handler.Timeout
}

// ceilingOf returns the broker's ceiling on holding s's messages, when tr
// knows one (LeaseCeiling).
func ceilingOf(tr TransportRules, s *config.Subscription) (Span, bool) {
	if lc, ok := tr.(LeaseCeiling); ok {
		return lc.MaxHold(s)
	}
	return Span{}, false
}

// ceilingRule adds lease-extension-past-ceiling when the pump extends s's
// leases and the first lease plus maxLeaseExtension passes the broker's
// ceiling (whatever the handler).
func (c *check) ceilingRule(tr TransportRules, s *config.Subscription, lease Span) {
	ext, extends := tr.(LeaseExtender)
	ceiling, ok := ceilingOf(tr, s)
	if !ok || !extends || !ext.PumpExtendsLease(s) || s.MaxLeaseExtension <= 0 || lease.Value+s.MaxLeaseExtension <= ceiling.Value {
		return
	}
	c.add(RuleLeaseExtensionPastCeiling, pick(s, "maxLeaseExtension", lease.Field),
		"subscription %q: %s %s plus maxLeaseExtension %s passes %s (%s from the receive): brighter stops extending there, with a Warning, and the broker redelivers the message; lower maxLeaseExtension to at most %s",
		s.Name, lease.Field, config.FormatDuration(lease.Value), config.FormatDuration(s.MaxLeaseExtension), ceiling.Field, config.FormatDuration(ceiling.Value), config.FormatDuration(ceiling.Value-lease.Value))
}

// leaseRules adds handler-timeout-exceeds-lease and
// buffered-wait-exceeds-lease for a subscription with a timed handler.
//
// With lease extension (the transport extends and maxLeaseExtension > 0) a
// message is kept up to lease + maxLeaseExtension, so only a handler longer
// than that is redelivered while it runs; buffered wait costs nothing.
// Without it the plain lease must cover the handler
// (handler-timeout-exceeds-lease) and the wait in the buffer before it
// (buffered-wait-exceeds-lease; the pump drops a lapsed message unhandled
// and the broker redelivers it, with its count advanced).
func (c *check) leaseRules(tr TransportRules, s *config.Subscription, lease Span) {
	name := s.Name
	ext, extends := tr.(LeaseExtender)
	if extends && ext.PumpExtendsLease(s) && s.MaxLeaseExtension > 0 {
		limit := lease.Value + s.MaxLeaseExtension
		ceiling, hasCeiling := ceilingOf(tr, s)
		if hasCeiling {
			limit = min(limit, ceiling.Value)
		}
		switch {
		case hasCeiling && s.Handler.Timeout > ceiling.Value:
			// Nothing in the file can hold the message that long.
			c.add(RuleHandlerTimeoutExceedsLease, "handler.timeout",
				"subscription %q: handler.timeout %s is longer than %s (%s from the receive), which no lease extension can pass: a message still being handled is delivered again; shorten handler.timeout below %s",
				name, config.FormatDuration(s.Handler.Timeout), ceiling.Field, config.FormatDuration(ceiling.Value), config.FormatDuration(ceiling.Value))
		case lease.Value > 0 && s.Handler.Timeout > limit:
			// A lease of 0 is one lint cannot know (SQS visibilityTimeout
			// 0: the queue's own, read by consume at start-up).
			c.add(RuleHandlerTimeoutExceedsLease, pick(s, "handler.timeout", "maxLeaseExtension"),
				"subscription %q: handler.timeout %s is longer than %s %s plus maxLeaseExtension %s: a message still being handled is delivered again once its lease is extended no more; raise maxLeaseExtension to at least %s or shorten handler.timeout",
				name, config.FormatDuration(s.Handler.Timeout), lease.Field, config.FormatDuration(lease.Value), config.FormatDuration(s.MaxLeaseExtension), config.FormatDuration(s.Handler.Timeout-lease.Value))
		}
		return
	}
	// why says why the plain lease must cover the message; fix is the
	// first remedy, "" when making the lease longer is the only one.
	why := "lease extension is off (maxLeaseExtension: 0)"
	fix := "set maxLeaseExtension above 0 (default 1h), "
	if !extends || !ext.PumpExtendsLease(s) {
		why = lease.Field + " is not extended by brighter on this transport"
		if lease.Field == "gcp.maxExtension" {
			why = "the Pub/Sub client extends a streamed message's lease for gcp.maxExtension and no longer"
		}
		fix = ""
	}
	if lease.Value > 0 && s.Handler.Timeout > lease.Value {
		c.add(RuleHandlerTimeoutExceedsLease, pick(s, "handler.timeout", lease.Field),
			"subscription %q: handler.timeout %s is longer than %s %s and %s: a message still being handled is delivered again; %smake %s longer than %s or shorten handler.timeout",
			name, config.FormatDuration(s.Handler.Timeout), lease.Field, config.FormatDuration(lease.Value), why, fix, lastElem(lease.Field), config.FormatDuration(s.Handler.Timeout))
		return
	}
	if held := heldFor(s); lease.Value > 0 && held > lease.Value {
		c.add(RuleBufferedWaitExceedsLease, pick(s, "bufferSize", lease.Field),
			"subscription %q: a message may wait in the buffer and then be handled for %s (bufferSize %d, handler.timeout %s), longer than %s %s, and %s: it is dropped unhandled or handled again; %slower bufferSize or make %s at least %s",
			name, config.FormatDuration(held), s.BufferSize, config.FormatDuration(s.Handler.Timeout), lease.Field, config.FormatDuration(lease.Value), why, fix, lastElem(lease.Field), config.FormatDuration(held))
	}
}

// LeaseFindings returns the lease rules' findings for s judged against
// lease instead of the one tr answers: the lease in force where another
// source declares it (an infrastructure file's visibility timeout or ack
// deadline, --infra). handler-timeout-exceeds-lease and
// buffered-wait-exceeds-lease apply to an exec or http handler,
// lease-extension-past-ceiling to any. Findings point at the subscription's
// fields; the caller relocates them.
func LeaseFindings(tr TransportRules, s *config.Subscription, lease Span) []Finding {
	if tr == nil || s == nil {
		return nil
	}
	c := &check{s: s}
	if s.Handler.Type == config.HandlerExec || s.Handler.Type == config.HandlerHTTP {
		c.leaseRules(tr, s, lease)
	}
	c.ceilingRule(tr, s, lease)
	return c.out
}
