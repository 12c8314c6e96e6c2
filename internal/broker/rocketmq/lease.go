package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

// maxConcurrentExtensions bounds the ChangeInvisibleDuration calls one
// ExtendLeases makes at a time: RocketMQ changes one receipt per call, and
// the client's call takes no context, so a batch runs side by side to fit
// the pump's deadline.
const maxConcurrentExtensions = 8

var (
	_ broker.LeaseExtender         = (*Consumer)(nil)
	_ broker.LeaseFromReceiveStart = (*Consumer)(nil)
)

// LeaseFromReceiveStart reports true: the consumer's receipt deadline is
// the ReceiveMessage call's start plus the invisible duration, the
// earliest the broker can have popped the message for the call
// (broker.LeaseFromReceiveStart).
func (c *Consumer) LeaseFromReceiveStart() bool { return true }

// Lease returns the invisible duration each receive asks for: how long a
// received message is held for this consumer (broker.LeaseExtender,
// docs/adr/0005-leases.md).
func (c *Consumer) Lease() time.Duration { return c.opts.InvisibleDuration }

// ExtendLeases makes each message invisible for d from now with
// ChangeInvisibleDuration, one call per message (RocketMQ has no batch
// form), up to eight at a time: broker.LeaseExtender. The client stores the
// new receipt handle in the message's view, so later settles use it. A
// message whose lease this consumer knows has lapsed is not sent (the
// broker would refuse the handle) and, like one the broker calls an
// invalid receipt handle, gets an error wrapping broker.ErrStaleReceipt.
// Once ctx is done, messages not yet sent get ctx's error, and a call not
// answered by then ErrCallAbandoned (the client's call takes no context).
func (c *Consumer) ExtendLeases(ctx context.Context, ms []*message.Message, d time.Duration) []error {
	errs := make([]error, len(ms))
	d = max(d, 0)
	sem := make(chan struct{}, maxConcurrentExtensions)
	var wg sync.WaitGroup
	for i, m := range ms {
		r, err := c.hold(m)
		if err != nil {
			errs[i] = err
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = fmt.Errorf("rocketmq: extend lease of %s: %w", m.Header.MessageID, ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = c.extend(ctx, m, r, d)
		}()
	}
	wg.Wait()
	return errs
}

// extend changes one message's invisible duration to d within ctx's
// deadline (changeInvisible), keeping the lease end this consumer knows in
// step.
func (c *Consumer) extend(ctx context.Context, m *message.Message, r *receipt, d time.Duration) error {
	if err := r.lock(ctx); err != nil {
		return fmt.Errorf("rocketmq: extend lease of %s: %w", m.Header.MessageID, err)
	}
	if !c.now().Before(r.leaseEnd) {
		r.unlock()
		return fmt.Errorf("rocketmq: extend lease of %s: invisible duration lapsed: %w", m.Header.MessageID, broker.ErrStaleReceipt)
	}
	if err := c.changeInvisible(ctx, r, d); err != nil {
		return staleHandle(fmt.Errorf("rocketmq: extend lease of %s with ChangeInvisibleDuration(%s): %w", m.Header.MessageID, d, err))
	}
	return nil
}

// staleHandle wraps err in broker.ErrStaleReceipt when the broker answered
// INVALID_RECEIPT_HANDLE (the handle was settled, superseded or expired);
// otherwise it returns err unchanged.
func staleHandle(err error) error {
	var st *rmq.ErrRpcStatus
	if errors.As(err, &st) && st.GetCode() == int32(v2.Code_INVALID_RECEIPT_HANDLE) {
		return fmt.Errorf("%w: %w", broker.ErrStaleReceipt, err)
	}
	return err
}
