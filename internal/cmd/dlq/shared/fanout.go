package shared

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/transport"
)

// The fan-out guard of dlq replay and restore (docs/commands/dlq.md
// "Fan-out"): without --to, a replay publishes to a message's originalTopic,
// and on SNS and Pub/Sub a topic hands every message to each of its
// subscriptions, so a replay for the one subscription that failed would
// give every other subscriber the message again. Where the transport can
// address the failed subscription alone (SNS→SQS: its queue), the copy goes
// there; elsewhere the other subscriptions are listed and the run refused
// (exit 2) unless --fan-out.

// fanOutLookup bounds one listing of a topic's subscriptions.
const fanOutLookup = 10 * time.Second

// fanOutDecision is the guard's answer for one destination topic.
type fanOutDecision struct {
	// route is the failed subscription's own queue ("" : the topic).
	route string
	// others are the topic's other subscriptions, which the copy would
	// also reach; empty when none (or with --fan-out).
	others []string
	// err is why the subscriptions could not be listed.
	err error
	// shared are the failed subscriptions (more than one) that read the
	// topic and dead-letter into the destination being read: a dead letter
	// does not record which of them failed it, so a copy through the topic
	// would reach them all and none can be picked; empty otherwise.
	shared []string
	// hint, with shared, says how to reach one of them alone ("" when the
	// transport cannot address a subscription by itself).
	hint string
}

// refusal is the decision's refusal text for topic, "" when the copy may go.
func (d fanOutDecision) refusal(topic string) string {
	switch {
	case len(d.shared) > 0:
		return fmt.Sprintf("the dead-letter destination is shared by %s %s, which all read topic %s: a dead letter does not record which of them failed it, so a copy through the topic would reach every one of them again (the one that handled it too)%s", pluralWord(len(d.shared), "subscription"), strings.Join(d.shared, ", "), topic, d.hint)
	case errors.Is(d.err, transport.ErrNoGroupListing):
		return fmt.Sprintf("topic %s: %v", topic, d.err)
	case d.err != nil:
		return fmt.Sprintf("topic %s: cannot list its subscriptions (%v), so cannot tell who else would receive the copy", topic, d.err)
	case len(d.others) > 0:
		return fmt.Sprintf("topic %s fans out: the copy would also reach %s %s", topic, pluralWord(len(d.others), "subscription"), strings.Join(d.others, ", "))
	}
	return ""
}

