package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/brightergo/brighter/internal/message"
)

// ErrRejectionCycle is the error of a rejection the Router refuses to
// route because a rejection has already routed the message to the same
// destination (message.RoutedTo) and the message is not a redriven copy
// (Router.Source): the destinations form a cycle, and
// routing it again would send it round for ever, a new copy each time
// (docs/adr/0004 decision 12). The original is released with the longest
// delay, as after a routing that can never succeed (RejectResult.Permanent).
var ErrRejectionCycle = errors.New("rejection cycle: the message was routed to this destination by an earlier rejection")

// LogRoutingCycle is the Router's Error record of a refused cycle.
const LogRoutingCycle = "rejection would route the message round a cycle; message released for redelivery after the longest delay"

// refuseCycle settles m, whose rejection would route it to dest a second
// time: it is released with the longest delay and an Error names it, its
// route, the destination and the path it came by. Nothing is published.
func (r *Router) refuseCycle(ctx context.Context, log *slog.Logger, m *message.Message, rej message.Rejection, res RejectResult) RejectResult {
	id := m.Header.MessageID
	path := message.RejectionPath(m)
	res.Released, res.Permanent = true, true
	res.ReleaseDelay = RoutingFailureDelay(math.MaxInt, r.MaxReleaseDelay)
	res.Err = fmt.Errorf("route message %s to %s: %w (rejectionPath %q)", id, res.Destination, ErrRejectionCycle, path)
	if rerr := r.release(ctx, m, res.ReleaseDelay); rerr != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("release message %s: %w", id, rerr))
		log.ErrorContext(ctx, LogReleaseFailed, "message_id", id, "reason", rej.Reason.String(), "route", string(res.Route), "destination", res.Destination, "error", res.Err)
		return res
	}
	log.ErrorContext(ctx, LogRoutingCycle, "message_id", id, "reason", rej.Reason.String(), "route", string(res.Route), "destination", res.Destination,
		"rejection_path", path, "delivery_attempt", m.DeliveryAttempt, "release_delay", res.ReleaseDelay, "error", res.Err)
	return res
}

// LogRedriven is the Router's Info record of a redriven copy routed to the
// destination it was moved back from (redriven).
const LogRedriven = "rejected message was moved back from its destination (a redrive); routing it there again"

// redriven reports whether m, whose rejectionPath already holds dest, is a
// redriven copy rather than a message going round a cycle
// (docs/adr/0004 decision 12): something other than a rejection (SQS's
// redrive to source, a re-send with its attributes) moved it back to
// Source from dest, the destination a rejection last routed it to. Its
// path ends with dest while it is read from Source, and Source is not dest
// as the transport resolves names. A message a rejection routed here
// instead ends its path with this channel, so in a cycle of subscriptions
// (qa -> qb -> qa) the path never ends with the destination, and a
// channel whose destination is itself under another spelling (lo.op and
// lo_op on SQS) has Source equal to the destination. Each redrive routed
// adds dest to the path once more, and at most MaxRedrives in a row are
// routed (fewer when the path cannot hold that many entries of dest), so
// a cycle through a broker's own moves ends too.
func (r *Router) redriven(m *message.Message, dest string) bool {
	if r.Source == "" {
		return false
	}
	d := r.resolve(dest)
	if r.resolve(r.Source) == d {
		return false
	}
	same := func(entry string) bool { return r.resolve(entry) == d }
	path := message.RejectionPath(m)
	run := message.TrailingRun(path, same)
	return run >= 1 && run <= MaxRedrives && message.TrailingRun(message.ExtendPath(path, dest), same) == run+1
}

// resolve is Resolve, or name as written without it.
func (r *Router) resolve(name string) string {
	if r.Resolve == nil {
		return name
	}
	return r.Resolve(name)
}

// redrivenFrom returns the message to stamp for a redriven copy m (see
// redriven) routed to dest again: a copy of m whose topic is the channel
// it came back to, so that the new copy's originalTopic names the source
// and not dest (a moved-back copy still carries the topic its routing to
// dest wrote). The source is the originalTopic its last rejection wrote,
// when that names another channel than dest, else Router.Source. m itself
// is left unchanged, so its receipt can still release it.
func (r *Router) redrivenFrom(m *message.Message, dest string) *message.Message {
	src := r.Source
	if prev, ok := m.Header.Bag.String(message.KeyOriginalTopic); ok && prev != "" && r.resolve(prev) != r.resolve(dest) {
		src = prev
	}
	if src == "" {
		return m
	}
	c := m.Clone()
	c.Receipt, c.WireMessageType = m.Receipt, m.WireMessageType
	c.Header.Topic = src
	return c
}
