package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/message"
)

// The fan-out guard of dlq replay and restore (issue 30; docs/commands/dlq.md
// "Fan-out"): without --to, a replay publishes to a message's originalTopic,
// and on SNS and Pub/Sub a topic hands every message to each of its
// subscriptions, so a replay for the one subscription that failed would
// give every other subscriber the message again. Where the transport can
// address the failed subscription alone (SNS→SQS: its queue), the copy goes
// there; elsewhere the other subscriptions are listed and the run refused
// (exit 2) unless --fan-out.

// fanOutTransport is a dlqTransport whose topics can fan out.
type fanOutTransport interface {
	// FansOut reports whether a replay from t publishes to topics that fan
	// out (SQS: only a subscription fed by SNS).
	FansOut(t *dlqTarget) bool
	// TopicSubscribers lists the subscriptions of topic (a name as a replay
	// from t publishes to it), named as subscriberName names them.
	TopicSubscribers(ctx context.Context, t *dlqTarget, topic string) ([]string, error)
	// SubscriberName is s's subscription as topicSubscribers names it.
	SubscriberName(t *dlqTarget, s *config.Subscription) string
	// ReaderName is the subscription t reads, as topicSubscribers names
	// it ("" when t is not a subscription of a topic).
	ReaderName(t *dlqTarget) string
	// DirectQueue is where a copy for s alone goes ("" when the transport
	// cannot address one subscription of a topic).
	DirectQueue(t *dlqTarget, s *config.Subscription) string
	// DirectProducer publishes to the names directQueue returns.
	DirectProducer(ctx context.Context, t *dlqTarget, logger *slog.Logger) (broker.Producer, error)
}

var (
	_ fanOutTransport = (*sqsTransport)(nil)
	_ fanOutTransport = (*gcpTransport)(nil)
	_ fanOutTransport = rocketmqTransport{}
)

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
}

