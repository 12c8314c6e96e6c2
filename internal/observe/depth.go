package observe

import (
	"context"
	"log/slog"
	"time"
)

// DeadLetterDepther is the hook for the subscriptions panel's DLQ depth: a
// transport's consumer (or the wiring around it) implements it when the
// broker reports how many messages wait on the dead-letter destination
// (SQS: GetQueueAttributes ApproximateNumberOfMessages on the DLQ, one
// call per poll, never on the message path).
type DeadLetterDepther interface {
	// DeadLetterDepth returns the number of messages on the dead-letter
	// destination; approximate where the broker's figure is.
	DeadLetterDepth(ctx context.Context) (int64, error)
}

// DepthFunc adapts a function to DeadLetterDepther.
type DepthFunc func(ctx context.Context) (int64, error)

// DeadLetterDepth calls f.
func (f DepthFunc) DeadLetterDepth(ctx context.Context) (int64, error) { return f(ctx) }

// DefaultDepthInterval is how often PollDepth asks the broker.
const DefaultDepthInterval = 5 * time.Second

// LogDepthFailed is logged (once per run of failures) when a DLQ depth
// query fails.
const LogDepthFailed = "dead-letter depth query failed"

// PollDepth asks d for the DLQ depth of subscription now and every interval
// until ctx is done, setting brighter_dlq_depth (m may be nil) and
// publishing a KindDLQDepth record (s may be nil). A failure is logged at
// Warning once until a query succeeds again.
func PollDepth(ctx context.Context, subscription string, d DeadLetterDepther, interval time.Duration, m *Metrics, s *Stream, logger *slog.Logger) {
	if interval <= 0 {
		interval = DefaultDepthInterval
	}
	failing := false
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := d.DeadLetterDepth(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			if !failing && logger != nil {
				logger.Warn(LogDepthFailed, "subscription", subscription, "error", err)
			}
			failing = true
		default:
			failing = false
			if m != nil {
				m.SetDLQDepth(subscription, n)
			}
			if s != nil {
				s.Publish(Record{Kind: KindDLQDepth, Time: nowUTC(), Subscription: subscription, Depth: n})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
