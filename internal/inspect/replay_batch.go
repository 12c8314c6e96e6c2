package inspect

import (
	"context"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// sendAll publishes ms with one SendBatch when p is a broker.BatchProducer
// and there is more than one, else one Send each; one error per message.
func sendAll(ctx context.Context, p broker.Producer, ms []*message.Message) []error {
	if bp, ok := p.(broker.BatchProducer); ok && len(ms) > 1 {
		return bp.SendBatch(ctx, ms)
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = p.Send(ctx, m)
	}
	return errs
}

// acknowledgeAll removes ms with one AcknowledgeBatch when c is a
// broker.BatchAcknowledger and there is more than one, else one
// Acknowledge each; one error per message.
func acknowledgeAll(ctx context.Context, c broker.Consumer, ms []*message.Message) []error {
	if ba, ok := c.(broker.BatchAcknowledger); ok && len(ms) > 1 {
		return ba.AcknowledgeBatch(ctx, ms)
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = c.Acknowledge(ctx, m)
	}
	return errs
}