// refusal is the decision's refusal text for topic, "" when the copy may go.
func (d fanOutDecision) refusal(topic string) string {
	switch {
	case errors.Is(d.err, errNoGroupListing):
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

// fanOutGuard decides, once per destination topic, where a replay from t
// publishes a copy for the failed subscriptions (those of the subscriptions
// file whose rejections t holds).
type fanOutGuard struct {
	ctx    context.Context
	t      *dlqTarget
	dt     dlqTransport
	ft     fanOutTransport
	failed []*config.Subscription
	// fanOut is --fan-out: the other subscriptions may receive the copy.
	fanOut  bool
	logger  *slog.Logger
	decided map[string]fanOutDecision
}

// newFanOutGuard returns the guard of a replay from t, nil when t's
// transport does not fan out.
func newFanOutGuard(ctx context.Context, t *dlqTarget, dt dlqTransport, failed []*config.Subscription, fanOut bool, logger *slog.Logger) *fanOutGuard {
	ft, ok := dt.(fanOutTransport)
	if !ok || !ft.FansOut(t) {
		return nil
	}
	return &fanOutGuard{ctx: ctx, t: t, dt: dt, ft: ft, failed: failed, fanOut: fanOut, logger: logger, decided: map[string]fanOutDecision{}}
}

// readers are the failed subscriptions that read topic.
func (g *fanOutGuard) readers(topic string) []*config.Subscription {
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
func (g *fanOutGuard) decide(topic string) fanOutDecision {
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
		d.others, d.err = g.others(topic, names)
	}
	g.decided[topic] = d
	return d
}

// others lists topic's subscriptions other than mine. When mine is empty
// (the subscriptions file names no failed subscription of topic) a topic
// with one subscription does not fan out: it has no other.
func (g *fanOutGuard) others(topic string, mine []string) ([]string, error) {
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
func (g *fanOutGuard) check(what string) error {
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
	return usageErr(fmt.Errorf("%s %s without --to: %s; nothing was %sed (pass --fan-out to send every subscriber the copy, or --to a destination only the failed subscription reads)",
		what, g.t.URL, strings.Join(refusals, "; "), what))
}

// allow wraps a replay's allow-list: a destination the guard refuses is
// refused (logged at Error with the other subscriptions).
func (g *fanOutGuard) allow(next func(string) bool) func(string) bool {
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

// routeFunc is the replay's ReplayOptions.Route: the failed subscription's
// own queue where the transport has one, else the topic; nil without a
// guard.
func (g *fanOutGuard) routeFunc() func(string) string {
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

// routed wraps prod so that the names a route can return (the failed
// subscriptions' own queues) go through the transport's direct producer;
// prod itself is returned when there are none.
func (g *fanOutGuard) routed(ctx context.Context, prod broker.Producer) (broker.Producer, error) {
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

// FansOut: a replay from an SQS queue publishes to SNS only for a
// subscription fed by SNS (channelType pubSub, or sqs:// with --sns).
func (t *sqsTransport) FansOut(tg *dlqTarget) bool {
	return tg.S.SQS != nil && tg.S.SQS.ChannelType == config.ChannelPubSub
}

// TopicSubscribers lists the SNS topic's subscriptions: SQS subscribers by
// queue name. A missing topic has none (a publish to it fails per message).
func (t *sqsTransport) TopicSubscribers(ctx context.Context, tg *dlqTarget, topic string) ([]string, error) {
	c, err := t.clientsFor(ctx, tg.F)
	if err != nil {
		return nil, err
	}
	subs, err := sqs.TopicSubscribers(ctx, c, topic, tg.S.SQS.QueueType == config.QueueFIFO)
	if errors.Is(err, sqs.ErrTopicNotFound) {
		return nil, nil
	}
	return subs, err
}

func (t *sqsTransport) SubscriberName(tg *dlqTarget, s *config.Subscription) string {
	return sqs.QueueName(s.ChannelName, s.SQS != nil && s.SQS.QueueType == config.QueueFIFO)
}

// ReaderName: a dead-letter queue is no subscription of a topic.
func (t *sqsTransport) ReaderName(*dlqTarget) string { return "" }

// DirectQueue is the queue of an SNS-fed subscription (SNS→SQS: the copy
// can go to the subscriber's queue alone).
func (t *sqsTransport) DirectQueue(tg *dlqTarget, s *config.Subscription) string {
	if s.SQS == nil || s.SQS.ChannelType != config.ChannelPubSub || s.ChannelName == "" {
		return ""
	}
	return s.ChannelName
}

// DirectProducer sends to SQS queues (FIFO as the subscription is) and
// never creates one.
func (t *sqsTransport) DirectProducer(ctx context.Context, tg *dlqTarget, logger *slog.Logger) (broker.Producer, error) {
	c, err := t.clientsFor(ctx, tg.F)
	if err != nil {
		return nil, err
	}
	return sqs.NewProducer(c, sqs.ProducerOptions{Fifo: tg.S.SQS.QueueType == config.QueueFIFO, MakeChannels: broker.MakeValidate}), nil
}

// FansOut: every Pub/Sub topic hands each message to all its subscriptions.
func (t *gcpTransport) FansOut(*dlqTarget) bool { return true }

// TopicSubscribers lists the topic's subscriptions by full name
// (projects/P/subscriptions/S). A missing topic has none (a publish to it
// fails per message).
func (t *gcpTransport) TopicSubscribers(ctx context.Context, tg *dlqTarget, topic string) ([]string, error) {
	c, err := t.client(ctx, tg.F, tg.S)
	if err != nil {
		return nil, err
	}
	full := strings.TrimPrefix(gcp.URLScheme{}.Format(broker.Address{Project: gcpProject(tg), Kind: broker.AddressTopic, Name: topic}), "pubsub://")
	it := c.TopicAdminClient.ListTopicSubscriptions(ctx, &pubsubpb.ListTopicSubscriptionsRequest{Topic: full})
	var out []string
	for {
		s, err := it.Next()
		if err == iterator.Done {
			return out, nil
		}
		if status.Code(err) == codes.NotFound {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list subscriptions of %s: %w", full, err)
		}
		out = append(out, s)
	}
}

func (t *gcpTransport) SubscriberName(tg *dlqTarget, s *config.Subscription) string {
	project := gcpProject(tg)
	if s.GCP != nil && s.GCP.ProjectID != "" {
		project = s.GCP.ProjectID
	}
	return gcp.SubscriptionName(project, s.ChannelName)
}

func (t *gcpTransport) ReaderName(tg *dlqTarget) string {
	return gcp.SubscriptionName(gcpProject(tg), tg.Dest)
}

// DirectQueue: Pub/Sub cannot publish to one subscription of a topic.
func (t *gcpTransport) DirectQueue(*dlqTarget, *config.Subscription) string { return "" }

func (t *gcpTransport) DirectProducer(context.Context, *dlqTarget, *slog.Logger) (broker.Producer, error) {
	return nil, errors.New("pub/sub has no per-subscription destination")
}

// restoreGuard refuses (exit 2) a restore without --to into a topic that
// fans out to subscriptions other than the one t reads, unless fanOut.
func restoreGuard(ctx context.Context, t *dlqTarget, dt dlqTransport, dest string, fanOut bool) error {
	ft, ok := dt.(fanOutTransport)
	if !ok || fanOut || !ft.FansOut(t) {
		return nil
	}
	mine := ft.ReaderName(t)
	if mine == "" {
		return nil
	}
	g := &fanOutGuard{ctx: ctx, t: t, dt: dt, ft: ft}
	others, err := g.others(dest, []string{mine})
	if r := (fanOutDecision{others: others, err: err}).refusal(dest); r != "" {
		return usageErr(fmt.Errorf("restore to %s without --to: %s; nothing was published (pass --fan-out to send every subscriber the copy)", dest, r))
	}
	return nil
}

// errNoGroupListing is RocketMQ's answer to "who else reads this topic":
// RocketMQ 5's client protocol has no call that lists a topic's consumer
// groups, and a topic keeps every message for each group subscribed to it.
var errNoGroupListing = errors.New("every consumer group subscribed to it receives the copy, and RocketMQ 5 has no call that lists a topic's consumer groups")

// FansOut: a RocketMQ topic keeps each message for every consumer group
// subscribed to it, so a replay to a message's originalTopic reaches them
// all.
func (rocketmqTransport) FansOut(*dlqTarget) bool { return true }

// TopicSubscribers cannot be asked of RocketMQ (errNoGroupListing); the
// error names the consumer groups of the subscriptions file that read
// topic, which receive the copy for certain.
func (rocketmqTransport) TopicSubscribers(_ context.Context, tg *dlqTarget, topic string) ([]string, error) {
	var groups []string
	if tg.F != nil {
		for _, s := range tg.F.Subscriptions {
			if s.Transport == config.TransportRocketMQ && s.RoutingKey == topic && s.RocketMQ != nil && !slices.Contains(groups, s.RocketMQ.ConsumerGroup) {
				groups = append(groups, s.RocketMQ.ConsumerGroup)
			}
		}
	}
	if len(groups) == 0 {
		return nil, errNoGroupListing
	}
	return nil, fmt.Errorf("%w (of this subscriptions file: %s %s; others may exist)", errNoGroupListing, pluralWord(len(groups), "group"), strings.Join(groups, ", "))
}

// SubscriberName is s's consumer group.
func (rocketmqTransport) SubscriberName(_ *dlqTarget, s *config.Subscription) string {
	if s.RocketMQ == nil {
		return ""
	}
	return s.RocketMQ.ConsumerGroup
}

// ReaderName: a dead-letter topic (%DLQ%<group> or a rejection topic) is
// read by dlq's reader group, no subscription: a restore into it is not
// guarded.
func (rocketmqTransport) ReaderName(*dlqTarget) string { return "" }

// DirectQueue: a RocketMQ client cannot publish to one consumer group of a
// topic (its retry topic %RETRY%<group> is the broker's own).
func (rocketmqTransport) DirectQueue(*dlqTarget, *config.Subscription) string { return "" }

func (rocketmqTransport) DirectProducer(context.Context, *dlqTarget, *slog.Logger) (broker.Producer, error) {
	return nil, errors.New("rocketmq has no per-consumer-group destination")
}
