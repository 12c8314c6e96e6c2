// Package rules holds each transport's answers to internal/lint's
// TransportRules questions: its native redelivery limit, whether a
// budget can run down on it, the lease a received message is held for,
// the longest requeue delay it honours, whether it delivers in order, and its
// own range checks. One small type per transport, no switch: a new transport
// adds a type and an entry in Default.
//
// The answers restate what each transport package does (internal/broker/sqs,
// gcp, rocketmq, memory, and their doc.go), from the subscriptions file
// alone, so that lint stays a pure function of the file; the broker limits
// come from internal/broker/limits.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: internal/broker/limits, internal/config, internal/lint
//
// Must not import: internal/broker/sqs/...,
// internal/broker/gcp/..., internal/broker/rocketmq/...,
// internal/broker/memory/...
package rules

import (
	"fmt"
	"time"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
)

// Default returns the rules of every transport brighter knows, keyed by
// transport, as lint.New takes them. Each call returns a fresh map.
func Default() map[config.Transport]lint.TransportRules {
	return map[config.Transport]lint.TransportRules{
		config.TransportSQS:      SQS{},
		config.TransportGCP:      GCP{},
		config.TransportRocketMQ: RocketMQ{},
		config.TransportMemory:   Memory{},
	}
}

// Service limits the rules check against (internal/broker/limits holds
// them all, per transport).
const (
	// SQSMaxVisibility is the longest SQS visibility timeout (43200 s), and
	// so the longest requeue delay (ChangeMessageVisibility).
	SQSMaxVisibility = limits.SQSMaxVisibility
	// GCPMinAckDeadline and GCPMaxAckDeadline bound a Pub/Sub ack deadline;
	// 0 means the service default, GCPMinAckDeadline.
	GCPMinAckDeadline = limits.PubSubMinAckDeadline
	GCPMaxAckDeadline = limits.PubSubMaxAckDeadline
	// GCPMaxBackoff is the longest back-off of a Pub/Sub retry policy, its
	// minimum or its maximum; it is also the maximum makeChannels: create
	// gives the policy when gcp.maxRequeueDelay is 0.
	GCPMaxBackoff = limits.PubSubMaxBackoff
	// GCPMinDeliveryAttempts and GCPMaxDeliveryAttempts bound a dead-letter
	// policy's maxDeliveryAttempts. A subscriptions file that leaves the key
	// out gets 10 and a file's 0 is stored as 5 (internal/config), so lint
	// never sees 0 from a file; a 0 in a Subscription built otherwise is
	// judged as GCPMinDeliveryAttempts, what Pub/Sub applies for 0 (the
	// channel maker, gcp.DeadLetterPolicy, would create such a policy with
	// its own default of 10).
	GCPMinDeliveryAttempts = 5
	GCPMaxDeliveryAttempts = 100
	// GCPDefaultMaxExtension is the stream client's default lease extension.
	GCPDefaultMaxExtension = 60 * time.Minute
	// RocketMQDefaultMaxDeliveryAttempts is a consumer group's default
	// maximum delivery attempts.
	RocketMQDefaultMaxDeliveryAttempts = 16
)

// SQS answers for SQS and SNS->SQS subscriptions: the native limit is
// redrivePolicy.maxReceiveCount; ApproximateReceiveCount comes with every
// receive, so a budget always runs down; the lease is visibilityTimeout.
type SQS struct{}

var _ lint.TransportRules = SQS{}

// NativeLimit returns sqs.redrivePolicy.maxReceiveCount when a redrive
// policy is configured.
func (SQS) NativeLimit(s *config.Subscription) (lint.Limit, bool) {
	if s.SQS == nil || s.SQS.RedrivePolicy == nil {
		return lint.Limit{}, false
	}
	return lint.Limit{Value: s.SQS.RedrivePolicy.MaxReceiveCount, Field: "sqs.redrivePolicy.maxReceiveCount"}, true
}

// BudgetCanRunDown is always true on SQS: the count is ApproximateReceiveCount
// (R-11 never trips).
func (SQS) BudgetCanRunDown(*config.Subscription) (bool, string, string) { return true, "", "" }

