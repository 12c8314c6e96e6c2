package gcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"google.golang.org/api/option"

	"github.com/brightergo/brighter/internal/message"
)

// Connect makes a Pub/Sub client for project. When PUBSUB_EMULATOR_HOST is
// set the client library itself dials the emulator without credentials;
// opts (for example option.WithGRPCConn in tests) are passed on. It returns
// an error naming the project when the client cannot be made.
func Connect(ctx context.Context, project string, opts ...option.ClientOption) (*pubsub.Client, error) {
	c, err := pubsub.NewClient(ctx, project, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to Pub/Sub project %q: %w", project, err)
	}
	return c, nil
}

// ErrDelayUnsupported is returned by Send for a message with a delay:
// Pub/Sub has no delayed publish and Brighter's producer needs a scheduler
// for one (reference §3.2).
var ErrDelayUnsupported = errors.New("pubsub: delayed publish is not supported (no scheduler)")

// ProducerOptions configures a Producer.
type ProducerOptions struct {
	// EnableMessageOrdering publishes a message's PartitionKey as its
	// ordering key. Without it the ordering key is left empty (the Pub/Sub
	// client refuses ordering keys on a publisher without ordering).
	EnableMessageOrdering bool
	// DelayThreshold is how long the client batches publishes; 0 means 1 ms
	// (Send waits for its publish, so a long batch delay is latency).
	DelayThreshold time.Duration
}

// Producer publishes messages in Brighter's Pub/Sub wire format. It
// implements broker.Producer and broker.Publisher (so a consumer's Router
// publishes routed copies with it). Safe for concurrent use. It does not own
// the client.
type Producer struct {
	client *pubsub.Client
	opts   ProducerOptions

	mu   sync.Mutex
	pubs map[string]*pubsub.Publisher
}

// NewProducer makes a Producer on client.
func NewProducer(client *pubsub.Client, opts ProducerOptions) *Producer {
	if opts.DelayThreshold <= 0 {
		opts.DelayThreshold = time.Millisecond
	}
	return &Producer{client: client, opts: opts, pubs: map[string]*pubsub.Publisher{}}
}

func (p *Producer) publisher(topic string) *pubsub.Publisher {
	p.mu.Lock()
	defer p.mu.Unlock()
	pub := p.pubs[topic]
	if pub == nil {
		pub = p.client.Publisher(topic)
		pub.EnableMessageOrdering = p.opts.EnableMessageOrdering
		pub.PublishSettings.DelayThreshold = p.opts.DelayThreshold
		p.pubs[topic] = pub
	}
	return pub
}

// Send publishes m to the topic m.Header.Topic (an id in the client's
// project or a full projects/<p>/topics/<t> name) and waits for the
// service's answer. A message with a delay returns ErrDelayUnsupported.
func (p *Producer) Send(ctx context.Context, m *message.Message) error {
	if m.Header.Delay > 0 {
		return fmt.Errorf("send message %s to %s: %w", m.Header.MessageID, m.Header.Topic, ErrDelayUnsupported)
	}
	return p.Publish(ctx, m.Header.Topic, m)
}

// Publish publishes m to topic, whatever m.Header.Topic says (the Router
// has already set it to the destination). It implements broker.Publisher.
// When a publish with an ordering key fails it resumes that key, so the next
// publish of the key is attempted rather than refused (a routing failure
// must not wedge later routings, R-19).
func (p *Producer) Publish(ctx context.Context, topic string, m *message.Message) error {
	w := Encode(m)
	pm := &pubsub.Message{Data: w.Data, Attributes: w.Attributes}
	if p.opts.EnableMessageOrdering {
		pm.OrderingKey = w.OrderingKey
	}
	pub := p.publisher(topic)
	if _, err := pub.Publish(ctx, pm).Get(ctx); err != nil {
		if pm.OrderingKey != "" {
			pub.ResumePublish(pm.OrderingKey)
		}
		return fmt.Errorf("publish message %s to topic %s: %w", m.Header.MessageID, topic, err)
	}
	return nil
}

// Close flushes and stops every publisher. The client stays open.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	pubs := p.pubs
	p.pubs = map[string]*pubsub.Publisher{}
	p.mu.Unlock()
	for _, pub := range pubs {
		pub.Stop()
	}
	return nil
}
