package lint

import (
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/config"
)

// The destinations one subscription routes to, and what reads them: the
// cross-subscription rule RuleConsumesRejectionDestination.

// readKey is what subscription s reads, as its transport resolves names:
// the SQS queue (channelName, '.' as '_', without a ".fifo" suffix), the
// Pub/Sub topic its subscription is attached to (routingKey), the RocketMQ
// topic (channelName) or the memory queue (channelName).
func readKey(s *config.Subscription) string {
	switch s.Transport {
	case config.TransportSQS:
		return sqsKey(s.ChannelName)
	case config.TransportGCP:
		return s.RoutingKey
	}
	return s.ChannelName
}

// destKey is where a destination name of a subscription on transport t
// lands, resolved as readKey resolves what is read.
func destKey(t config.Transport, name string) string {
	if t == config.TransportSQS {
		return sqsKey(name)
	}
	return name
}

// sqsKey is Brighter's queue-name rule without its FIFO suffix: '.' is '_'.
func sqsKey(name string) string {
	n := strings.ReplaceAll(name, ".", "_")
	return strings.TrimSuffix(n, "_fifo")
}

// destination is one place a subscription sends messages it does not keep.
type destination struct {
	field  string // relative to the subscription
	name   string
	native bool // moved by the broker's own redrive, without metadata
}

func destinations(s *config.Subscription) []destination {
	var out []destination
	if s.DeadLetterRoutingKey != "" {
		out = append(out, destination{"deadLetterRoutingKey", s.DeadLetterRoutingKey, false})
	}
	if s.InvalidMessageRoutingKey != "" {
		out = append(out, destination{"invalidMessageRoutingKey", s.InvalidMessageRoutingKey, false})
	}
	if s.SQS != nil && s.SQS.RedrivePolicy != nil && s.SQS.RedrivePolicy.DeadLetterQueue != "" {
		out = append(out, destination{"sqs.redrivePolicy.deadLetterQueue", s.SQS.RedrivePolicy.DeadLetterQueue, true})
	}
	if s.GCP != nil && s.GCP.DeadLetterPolicy != nil && s.GCP.DeadLetterPolicy.Topic != "" {
		out = append(out, destination{"gcp.deadLetterPolicy.topic", s.GCP.DeadLetterPolicy.Topic, true})
	}
	return out
}

// appendRejectionConsumers adds, for subscription s of f, one finding per
// other subscription of f (same transport) whose rejection destination is
// what s reads: s is a "DLQ processor" and its budget behaves as routed
// copies make it (docs/adr/0001 §9).
func appendRejectionConsumers(out []Finding, f *config.File, s *config.Subscription) []Finding {
	if f == nil || s == nil {
		return out
	}
	key := readKey(s)
	c := &check{s: s, out: out}
	for _, src := range f.Subscriptions {
		if src == nil || src == s || src.Transport != s.Transport {
			continue
		}
		for _, d := range destinations(src) {
			if destKey(src.Transport, d.name) != key {
				continue
			}
			c.add(RuleConsumesRejectionDestination, pick(s, "channelName", "routingKey", "name"),
				"subscription %q reads %q, which is subscription %q's %s: %s",
				s.Name, d.name, src.Name, d.field, budgetBehaviour(s, src, d))
		}
	}
	return c.out
}

// budgetBehaviour says how s's budget behaves on the copies src sends it.
func budgetBehaviour(s, src *config.Subscription, d destination) string {
	if d.native {
		return fmt.Sprintf("copies moved there by the broker's own redrive carry no rejection metadata, so they present %q's stamped count plus the broker's counter on this queue, and a requeueCount of %d may fire at once", src.Name, s.RequeueCount)
	}
	route := "routed to its deadLetterRoutingKey " + fmt.Sprintf("%q", s.DeadLetterRoutingKey)
	if s.DeadLetterRoutingKey == "" {
		route = "acknowledged and discarded (it has no deadLetterRoutingKey)"
	}
	if s.RequeueCount == -1 {
		return fmt.Sprintf("each routed copy presents the count %q stamped (R-28); requeueCount is -1, so a deferring handler sees each copy for ever", src.Name)
	}
	return fmt.Sprintf("each routed copy presents the count %q stamped (R-28), but its budget is judged on this channel's own delivery attempts: a deferring handler is invoked at most %d times per copy, which is then %s", src.Name, max(s.RequeueCount, 1), route)
}