// Lease returns sqs.visibilityTimeout.
func (SQS) Lease(s *config.Subscription) (lint.Span, bool) {
	if s.SQS == nil {
		return lint.Span{}, false
	}
	return lint.Span{Value: s.SQS.VisibilityTimeout, Field: "sqs.visibilityTimeout"}, true
}

// PumpExtendsLease is true (ChangeMessageVisibilityBatch): with
// visibilityTimeout 0 the consumer reads the queue's own at start-up and
// extends leases of that length (lint cannot know it, so judges nothing
// against it): lint.LeaseExtender.
func (SQS) PumpExtendsLease(s *config.Subscription) bool { return s.SQS != nil }

// ReturnsAtOnce is true for a timeOut under 1s: SQS long-polls in whole
// seconds, so the receive is a short poll (lint.ShortPoller).
func (SQS) ReturnsAtOnce(s *config.Subscription) (bool, string) {
	if s.TimeOut >= time.Second {
		return false, ""
	}
	return true, "timeOut " + config.FormatDuration(s.TimeOut) + " is under SQS's 1s long-poll step, a short poll that returns at once"
}

// MaxHold is how long brighter can keep an SQS message from other
// consumers: SQS's 12 h ceiling on its visibility, counted from its
// receive (limits.SQS.MaxHold), less the minute short of it at which the
// pump stops extending (limits.CeilingMargin): lint.LeaseCeiling.
func (SQS) MaxHold(*config.Subscription) (lint.Span, bool) {
	return lint.Span{Value: limits.SQS.MaxHold - limits.CeilingMargin, Field: "SQS's 12h visibility ceiling less brighter's 1m margin"}, true
}

// MaxRequeueDelay is SQS's 12h visibility-timeout maximum.
func (SQS) MaxRequeueDelay(*config.Subscription) (lint.Span, bool) {
	return lint.Span{Value: SQSMaxVisibility, Field: "the SQS visibility-timeout maximum"}, true
}

// Ordered is false: on a FIFO queue SQS itself withholds a group's next
// message while one is in flight, so performers cannot reorder a group.
func (SQS) Ordered(*config.Subscription) (string, bool) { return "", false }

// Check reports a visibility timeout above 12h and a native dead-letter
// queue that is the subscription's own queue.
func (SQS) Check(s *config.Subscription) []lint.Finding {
	if s.SQS == nil {
		return nil
	}
	var out []lint.Finding
	if v := s.SQS.VisibilityTimeout; v > SQSMaxVisibility || v < 0 {
		out = append(out, lint.Finding{RuleID: lint.RuleSQSVisibilityTimeoutRange, Field: "sqs.visibilityTimeout",
			Message: fmt.Sprintf("subscription %q: sqs.visibilityTimeout %s is outside 0s..12h, which SQS refuses; use at most 12h", s.Name, config.FormatDuration(v))})
	}
	if rp := s.SQS.RedrivePolicy; rp != nil && rp.DeadLetterQueue != "" && lint.ChannelKey(s.Transport, rp.DeadLetterQueue) == lint.ChannelKey(s.Transport, s.ChannelName) {
		out = append(out, lint.Finding{RuleID: lint.RuleDeadLetterIsSource, Field: "sqs.redrivePolicy.deadLetterQueue",
			Message: fmt.Sprintf("subscription %q: sqs.redrivePolicy.deadLetterQueue %q is the subscription's own queue: redriven messages would come straight back; name a separate queue such as %q", s.Name, rp.DeadLetterQueue, s.ChannelName+"-native-dlq")})
	}
	if s.SQS.QueueType == config.QueueFIFO {
		out = append(out, orderingSpendsBudget(s, s.BufferSize, "sqs.queueType fifo", "a receive returns several messages of a message group, and ApproximateReceiveCount counts every receive")...)
	}
	return out
}

