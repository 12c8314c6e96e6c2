package live

import (
	"context"
	"fmt"
	"time"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/broker/sqs"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/infra"
)

// The service defaults an infrastructure file leaves in force when it
// does not set the setting.
const (
	// SQSDefaultRetention is an SQS queue's default message retention.
	SQSDefaultRetention = 4 * 24 * time.Hour
	// PubSubDefaultRetention is a Pub/Sub subscription's default message
	// retention.
	PubSubDefaultRetention = 7 * 24 * time.Hour
	// PubSubDefaultAckDeadline is a Pub/Sub subscription's default ack
	// deadline.
	PubSubDefaultAckDeadline = 10 * time.Second
	// SQSDefaultVisibility is an SQS queue's default visibility timeout.
	SQSDefaultVisibility = 30 * time.Second
	// PubSubDefaultMaxBackoff is a Pub/Sub retry policy's default maximum
	// back-off, and the longest one the service accepts.
	PubSubDefaultMaxBackoff = 600 * time.Second
)

// BudgetSpan returns the longest a message deferred requeueCount times
// (s.RequeueCount, above 0) can stay on its source r before its budget
// is spent, the dead-letter outage allowance not included, and the sum it
// was computed as, in the words of a finding ("requeueCount 5 x
// requeueDelay 1m"). It is a bound that is never below what the documented
// behaviour allows:
//
//   - SQS, and Pub/Sub with no retry policy in force: each redelivery waits
//     requeueDelay (a visibility change, a lapsed ack deadline or a hold
//     before the Nack), so requeueCount x requeueDelay.
//   - Pub/Sub with a retry policy: brighter holds the message for
//     requeueDelay and the policy's back-off follows the Nack or the lapsed
//     deadline. Pub/Sub documents the back-off as exponential between the
//     policy's minimum and maximum without saying how fast it grows, so
//     each is taken at the maximum: requeueCount x (requeueDelay + maximum
//     back-off). The policy in force is the file's under makeChannels
//     create (with requeueDelay above 0: maximum gcp.maxRequeueDelay, 600 s
//     unless set; none otherwise), else the one r declares (its
//     maximum_backoff; the service default 600 s when unset, and when
//     decided only at apply time; none declared, no back-off).
//
// backoff is the maximum back-off counted per redelivery (0 with no retry
// policy).
func BudgetSpan(s *config.Subscription, r *infra.Resource) (span time.Duration, sum string, backoff time.Duration) {
	n, d := s.RequeueCount, s.RequeueDelay
	var from string
	if r != nil && r.Kind == infra.KindPubSubSubscription {
		backoff, from = pubsubMaxBackoff(s, r)
	}
	if backoff == 0 {
		return time.Duration(n) * d, fmt.Sprintf("requeueCount %d x requeueDelay %s", n, config.FormatDuration(d)), 0
	}
	return time.Duration(n) * (d + backoff),
		fmt.Sprintf("requeueCount %d x (requeueDelay %s + the retry policy's maximum back-off %s, %s)", n, config.FormatDuration(d), config.FormatDuration(backoff), from),
		backoff
}

// pubsubMaxBackoff returns the maximum back-off of the retry policy in
// force on r for s, and where it comes from; 0 when none is.
func pubsubMaxBackoff(s *config.Subscription, r *infra.Resource) (time.Duration, string) {
	if s.MakeChannels == "" || s.MakeChannels == config.MakeChannelsCreate {
		if s.RequeueDelay <= 0 {
			return 0, ""
		}
		from := "gcp.maxRequeueDelay, which makeChannels: create sets"
		if !s.Set("gcp.maxRequeueDelay") {
			from = "gcp.maxRequeueDelay's default, which makeChannels: create sets"
		}
		m := PubSubDefaultMaxBackoff
		if s.GCP != nil && s.GCP.MaxRequeueDelay > 0 {
			m = s.GCP.MaxRequeueDelay
		}
		return max(m, s.RequeueDelay), from
	}
	if !r.RetryPolicy {
		return 0, ""
	}
	mx, mn := r.RetryMaxBackoff, r.RetryMinBackoff
	switch {
	case mx.State == infra.Known && mn.State == infra.Known:
		return max(mx.V, mn.V), r.Address + "'s retry policy"
	case mx.State == infra.Known:
		return mx.V, r.Address + "'s retry policy"
	case mx.State == infra.Unknown:
		return PubSubDefaultMaxBackoff, r.Address + "'s retry policy, decided at apply time, taken at the longest"
	}
	return PubSubDefaultMaxBackoff, r.Address + "'s retry policy, the service default"
}

