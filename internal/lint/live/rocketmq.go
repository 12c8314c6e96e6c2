package live

import (
	"context"
	"errors"
	"fmt"

	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// RocketMQ probes RocketMQ consumer groups: the broker-side
// maximum delivery attempts of the subscription's consumerGroup, which RocketMQ
// enforces by dead-lettering to %DLQ%<group> whatever brighter's budget.
// Check compares it with the file's rocketmq.maxDeliveryAttempts
// (native-limit-drift) and with requeueCount (budget-outranked: a group
// whose maximum is at or below the budget dead-letters first, silently).
type RocketMQ struct {
	// Connection returns the connection of a file (connections.rocketmq).
	Connection func(f *config.File) rocketmq.Connection
	// MaxDeliveryAttempts reads a group's maximum delivery attempts from the proxy;
	// rocketmq.GroupMaxDeliveryAttempts when nil.
	MaxDeliveryAttempts func(ctx context.Context, c rocketmq.Connection, group, topic string) (int, error)
}

// NativeLimit returns the group's maximum delivery attempts as the proxy reports
// it. A proxy that does not report it is an error saying so (the finding is
// live-check-failed: the check was not made), never "no limit": every
// RocketMQ group has one.
func (p RocketMQ) NativeLimit(ctx context.Context, f *config.File, s *config.Subscription) (lint.Limit, bool, error) {
	if s.RocketMQ == nil || s.RocketMQ.ConsumerGroup == "" {
		return lint.Limit{}, false, errors.New("no rocketmq.consumerGroup to read")
	}
	read := p.MaxDeliveryAttempts
	if read == nil {
		read = rocketmq.GroupMaxDeliveryAttempts
	}
	group := s.RocketMQ.ConsumerGroup
	n, err := read(ctx, p.Connection(f), group, s.ChannelName)
	if errors.Is(err, rocketmq.ErrGroupSettingsNotReported) {
		return lint.Limit{}, false, fmt.Errorf("the broker did not report consumer group %s's maximum delivery attempts (a proxy that does not answer a consumer's settings with the group's retry policy), so rocketmq.maxDeliveryAttempts could not be checked against it: %w", group, err)
	}
	if err != nil {
		return lint.Limit{}, false, fmt.Errorf("consumer group %s: %w", group, err)
	}
	return lint.Limit{Value: n, Field: "rocketmq.maxDeliveryAttempts"}, true, nil
}
