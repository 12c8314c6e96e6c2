package rocketmq

import (
	"fmt"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
)

// CheckLimits reports whether m is within a RocketMQ 5 proxy's default
// limits (limits.RocketMQ): a body of at most 4 MiB, at most 128 user
// properties, and at most 16 KiB of property keys and values together.
// Our test broker (rmqtest) enforces none of them, so brighter checks them
// itself before a send, as a real proxy would refuse the message.
// The error names the limit passed and wraps broker.ErrTooLarge (a routed
// copy is tried once with its rejection message shortened, then released,
// R-19); nil when m fits.
func CheckLimits(m *rmq.Message) error {
	l := limits.RocketMQ
	if n := len(m.Body); n > l.MaxMessageBytes {
		return fmt.Errorf("%w: body of %d bytes, over RocketMQ's %d", broker.ErrTooLarge, n, l.MaxMessageBytes)
	}
	props := m.GetProperties()
	if n := len(props); n > l.MaxAttributes {
		return fmt.Errorf("%w: %d properties, over RocketMQ's %d", broker.ErrTooLarge, n, l.MaxAttributes)
	}
	size := 0
	for k, v := range props {
		size += len(k) + len(v)
	}
	if size > l.MaxAttributesBytes {
		return fmt.Errorf("%w: properties of %d bytes, over RocketMQ's %d", broker.ErrTooLarge, size, l.MaxAttributesBytes)
	}
	return nil
}