// InfraProbers returns the probers of --infra: the settings in force as
// the infrastructure files of set declare them, for the transports they
// declare (SQS queues, Pub/Sub subscriptions). Check runs the same rules
// over them as over the brokers' probers.
func InfraProbers(set *infra.Set) map[config.Transport]Prober {
	return map[config.Transport]Prober{
		config.TransportSQS: InfraSQS{Set: set},
		config.TransportGCP: InfraGCP{Set: set},
	}
}

// sqsQueueName is the queue name the SQS transport uses for name.
func sqsQueueName(s *config.Subscription, name string) string {
	return sqs.QueueName(name, s.SQS != nil && s.SQS.QueueType == config.QueueFIFO)
}

// InfraSQS answers for SQS subscriptions from the queues an infrastructure
// Set declares, named as the transport names them (sqs.QueueName): a
// Prober, SizeProber and Declarer.
type InfraSQS struct {
	Set *infra.Set
}

func (p InfraSQS) queue(s *config.Subscription) (*infra.Resource, bool) {
	return p.Set.Find(infra.KindSQSQueue, sqsQueueName(s, s.ChannelName))
}

// Declaration names the subscription's queue's declaration.
func (p InfraSQS) Declaration(_ *config.File, s *config.Subscription) (string, config.Position, bool) {
	q, ok := p.queue(s)
	if !ok {
		return "", config.Position{}, false
	}
	return q.Address, q.Pos, true
}

// NativeLimit returns the declared redrive policy's maxReceiveCount; an
// undeclared queue or a count known only at apply time is ErrUndecided.
func (p InfraSQS) NativeLimit(_ context.Context, _ *config.File, s *config.Subscription) (lint.Limit, bool, error) {
	q, ok := p.queue(s)
	if !ok {
		return lint.Limit{}, false, fmt.Errorf("queue %s: %w", sqsQueueName(s, s.ChannelName), ErrUndecided)
	}
	if q.Redrive == nil {
		return lint.Limit{}, false, nil
	}
	if !q.Redrive.MaxReceiveCount.IsKnown() {
		return lint.Limit{}, false, fmt.Errorf("%s redrive policy: %w", q.Address, ErrUndecided)
	}
	return lint.Limit{Value: q.Redrive.MaxReceiveCount.V, Field: "sqs.redrivePolicy.maxReceiveCount", Pos: q.Redrive.MaxReceiveCount.Pos}, true, nil
}

// size returns q's maximum message size (the SQS default when unset).
func size(q *infra.Resource) (int, bool) {
	switch q.MaxMessageSize.State {
	case infra.Known:
		return q.MaxMessageSize.V, true
	case infra.Unset:
		return limits.SQS.DefaultMaxMessageBytes, true
	}
	return 0, false
}

// MessageSizes returns the declared maximum message sizes of the source,
// its deadLetterRoutingKey and invalidMessageRoutingKey queues and the
// queue its declared redrive policy sends to: SizeProber. A destination
// not declared, or whose size is known only at apply time, is left out.
func (p InfraSQS) MessageSizes(_ context.Context, _ *config.File, s *config.Subscription) (int, []DestinationSize, error) {
	q, ok := p.queue(s)
	if !ok {
		return 0, nil, fmt.Errorf("queue %s: %w", sqsQueueName(s, s.ChannelName), ErrUndecided)
	}
	src, ok := size(q)
	if !ok {
		return 0, nil, fmt.Errorf("%s max_message_size: %w", q.Address, ErrUndecided)
	}
	var dests []DestinationSize
	seen := map[*infra.Resource]bool{q: true}
	add := func(field string, d *infra.Resource) {
		if seen[d] {
			return
		}
		seen[d] = true
		if n, ok := size(d); ok {
			dests = append(dests, DestinationSize{Field: field, Name: d.Name.V, Bytes: n, Pos: d.MaxMessageSize.Pos})
		}
	}
	for _, d := range []struct{ field, key string }{{"deadLetterRoutingKey", s.DeadLetterRoutingKey}, {"invalidMessageRoutingKey", s.InvalidMessageRoutingKey}} {
		if d.key == "" {
			continue
		}
		if r, ok := p.Set.Find(infra.KindSQSQueue, sqsQueueName(s, d.key)); ok {
			add(d.field, r)
		}
	}
	if q.Redrive != nil {
		if r, ok := p.Set.Resolve(infra.KindSQSQueue, q.Redrive.TargetARN); ok {
			add("sqs.redrivePolicy.deadLetterQueue", r)
		}
	}
	return src, dests, nil
}

