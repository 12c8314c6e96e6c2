package lint

import (
	"fmt"
	"strings"

	"github.com/brightergo/brighter/internal/config"
)

// The destinations one subscription routes to, and what reads them: the
// cross-subscription rule RuleConsumesRejectionDestination, linear in the
// subscriptions of a file through rejectionIndex.

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

// rejectionIndex maps, per transport, where each rejection destination of a
// file's subscriptions lands (destKey) to the subscriptions sending there,
// in file order and, within a subscription, in destinations' order: one
// pass over the file, so that the rule looks up what a subscription reads
// instead of comparing it with every other subscription.
type rejectionIndex struct {
	file  *config.File
	n     int // len(file.Subscriptions) when built
	byKey map[config.Transport]map[string][]rejectionSource
	// cycles is, per subscription on a rejection cycle, the shortest
	// cycle through it (cycles.go).
	cycles map[*config.Subscription][]cycleEdge
}

// rejectionSource is one destination d of subscription src.
type rejectionSource struct {
	src *config.Subscription
	d   destination
}

// newRejectionIndex indexes every destination of f's subscriptions.
func newRejectionIndex(f *config.File) *rejectionIndex {
	x := &rejectionIndex{file: f, n: len(f.Subscriptions), byKey: map[config.Transport]map[string][]rejectionSource{}}
	for _, src := range f.Subscriptions {
		if src == nil {
			continue
		}
		for _, d := range destinations(src) {
			m := x.byKey[src.Transport]
			if m == nil {
				m = map[string][]rejectionSource{}
				x.byKey[src.Transport] = m
			}
			k := destKey(src.Transport, d.name)
			m[k] = append(m[k], rejectionSource{src: src, d: d})
		}
	}
	x.cycles = rejectionCycles(f, x.byKey)
	return x
}

// of reports whether x was built from f as it is now.
func (x *rejectionIndex) of(f *config.File) bool {
	return x != nil && x.file == f && x.n == len(f.Subscriptions)
}

// appendRejectionConsumers adds, for subscription s of the indexed file,
// one finding per other subscription (same transport) whose rejection
// destination is what s reads: s is a "DLQ processor" and its budget
// behaves as routed copies make it (docs/adr/0001 §9).
func (x *rejectionIndex) appendRejectionConsumers(out []Finding, s *config.Subscription) []Finding {
	if x == nil || s == nil {
		return out
	}
	srcs := x.byKey[s.Transport][readKey(s)]
	if len(srcs) == 0 {
		return out
	}
	c := &check{s: s, out: out}
	for _, r := range srcs {
		if r.src == s {
			continue
		}
		c.add(RuleConsumesRejectionDestination, pick(s, "channelName", "routingKey", "name"),
			"subscription %q reads %q, which is subscription %q's %s: %s",
			s.Name, r.d.name, r.src.Name, r.d.field, budgetBehaviour(s, r.src, r.d))
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