// orderingSpendsBudget reports lint.RuleOrderingSpendsBudget for an ordered
// channel s (ordered names the setting) that can hold atOnce messages of a
// key at once (more than 1) under an enforced budget; why says
// what makes a held-back delivery count.
//
// The pump holds back the messages of a key that arrived before an earlier
// one went back unsettled (internal/pump keyHolds): at most the atOnce - 1
// received with it, so one deferral costs at most atOnce - 1 messages one
// delivery each, and a message is charged once for every deferral of an
// earlier message of its key received with it.
func orderingSpendsBudget(s *config.Subscription, atOnce int, ordered, why string) []lint.Finding {
	if atOnce <= 1 || s.RequeueCount == -1 {
		return nil
	}
	behind := atOnce - 1
	later := "later messages"
	if behind == 1 {
		later = "later message"
	}
	times := fmt.Sprintf("%d times", s.RequeueCount)
	if s.RequeueCount <= 1 {
		times = "once" // 0 and below -1 behave as 1 (budget-zero)
	}
	return []lint.Finding{{RuleID: lint.RuleOrderingSpendsBudget, Field: "bufferSize",
		Message: fmt.Sprintf("subscription %q: %s with %d messages received at once and requeueCount %d: %s, so the later messages of a key, released unhandled behind a deferred one to keep its order, spend a delivery each time: one deferral costs up to %d %s of its key a delivery each, and a message behind one deferred %s reaches requeueCount without being handled; use bufferSize: 1 (and noOfPerformers: 1 on a stream) to keep order without spending their budget",
			s.Name, ordered, atOnce, s.RequeueCount, why, behind, later, times)}}
}

// GCP answers for Pub/Sub subscriptions: the native limit is
// deadLetterPolicy.maxDeliveryAttempts; without a dead-letter policy Pub/Sub
// does not fill delivery_attempt, so a budget cannot run down;
// the lease is ackDeadline (pull) or maxExtension (stream, whose client
// extends the deadline).
type GCP struct{}

var _ lint.TransportRules = GCP{}

// NativeLimit returns gcp.deadLetterPolicy.maxDeliveryAttempts (0 is the
// service default of 5) when a dead-letter policy is configured.
func (GCP) NativeLimit(s *config.Subscription) (lint.Limit, bool) {
	if s.GCP == nil || s.GCP.DeadLetterPolicy == nil {
		return lint.Limit{}, false
	}
	m := s.GCP.DeadLetterPolicy.MaxDeliveryAttempts
	if m == 0 {
		m = GCPMinDeliveryAttempts
	}
	return lint.Limit{Value: m, Field: "gcp.deadLetterPolicy.maxDeliveryAttempts"}, true
}

// GCPNoDeadLetterPolicy is why a budget cannot run down on a Pub/Sub
// subscription without a dead-letter policy.
const GCPNoDeadLetterPolicy = "Pub/Sub fills delivery_attempt only on a subscription with a dead-letter policy and this one has no gcp.deadLetterPolicy, so the delivery count never advances"

// BudgetCanRunDown is false when the subscription has no dead-letter policy
//
func (GCP) BudgetCanRunDown(s *config.Subscription) (bool, string, string) {
	if s.GCP != nil && s.GCP.DeadLetterPolicy != nil {
		return true, "", ""
	}
	return false, GCPNoDeadLetterPolicy,
		fmt.Sprintf("add gcp.deadLetterPolicy with maxDeliveryAttempts of at least %d, or set requeueCount: -1", max(s.RequeueCount+1, GCPMinDeliveryAttempts))
}

// Lease returns gcp.ackDeadline for pull (0 is 10s) and gcp.maxExtension for
// stream (0 is 60m).
func (GCP) Lease(s *config.Subscription) (lint.Span, bool) {
	if s.GCP == nil {
		return lint.Span{}, false
	}
	if s.GCP.Mode == config.GCPModeStream {
		v := s.GCP.MaxExtension
		if v == 0 {
			v = GCPDefaultMaxExtension
		}
		return lint.Span{Value: v, Field: "gcp.maxExtension"}, true
	}
	v := s.GCP.AckDeadline
	if v == 0 {
		v = GCPMinAckDeadline
	}
	return lint.Span{Value: v, Field: "gcp.ackDeadline"}, true
}

// PumpExtendsLease is true for pull (ModifyAckDeadline); a stream's client
// extends leases itself up to gcp.maxExtension: lint.LeaseExtender.
func (GCP) PumpExtendsLease(s *config.Subscription) bool {
	return s.GCP != nil && s.GCP.Mode == config.GCPModePull
}