// InfraGCP answers for Pub/Sub subscriptions from the subscriptions an
// infrastructure Set declares: a Prober, CounterProber, ReaderProber and
// Declarer.
type InfraGCP struct {
	Set *infra.Set
}

// gcpProject is the project of s, as the GCP prober resolves it.
func gcpProject(f *config.File, s *config.Subscription) string {
	if s.GCP != nil && s.GCP.ProjectID != "" {
		return s.GCP.ProjectID
	}
	if f != nil {
		return f.Connections.GCP.ProjectID
	}
	return ""
}

func (p InfraGCP) sub(f *config.File, s *config.Subscription) (*infra.Resource, bool) {
	name := s.ChannelName
	if pj := gcpProject(f, s); pj != "" {
		name = "projects/" + pj + "/subscriptions/" + s.ChannelName
	}
	return p.Set.Find(infra.KindPubSubSubscription, name)
}

// Declaration names the subscription's declaration.
func (p InfraGCP) Declaration(f *config.File, s *config.Subscription) (string, config.Position, bool) {
	r, ok := p.sub(f, s)
	if !ok {
		return "", config.Position{}, false
	}
	return r.Address, r.Pos, true
}

// NativeLimit returns the declared dead-letter policy's
// max_delivery_attempts (unset is the service default, 5).
func (p InfraGCP) NativeLimit(_ context.Context, f *config.File, s *config.Subscription) (lint.Limit, bool, error) {
	r, ok := p.sub(f, s)
	if !ok {
		return lint.Limit{}, false, fmt.Errorf("subscription %s: %w", s.ChannelName, ErrUndecided)
	}
	if r.DeadLetter == nil {
		return lint.Limit{}, false, nil
	}
	m := r.DeadLetter.MaxDeliveryAttempts
	switch m.State {
	case infra.Unknown:
		return lint.Limit{}, false, fmt.Errorf("%s max_delivery_attempts: %w", r.Address, ErrUndecided)
	case infra.Unset:
		m.V = config.GCPDefaultMaxDeliveryAttempts
	}
	if m.V == 0 {
		m.V = config.GCPDefaultMaxDeliveryAttempts
	}
	return lint.Limit{Value: m.V, Field: "gcp.deadLetterPolicy.maxDeliveryAttempts", Pos: m.Pos}, true, nil
}

// CountNeedsNativeLimit is true: Pub/Sub's delivery_attempt needs a
// dead-letter policy.
func (InfraGCP) CountNeedsNativeLimit() bool { return true }

// MissingCounter says the declared subscription has no dead-letter policy.
func (p InfraGCP) MissingCounter(s *config.Subscription) (string, string) {
	name := s.ChannelName
	if r, ok := p.Set.Find(infra.KindPubSubSubscription, s.ChannelName); ok {
		name = r.Address
	}
	return fmt.Sprintf("%s declares no dead-letter policy (the file's gcp.deadLetterPolicy is not in the infrastructure), so Pub/Sub fills no delivery_attempt and the delivery count never advances: a deferred message is redelivered for ever", name),
		"add the dead_letter_policy to " + name + ", or set requeueCount: -1"
}

// InfraOptions tune CheckInfra.
type InfraOptions struct {
	// RequireAll makes infra-undeclared an Error: the files declare every
	// channel.
	RequireAll bool
}