func pluralWord(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// FanOutGuard decides, once per destination topic, where a replay from t
// publishes a copy for the failed subscriptions (those of the subscriptions
// file whose rejections t holds).
type FanOutGuard struct {
	ctx    context.Context
	t      *transport.Target
	dt     transport.Transport
	ft     transport.FanOut
	failed []*config.Subscription
	// fanOut is --fan-out: the other subscriptions may receive the copy.
	fanOut  bool
	logger  *slog.Logger
	decided map[string]fanOutDecision
}

// newFanOutGuard returns the guard of a replay from t, nil when t's
// transport does not fan out.
func newFanOutGuard(ctx context.Context, t *transport.Target, dt transport.Transport, failed []*config.Subscription, fanOut bool, logger *slog.Logger) *FanOutGuard {
	ft, ok := dt.(transport.FanOut)
	if !ok || !ft.FansOut(t) {
		return nil
	}
	return &FanOutGuard{ctx: ctx, t: t, dt: dt, ft: ft, failed: failed, fanOut: fanOut, logger: logger, decided: map[string]fanOutDecision{}}
}

// readers are the failed subscriptions that read topic.
func (g *FanOutGuard) readers(topic string) []*config.Subscription {
	as, from := g.dt.Addresses(), g.dt.ReplayFrom(g.t)
	var out []*config.Subscription
	for _, s := range g.failed {
		if s.RoutingKey != "" && as.Same(topic, broker.Address{Project: from.Project, Kind: broker.AddressTopic, FIFO: from.FIFO, Name: s.RoutingKey}) {
			out = append(out, s)
		}
	}
	return out
}

// decide is the decision for topic, asked of the broker once a run.
func (g *FanOutGuard) decide(topic string) fanOutDecision {
	if d, ok := g.decided[topic]; ok {
		return d
	}
	mine := g.readers(topic)
	var d fanOutDecision
	if len(mine) == 1 {
		d.route = g.ft.DirectQueue(g.t, mine[0])
	}
	if d.route == "" && !g.fanOut {
		names := make([]string, 0, len(mine))
		for _, s := range mine {
			names = append(names, g.ft.SubscriberName(g.t, s))
		}
		if len(mine) > 1 {
			// Several failed subscriptions of one topic share the
			// destination: the copy cannot be sent to the one that failed.
			d.shared = names
			var queues []string
			for _, s := range mine {
				if q := g.ft.DirectQueue(g.t, s); q != "" {
					queues = append(queues, q)
				}
			}
			if len(queues) > 0 {
				d.hint = fmt.Sprintf("; to send the copies to one subscriber's queue alone, read the dead-letter queue by its URL: dlq replay %s --to QUEUE (%s)", g.t.URL, strings.Join(queues, " or "))
			}
		} else {
			d.others, d.err = g.others(topic, names)
		}
	}
	g.decided[topic] = d
	return d
}

// others lists topic's subscriptions other than mine. When mine is empty
// (the subscriptions file names no failed subscription of topic) a topic
// with one subscription does not fan out: it has no other.
func (g *FanOutGuard) others(topic string, mine []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(g.ctx, fanOutLookup)
	defer cancel()
	subs, err := g.ft.TopicSubscribers(ctx, g.t, topic)
	if err != nil {
		return nil, err
	}
	if len(mine) == 0 && len(subs) <= 1 {
		return nil, nil
	}
	var others []string
	for _, s := range subs {
		if !slices.Contains(mine, s) {
			others = append(others, s)
		}
	}
	return others, nil
}

// check decides every topic a failed subscription reads, before anything
// is read: a usage error (exit 2) listing the other subscriptions when any
// would receive a copy.
func (g *FanOutGuard) check(what string) error {
	if g == nil {
		return nil
	}
	var refusals []string
	seen := map[string]bool{}
	for _, s := range g.failed {
		if s.RoutingKey == "" || seen[s.RoutingKey] {
			continue
		}
		seen[s.RoutingKey] = true
		if r := g.decide(s.RoutingKey).refusal(s.RoutingKey); r != "" {
			refusals = append(refusals, r)
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	return cmdutil.UsageErr(fmt.Errorf("%s %s without --to: %s; nothing was %sed (pass --fan-out to send every subscriber the copy, or --to a destination only the failed subscription reads)",
		what, g.t.URL, strings.Join(refusals, "; "), what))
}

// allow wraps a replay's allow-list: a destination the guard refuses is
// refused (logged at Error with the other subscriptions).
func (g *FanOutGuard) allow(next func(string) bool) func(string) bool {
	if g == nil {
		return next
	}
	return func(dest string) bool {
		if next != nil && !next(dest) {
			return false
		}
		if r := g.decide(dest).refusal(dest); r != "" {
			g.logger.Error(logFanOutRefused, "source", g.t.URL, "destination", dest, "reason", r)
			return false
		}
		return true
	}
}

// logFanOutRefused is the stable log text of a destination the fan-out
// guard refused during a replay (with --allow-any-destination).
const logFanOutRefused = "replay refused: the destination topic fans out to other subscriptions; pass --fan-out or --to"

// RouteFunc is the replay's ReplayOptions.Route: the failed subscription's
// own queue where the transport has one, else the topic; nil without a
// guard.
func (g *FanOutGuard) RouteFunc() func(string) string {
	if g == nil {
		return nil
	}
	return func(dest string) string {
		if r := g.decide(dest).route; r != "" {
			return r
		}
		return dest
	}
}

// Routed wraps prod so that the names a route can return (the failed
// subscriptions' own queues) go through the transport's direct producer;
// prod itself is returned when there are none.
func (g *FanOutGuard) Routed(ctx context.Context, prod broker.Producer) (broker.Producer, error) {
	if g == nil || prod == nil {
		return prod, nil
	}
	queues := map[string]bool{}
	for _, s := range g.failed {
		if q := g.ft.DirectQueue(g.t, s); q != "" {
			queues[q] = true
		}
	}
	if len(queues) == 0 {
		return prod, nil
	}
	direct, err := g.ft.DirectProducer(ctx, g.t, g.logger)
	if err != nil {
		return nil, err
	}
	return &routedProducer{base: prod, direct: direct, queues: queues}, nil
}

// routedProducer sends a message whose Header.Topic is one of queues with
// direct, any other with base.
type routedProducer struct {
	base, direct broker.Producer
	queues       map[string]bool
}

func (p *routedProducer) pick(m *message.Message) broker.Producer {
	if p.queues[m.Header.Topic] {
		return p.direct
	}
	return p.base
}

// Send publishes m with the producer its destination needs.
func (p *routedProducer) Send(ctx context.Context, m *message.Message) error {
	return p.pick(m).Send(ctx, m)
}

// SendBatch publishes each message with the producer its destination
// needs, in batches where that producer batches; the errors are in ms's
// order.
func (p *routedProducer) SendBatch(ctx context.Context, ms []*message.Message) []error {
	errs := make([]error, len(ms))
	for _, prod := range []broker.Producer{p.base, p.direct} {
		var idx []int
		var part []*message.Message
		for i, m := range ms {
			if p.pick(m) == prod {
				idx, part = append(idx, i), append(part, m)
			}
		}
		if len(part) == 0 {
			continue
		}
		if bp, ok := prod.(broker.BatchProducer); ok {
			for j, err := range bp.SendBatch(ctx, part) {
				errs[idx[j]] = err
			}
			continue
		}
		for j, m := range part {
			errs[idx[j]] = prod.Send(ctx, m)
		}
	}
	return errs
}

// Close closes both producers.
func (p *routedProducer) Close(ctx context.Context) error {
	return errors.Join(p.base.Close(ctx), p.direct.Close(ctx))
}

// GuardRestore is RestoreGuard for a restore's start: a SIGINT or SIGTERM
// while it asks the broker abandons the look-up and it returns
// ConnectInterrupted (exit 130); a second exits 130 at once.
func (o *Options) GuardRestore(ctx context.Context, t *transport.Target, dt transport.Transport, dest string, fanOut bool, logger *slog.Logger) error {
	cctx, done := o.connecting(ctx, logger)
	err := RestoreGuard(cctx, t, dt, dest, fanOut)
	if done() {
		return ConnectInterrupted(t.URL)
	}
	return err
}

// RestoreGuard refuses (exit 2) a restore without --to into a topic that
// fans out to subscriptions other than the one t reads, unless fanOut. It
// does not watch signals (GuardRestore does).
func RestoreGuard(ctx context.Context, t *transport.Target, dt transport.Transport, dest string, fanOut bool) error {
	ft, ok := dt.(transport.FanOut)
	if !ok || fanOut || !ft.FansOut(t) {
		return nil
	}
	mine := ft.ReaderName(t)
	if mine == "" {
		return nil
	}
	g := &FanOutGuard{ctx: ctx, t: t, dt: dt, ft: ft}
	others, err := g.others(dest, []string{mine})
	if r := (fanOutDecision{others: others, err: err}).refusal(dest); r != "" {
		return cmdutil.UsageErr(fmt.Errorf("restore to %s without --to: %s; nothing was published (pass --fan-out to send every subscriber the copy)", dest, r))
	}
	return nil
}
