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
// destination (message.RoutedTo): the destinations form a cycle, and
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