// CheckInfra returns the findings of the rules only infrastructure files
// make possible, for every SQS and Pub/Sub subscription of f: a channel no
// file declares (infra-undeclared), a redrive or dead-letter policy that
// sends elsewhere than the file names (dead-letter-target-mismatch), a
// dead-letter queue whose redrive allow policy forbids the source
// (redrive-allow-forbids-source), a retention shorter than the budget's
// worst case (retention-shorter-than-budget), ordering that disagrees with
// the file (delivery-order-drift), an SNS subscription to the queue whose
// raw message delivery disagrees (raw-delivery-drift), and the lease rules
// judged against the
// declared visibility timeout or ack deadline where that is the lease in
// force. Check with InfraProbers runs the --live rules over the same Set.
func CheckInfra(f *config.File, set *infra.Set, rules map[config.Transport]lint.TransportRules, o InfraOptions) []lint.Finding {
	if f == nil || set == nil {
		return nil
	}
	var out []lint.Finding
	for _, s := range f.Subscriptions {
		var r *infra.Resource
		var ok bool
		switch s.Transport {
		case config.TransportSQS:
			r, ok = InfraSQS{Set: set}.queue(s)
		case config.TransportGCP:
			r, ok = InfraGCP{Set: set}.sub(f, s)
		default:
			continue
		}
		if !ok {
			if s.MakeChannels == config.MakeChannelsValidate || s.MakeChannels == config.MakeChannelsAssume {
				fd := lint.NewFinding(s, lint.RuleInfraUndeclared, "channelName",
					fmt.Sprintf("subscription %q: no infrastructure file given declares its channel %s (one whose name is decided only at apply time cannot be matched); pass the files that declare it to --infra, or declare it", s.Name, s.ChannelName))
				if o.RequireAll {
					fd.Severity = lint.SeverityError
				}
				out = append(out, fd)
			}
			continue
		}
		c := infraCheck{f: f, s: s, r: r, set: set, tr: rules[s.Transport]}
		c.deadLetterTarget()
		c.redriveAllow()
		c.retention()
		c.ordering()
		c.rawDelivery()
		c.lease()
		out = append(out, c.out...)
	}
	lint.Sort(out)
	return out
}

// infraCheck is one subscription judged against its declaration r.
type infraCheck struct {
	f   *config.File
	s   *config.Subscription
	r   *infra.Resource
	set *infra.Set
	tr  lint.TransportRules
	out []lint.Finding
}

func (c *infraCheck) add(rule, field string, at config.Position, format string, args ...any) {
	c.out = append(c.out, lint.Relocate(lint.NewFinding(c.s, rule, field, fmt.Sprintf(format, args...)), at))
}

// expectedDeadLetter returns the dead-letter channel the file names, and
// its field: the native policy's target when set, else
// deadLetterRoutingKey.
func expectedDeadLetter(s *config.Subscription) (name, field string) {
	switch {
	case s.SQS != nil && s.SQS.RedrivePolicy != nil:
		return s.SQS.RedrivePolicy.DeadLetterQueue, "sqs.redrivePolicy.deadLetterQueue"
	case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
		return s.GCP.DeadLetterPolicy.Topic, "gcp.deadLetterPolicy.topic"
	}
	return s.DeadLetterRoutingKey, "deadLetterRoutingKey"
}

// deadLetterTarget reports a declared redrive or dead-letter policy whose
// target is not the channel the file names.
func (c *infraCheck) deadLetterTarget() {
	want, field := expectedDeadLetter(c.s)
	if want == "" {
		return
	}
	var target infra.Value[string]
	kind := infra.KindSQSQueue
	switch {
	case c.r.Kind == infra.KindSQSQueue && c.r.Redrive != nil:
		target = c.r.Redrive.TargetARN
		want = sqsQueueName(c.s, want)
	case c.r.Kind == infra.KindPubSubSubscription && c.r.DeadLetter != nil:
		target, kind = c.r.DeadLetter.Topic, infra.KindPubSubTopic
	default:
		return
	}
	got := ""
	if d, ok := c.set.Resolve(kind, target); ok && d.Name.IsKnown() {
		got = infra.ShortName(d.Name.V)
	} else if target.IsKnown() {
		got = infra.ShortName(target.V)
	}
	if got == "" || got == infra.ShortName(want) {
		return
	}
	c.add(lint.RuleDeadLetterTargetMismatch, field, target.Pos,
		"subscription %q: %s sends what the broker gives up on to %s, but the file's %s is %s: those messages land where brighter dlq does not look; point the policy at %s or change the file",
		c.s.Name, c.r.Address, got, field, infra.ShortName(want), infra.ShortName(want))
}