// MaxRequeueDelay is 600s, the longest ModifyAckDeadline and hold, past
// which a delay is cut, when brighter makes no retry policy (makeChannels
// validate or assume). Under makeChannels create it answers ok false: a
// requeueDelay is then also the minimum back-off of the retry policy
// create gives the subscription, which Pub/Sub refuses past 600s, so a
// longer one stops consume rather than being cut, and Check reports it
// (gcp-retry-policy-range, an Error).
func (GCP) MaxRequeueDelay(s *config.Subscription) (lint.Span, bool) {
	if gcpCreates(s) {
		return lint.Span{}, false
	}
	return lint.Span{Value: GCPMaxAckDeadline, Field: "the Pub/Sub ack-deadline maximum"}, true
}

// gcpCreates reports whether consume creates or updates s's subscription
// (makeChannels create, the default).
func gcpCreates(s *config.Subscription) bool {
	return s.MakeChannels == "" || s.MakeChannels == config.MakeChannelsCreate
}

// retryPolicy returns the findings of gcp-retry-policy-range: under
// makeChannels create with a requeueDelay above 0, consume gives the
// subscription a retry policy of minimum back-off requeueDelay and maximum
// gcp.maxRequeueDelay (GCPMaxBackoff when 0), and Pub/Sub refuses, and
// consume cannot start, when either is above GCPMaxBackoff or the minimum is
// above the maximum.
func retryPolicy(s *config.Subscription) []lint.Finding {
	if !gcpCreates(s) || s.RequeueDelay <= 0 {
		return nil
	}
	const consequence = "Pub/Sub refuses that retry policy, so consume cannot create or update the subscription"
	d := config.FormatDuration
	var out []lint.Finding
	maxB := s.GCP.MaxRequeueDelay
	if maxB > GCPMaxBackoff {
		out = append(out, lint.Finding{RuleID: lint.RuleGCPRetryPolicyRange, Field: "gcp.maxRequeueDelay",
			Message: fmt.Sprintf("subscription %q: gcp.maxRequeueDelay %s is the maximum back-off of the retry policy makeChannels: create gives the subscription, and Pub/Sub takes at most %s: %s; use a gcp.maxRequeueDelay of at most %s",
				s.Name, d(maxB), d(GCPMaxBackoff), consequence, d(GCPMaxBackoff))})
	}
	if maxB <= 0 {
		maxB = GCPMaxBackoff
	}
	switch {
	case s.RequeueDelay > GCPMaxBackoff:
		out = append(out, lint.Finding{RuleID: lint.RuleGCPRetryPolicyRange, Field: "requeueDelay",
			Message: fmt.Sprintf("subscription %q: requeueDelay %s is the minimum back-off of the retry policy makeChannels: create gives the subscription, and Pub/Sub takes at most %s: %s; use a requeueDelay of at most %s, or makeChannels: validate with a subscription made elsewhere (brighter then holds a deferred message for at most %s)",
				s.Name, d(s.RequeueDelay), d(GCPMaxBackoff), consequence, d(min(maxB, GCPMaxBackoff)), d(GCPMaxAckDeadline))})
	case s.RequeueDelay > maxB:
		out = append(out, lint.Finding{RuleID: lint.RuleGCPRetryPolicyRange, Field: "requeueDelay",
			Message: fmt.Sprintf("subscription %q: requeueDelay %s is above gcp.maxRequeueDelay %s: the retry policy makeChannels: create gives the subscription would have a minimum back-off (requeueDelay) above its maximum (gcp.maxRequeueDelay): %s; use a requeueDelay of at most %s, or raise gcp.maxRequeueDelay to at least %s",
				s.Name, d(s.RequeueDelay), d(maxB), consequence, d(maxB), d(s.RequeueDelay))})
	}
	return out
}

// Ordered reports gcp.enableMessageOrdering.
func (GCP) Ordered(s *config.Subscription) (string, bool) {
	if s.GCP != nil && s.GCP.EnableMessageOrdering {
		return "gcp.enableMessageOrdering", true
	}
	return "", false
}

