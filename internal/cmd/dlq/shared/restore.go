package shared

import (
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/transport"
)

// RestoreTarget is t as a restore into its dead-letter destination
// publishes to it (dlq restore, the console's archived view): on SQS a
// dead-letter queue is a queue, also for a subscription fed by SNS, so an
// SNS channel becomes a point-to-point one; any other t is returned as is.
// t is never changed.
func RestoreTarget(t *transport.Target) *transport.Target {
	if t.S.SQS == nil || t.S.SQS.ChannelType != config.ChannelPubSub {
		return t
	}
	s, q := *t.S, *t.S.SQS
	q.ChannelType = config.ChannelPointToPoint
	s.SQS = &q
	tc := *t
	tc.S = &s
	return &tc
}