// redriveAllow reports a redrive target whose redrive allow policy
// forbids the source queue.
func (c *infraCheck) redriveAllow() {
	if c.r.Kind != infra.KindSQSQueue || c.r.Redrive == nil {
		return
	}
	d, ok := c.set.Resolve(infra.KindSQSQueue, c.r.Redrive.TargetARN)
	if !ok || d.RedriveAllow == nil || !d.RedriveAllow.Permission.IsKnown() {
		return
	}
	ra := d.RedriveAllow
	switch ra.Permission.V {
	case "denyAll":
	case "byQueue":
		for _, a := range ra.SourceARNs {
			switch {
			case a.Ref == c.r.Address:
				return
			case a.IsKnown() && c.r.ARN.IsKnown() && a.V == c.r.ARN.V:
				return
			case a.IsKnown() && c.r.Name.IsKnown() && infra.ShortName(a.V) == c.r.Name.V:
				return
			case !a.IsKnown() && a.Ref == "":
				return // decided at apply time: not judged
			}
		}
	default:
		return
	}
	c.add(lint.RuleRedriveAllowForbidsSource, "sqs.redrivePolicy.deadLetterQueue", ra.Permission.Pos,
		"subscription %q: %s's redrive allow policy (%s) does not let %s use it as its dead-letter queue: SQS refuses the redrive policy of %s; add the source queue's ARN to sourceQueueArns or use allowAll",
		c.s.Name, d.Address, ra.Permission.V, c.r.Address, c.r.Address)
}

// retention reports a source retention shorter than the longest a
// message's budget can take (BudgetSpan) plus the dead-letter outage
// allowance.
func (c *infraCheck) retention() {
	if c.s.RequeueCount <= 0 {
		return
	}
	ret := c.r.MessageRetention
	var v time.Duration
	switch ret.State {
	case infra.Known:
		v = ret.V
	case infra.Unset:
		v = SQSDefaultRetention
		if c.r.Kind == infra.KindPubSubSubscription {
			v = PubSubDefaultRetention
		}
	default:
		return
	}
	span, sum, backoff := BudgetSpan(c.s, c.r)
	worst := span + lint.DeadLetterOutageAllowance
	if v >= worst {
		return
	}
	why, lower := "", "requeueCount or requeueDelay"
	if backoff > 0 {
		why = " (each redelivery waits requeueDelay, brighter's hold, and then the retry policy's back-off, which grows towards its maximum at a rate Pub/Sub does not document)"
		lower = "requeueCount, requeueDelay or the maximum back-off"
	}
	c.add(lint.RuleRetentionShorterThanBudget, pick(c.s, "requeueDelay", "requeueCount"), ret.Pos,
		"subscription %q: %s keeps a message %s, shorter than %s + %s for a dead-letter outage = %s%s: a message deferred to its budget can expire on the source before it is dead-lettered; raise the retention to at least %s or lower %s",
		c.s.Name, c.r.Address, config.FormatDuration(v), sum,
		config.FormatDuration(lint.DeadLetterOutageAllowance), config.FormatDuration(worst), why, config.FormatDuration(worst), lower)
}

// pick returns the first of fields the file set, else the first.
func pick(s *config.Subscription, fields ...string) string {
	for _, f := range fields {
		if s.Set(f) {
			return f
		}
	}
	return fields[0]
}

