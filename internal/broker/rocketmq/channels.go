package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/brightergo/brighter/internal/broker"
)

// LogNoCreate is logged when makeChannels is create: brighter, like Brighter,
// never creates RocketMQ topics.
const LogNoCreate = "makeChannels create has no effect on RocketMQ: topics and consumer groups are made by the broker's operator"

// Channels is a RocketMQ subscription's makeChannels (broker.ChannelMaker).
// RocketMQ topics and consumer groups are made by the broker's operator
// (mqadmin or the dashboard); Brighter never creates them
// (docs/wire-format.md#rocketmq), and neither does this. validate checks that
// every topic has a route.
type Channels struct {
	Connection
	// Make is the makeChannels setting.
	Make broker.MakeChannels
	// Topics are the topics to check: the subscription's topic and its
	// rejection destinations.
	Topics []string
	// Logger receives the Info record for create; nil means slog.Default().
	Logger *slog.Logger
}

var _ broker.ChannelMaker = Channels{}

// EnsureChannels does nothing for assume; logs LogNoCreate at Info for
// create; and for validate queries each topic's route, returning an error
// that wraps ErrTopicMissing for each topic the broker reports missing
// (TOPIC_NOT_FOUND), or the first other failure. A validation returns
// when ctx ends, with ctx's error wrapped, naming the topic and the
// endpoint (a proxy that accepts the connection and never answers).
func (c Channels) EnsureChannels(ctx context.Context) error {
	switch c.Make {
	case broker.MakeAssume:
		return nil
	case broker.MakeValidate:
		if len(c.Topics) == 0 {
			return errNoTopics
		}
		var errs []error
		for _, t := range c.Topics {
			if t == "" {
				continue
			}
			p, err := startWithin(ctx, ProducerOptions{Connection: c.Connection, Topic: t})
			switch {
			case err != nil && topicNotFound(err):
				errs = append(errs, fmt.Errorf("rocketmq: validate topic %s: %w: %w", t, ErrTopicMissing, err))
			case err != nil:
				return fmt.Errorf("rocketmq: validate topic %s: %w", t, err)
			default:
				_ = p.Close(ctx)
			}
		}
		return errors.Join(errs...)
	default:
		log := c.Logger
		if log == nil {
			log = slog.Default()
		}
		log.InfoContext(ctx, LogNoCreate, "topics", c.Topics)
		return nil
	}
}

// startWithin is NewProducer returning when ctx ends: the client's
// start-up (its route query) takes no context, so it runs on, on the
// client's own timeouts, and a producer that starts after ctx ended is
// closed.
func startWithin(ctx context.Context, o ProducerOptions) (*Producer, error) {
	type started struct {
		p   *Producer
		err error
	}
	done := make(chan started, 1)
	go func() {
		p, err := NewProducer(ctx, o)
		done <- started{p, err}
	}()
	select {
	case s := <-done:
		return s.p, s.err
	case <-ctx.Done():
		go func() {
			if s := <-done; s.p != nil {
				_ = s.p.Close(context.WithoutCancel(ctx))
			}
		}()
		return nil, fmt.Errorf("rocketmq: start producer at %s: %w", o.where(), ctx.Err())
	}
}

// errNoTopics is returned by EnsureChannels in validate mode with no topic to
// check.
var errNoTopics = errors.New("rocketmq: no topic to validate")

// ErrTopicMissing is wrapped by EnsureChannels in validate mode for each
// topic the broker answers TOPIC_NOT_FOUND for.
var ErrTopicMissing = errors.New("rocketmq: topic does not exist")

// topicNotFound reports whether err is the broker's TOPIC_NOT_FOUND:
// rocketmq-clients v5.1.2 formats the status of a failed start-up route
// query into text (%v), so its name is looked for in the text as well.
func topicNotFound(err error) bool {
	var st *rmq.ErrRpcStatus
	if errors.As(err, &st) {
		return v2.Code(st.GetCode()) == v2.Code_TOPIC_NOT_FOUND
	}
	return strings.Contains(err.Error(), v2.Code_TOPIC_NOT_FOUND.String())
}
