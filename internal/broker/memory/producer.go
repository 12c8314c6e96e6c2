package memory

import (
	"context"

	"github.com/brightergo/brighter/internal/message"
)

// Producer publishes to a Broker. It implements broker.Producer.
type Producer struct {
	// B is the broker the producer publishes to (required).
	B *Broker
}

// Send publishes m to the queue named by m.Header.Topic.
func (p Producer) Send(ctx context.Context, m *message.Message) error {
	return p.B.Publish(ctx, m.Header.Topic, m)
}

// Close does nothing.
func (p Producer) Close(ctx context.Context) error { return nil }