// ordering reports declared FIFO or message ordering that disagrees with
// the file.
func (c *infraCheck) ordering() {
	switch c.r.Kind {
	case infra.KindSQSQueue:
		want := c.s.SQS != nil && c.s.SQS.QueueType == config.QueueFIFO
		if c.r.FIFO.IsKnown() && c.r.FIFO.V != want || c.r.FIFO.State == infra.Unset && want {
			c.add(lint.RuleDeliveryOrderDrift, "sqs.queueType", c.r.FIFO.Pos,
				"subscription %q: %s has fifo_queue %v but the file's sqs.queueType is %s; make them agree",
				c.s.Name, c.r.Address, c.r.FIFO.V, map[bool]string{true: "fifo", false: "standard"}[want])
		}
	case infra.KindPubSubSubscription:
		want := c.s.GCP != nil && c.s.GCP.EnableMessageOrdering
		got := c.r.Ordering.V && c.r.Ordering.IsKnown()
		if c.r.Ordering.State != infra.Unknown && got != want {
			c.add(lint.RuleDeliveryOrderDrift, "gcp.enableMessageOrdering", c.r.Ordering.Pos,
				"subscription %q: %s has enable_message_ordering %v but the file's gcp.enableMessageOrdering is %v: the pump keeps a key's order only where the file asks for it; make them agree",
				c.s.Name, c.r.Address, got, want)
		}
	}
}

// rawDelivery reports an SNS subscription to a pubSub subscription's
// queue whose raw message delivery (false when unset) differs from
// sqs.rawMessageDelivery.
func (c *infraCheck) rawDelivery() {
	if c.r.Kind != infra.KindSQSQueue || c.s.SQS == nil || c.s.SQS.ChannelType != config.ChannelPubSub {
		return
	}
	want := c.s.SQS.RawMessageDelivery
	for _, sub := range c.set.SNSSubscriptionsTo(c.r) {
		raw := sub.RawMessageDelivery
		if raw.State == infra.Unknown || raw.V == want {
			continue
		}
		c.add(lint.RuleRawDeliveryDrift, "sqs.rawMessageDelivery", raw.Pos,
			"subscription %q: %s delivers to %s with raw_message_delivery %v but the file's sqs.rawMessageDelivery is %v: the consumer gets messages %s; set raw_message_delivery = %v",
			c.s.Name, sub.Address, c.r.Address, raw.V, want,
			map[bool]string{true: "wrapped in SNS envelopes", false: "without the SNS envelope it expects"}[want], want)
	}
}

// lease runs the lease rules against the declared lease where it is the
// one in force: an SQS queue's visibility timeout when the file's
// sqs.visibilityTimeout is 0 (the consumer uses the queue's own), a
// Pub/Sub pull subscription's ack deadline when it is shorter than the
// file's gcp.ackDeadline (the pump holds a message for the shorter of the
// two; the file's is applied only when brighter makes the subscription).
func (c *infraCheck) lease() {
	if c.tr == nil {
		return
	}
	var span lint.Span
	var at config.Position
	switch c.r.Kind {
	case infra.KindSQSQueue:
		if c.s.SQS == nil || c.s.SQS.VisibilityTimeout != 0 {
			return
		}
		v := c.r.VisibilityTimeout
		switch v.State {
		case infra.Unknown:
			return
		case infra.Unset:
			v.V = SQSDefaultVisibility
		}
		span, at = lint.Span{Value: v.V, Field: c.r.Address + ".visibility_timeout_seconds"}, v.Pos
	case infra.KindPubSubSubscription:
		if c.s.GCP == nil || c.s.GCP.Mode != config.GCPModePull {
			return
		}
		v := c.r.AckDeadline
		switch v.State {
		case infra.Unknown:
			return
		case infra.Unset:
			v.V = PubSubDefaultAckDeadline
		}
		if file, ok := c.tr.Lease(c.s); ok && v.V >= file.Value {
			// The pump holds a pulled message for the shorter of the two
			// (docs/adr/0005-leases.md): the file's, which its own rules
			// judged already.
			return
		}
		span, at = lint.Span{Value: v.V, Field: c.r.Address + ".ack_deadline_seconds"}, v.Pos
	default:
		return
	}
	for _, fd := range lint.LeaseFindings(c.tr, c.s, span) {
		c.out = append(c.out, lint.Relocate(fd, at))
	}
}