// Check reports maxDeliveryAttempts outside 5..100, ack deadlines outside
// 10s..600s, a dead-letter policy topic that is the subscription's own
// topic, and a retry policy makeChannels: create would give the
// subscription that Pub/Sub refuses (retryPolicy).
func (GCP) Check(s *config.Subscription) []lint.Finding {
	if s.GCP == nil {
		return nil
	}
	out := retryPolicy(s)
	ack := func(field string, v time.Duration) {
		if v != 0 && (v < GCPMinAckDeadline || v > GCPMaxAckDeadline) {
			out = append(out, lint.Finding{RuleID: lint.RuleGCPAckDeadlineRange, Field: field,
				Message: fmt.Sprintf("subscription %q: %s %s is outside 10s..600s, which Pub/Sub refuses; use 10s to 600s", s.Name, field, config.FormatDuration(v))})
		}
	}
	ack("gcp.ackDeadline", s.GCP.AckDeadline)
	// A stream consumer's Close keeps only the holds that end within
	// PubSubStreamHoldAcrossStop of the stop; longer deferrals come back at
	// once (internal/broker/gcp's StreamConsumer.Close).
	if s.GCP.Mode != config.GCPModePull && s.RequeueDelay > limits.PubSubStreamHoldAcrossStop {
		hold := config.FormatDuration(limits.PubSubStreamHoldAcrossStop)
		out = append(out, lint.Finding{RuleID: lint.RuleRequeueDelayLostAtStop, Field: "requeueDelay",
			Message: fmt.Sprintf("subscription %q: gcp.mode stream with requeueDelay %s, longer than the %s a stream consumer keeps a deferred message away across a stop: at every stop (a rolling deploy, a scale-down) such deferrals are Nacked at once and delivered again early, each spending a delivery the budget counts; use gcp.mode: pull (the broker keeps the delay across stops) or a requeueDelay of at most %s",
				s.Name, config.FormatDuration(s.RequeueDelay), hold, hold)})
	}
	if p := s.GCP.DeadLetterPolicy; p != nil {
		if m := p.MaxDeliveryAttempts; m != 0 && (m < GCPMinDeliveryAttempts || m > GCPMaxDeliveryAttempts) {
			out = append(out, lint.Finding{RuleID: lint.RuleGCPMaxDeliveryAttempts, Field: "gcp.deadLetterPolicy.maxDeliveryAttempts",
				Message: fmt.Sprintf("subscription %q: gcp.deadLetterPolicy.maxDeliveryAttempts %d is outside 5..100, which Pub/Sub refuses; use 5 to 100", s.Name, m)})
		}
		ack("gcp.deadLetterPolicy.ackDeadline", p.AckDeadline)
		if p.Topic != "" && p.Topic == s.RoutingKey {
			out = append(out, lint.Finding{RuleID: lint.RuleDeadLetterIsSource, Field: "gcp.deadLetterPolicy.topic",
				Message: fmt.Sprintf("subscription %q: gcp.deadLetterPolicy.topic %q is the subscription's own topic: dead-lettered messages would come straight back; name a separate topic such as %q", s.Name, p.Topic, s.RoutingKey+"-native-dlq")})
		}
	}
	if s.GCP.EnableMessageOrdering {
		// A pull asks for bufferSize; a stream holds bufferSize x
		// noOfPerformers outstanding messages.
		at := s.BufferSize
		if s.GCP.Mode != config.GCPModePull {
			at *= max(s.NoOfPerformers, 1)
		}
		out = append(out, orderingSpendsBudget(s, at, "gcp.enableMessageOrdering", "Pub/Sub delivers several messages of an ordering key at once and counts every delivery in delivery_attempt")...)
	}
	return out
}

// RocketMQ answers for RocketMQ 5 subscriptions: the native limit is the
// consumer group's maxDeliveryAttempts (default 16); DeliveryAttempt advances
// on every redelivery, so a budget runs down; the lease is invisibleDuration.
type RocketMQ struct{}

var _ lint.TransportRules = RocketMQ{}

// NativeLimit returns rocketmq.maxDeliveryAttempts (0 is the default 16).
func (RocketMQ) NativeLimit(s *config.Subscription) (lint.Limit, bool) {
	if s.RocketMQ == nil {
		return lint.Limit{}, false
	}
	m := s.RocketMQ.MaxDeliveryAttempts
	if m == 0 {
		m = RocketMQDefaultMaxDeliveryAttempts
	}
	return lint.Limit{Value: m, Field: "rocketmq.maxDeliveryAttempts"}, true
}

// BudgetCanRunDown is always true: MessageView.DeliveryAttempt advances on
// every redelivery (R-14's condition).
func (RocketMQ) BudgetCanRunDown(*config.Subscription) (bool, string, string) { return true, "", "" }

// Lease returns rocketmq.invisibleDuration.
func (RocketMQ) Lease(s *config.Subscription) (lint.Span, bool) {
	if s.RocketMQ == nil {
		return lint.Span{}, false
	}
	return lint.Span{Value: s.RocketMQ.InvisibleDuration, Field: "rocketmq.invisibleDuration"}, true
}

// PumpExtendsLease is always true (ChangeInvisibleDuration):
// lint.LeaseExtender.
func (RocketMQ) PumpExtendsLease(*config.Subscription) bool { return true }

// MaxRequeueDelay: no maximum is checked for RocketMQ.
func (RocketMQ) MaxRequeueDelay(*config.Subscription) (lint.Span, bool) { return lint.Span{}, false }

// Ordered is false: the file has no ordering setting for RocketMQ.
func (RocketMQ) Ordered(*config.Subscription) (string, bool) { return "", false }

// Check reports an invisibleDuration outside the proxy's default bounds,
// 10s..12h (limits.RocketMQ).
func (RocketMQ) Check(s *config.Subscription) []lint.Finding {
	if s.RocketMQ == nil {
		return nil
	}
	if v := s.RocketMQ.InvisibleDuration; v < limits.RocketMQ.MinLease || v > limits.RocketMQ.MaxLease {
		return []lint.Finding{{RuleID: lint.RuleRocketMQInvisibleDuration, Field: "rocketmq.invisibleDuration",
			Message: fmt.Sprintf("subscription %q: rocketmq.invisibleDuration %s is outside %s..%s, which a RocketMQ proxy with default settings refuses on every receive; use %s to %s", s.Name, config.FormatDuration(v),
				config.FormatDuration(limits.RocketMQ.MinLease), config.FormatDuration(limits.RocketMQ.MaxLease), config.FormatDuration(limits.RocketMQ.MinLease), config.FormatDuration(limits.RocketMQ.MaxLease))}}
	}
	return nil
}

// Memory answers for the in-memory transport: no native limit, the count
// always advances, the lease is memory.visibilityTimeout.
type Memory struct{}

var _ lint.TransportRules = Memory{}

// NativeLimit: the file configures no native redrive for memory.
func (Memory) NativeLimit(*config.Subscription) (lint.Limit, bool) { return lint.Limit{}, false }

// BudgetCanRunDown is always true: the memory broker counts every delivery.
func (Memory) BudgetCanRunDown(*config.Subscription) (bool, string, string) { return true, "", "" }

// PumpExtendsLease is true with a visibilityTimeout above 0:
// lint.LeaseExtender.
func (Memory) PumpExtendsLease(s *config.Subscription) bool {
	return s.Memory != nil && s.Memory.VisibilityTimeout > 0
}

// Lease returns memory.visibilityTimeout.
func (Memory) Lease(s *config.Subscription) (lint.Span, bool) {
	if s.Memory == nil {
		return lint.Span{}, false
	}
	return lint.Span{Value: s.Memory.VisibilityTimeout, Field: "memory.visibilityTimeout"}, true
}

// MaxRequeueDelay: the memory transport has no maximum.
func (Memory) MaxRequeueDelay(*config.Subscription) (lint.Span, bool) { return lint.Span{}, false }

// Ordered is false: the memory transport makes no ordering promise.
func (Memory) Ordered(*config.Subscription) (string, bool) { return "", false }

// Check has no memory-specific rule.
func (Memory) Check(*config.Subscription) []lint.Finding { return nil }
