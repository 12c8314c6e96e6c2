package lint

import (
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a finding. The zero value is SeverityNote; a higher value is
// more severe, so "at or above --fail-on" is a plain comparison.
type Severity int

// The severities, in increasing order. Their names are SARIF's result levels.
const (
	// SeverityNote is advice; it never fails a build unless asked.
	SeverityNote Severity = iota
	// SeverityWarning is a legal setting that probably does not do what its
	// author meant (R-7, R-10, R-11 are Warnings, R-25).
	SeverityWarning
	// SeverityError is a setting the broker or brighter refuses, or one
	// that loses or loops messages.
	SeverityError
)

var severityNames = [...]string{"note", "warning", "error"}

// String returns "note", "warning" or "error".
func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the severity's name, so JSON shows "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSeverity reads "note", "warning" or "error" (case-insensitive; "info"
// is accepted for note and "warn" for warning). The error lists the valid
// names.
func ParseSeverity(name string) (Severity, error) {
	switch strings.ToLower(name) {
	case "note", "info":
		return SeverityNote, nil
	case "warning", "warn":
		return SeverityWarning, nil
	case "error":
		return SeverityError, nil
	}
	return 0, fmt.Errorf("unknown severity %q; valid values are note, warning, error", name)
}

// Rule is one check: a stable id (used in output, SARIF ruleId and
// `--explain`), the requirement it implements if any, its default severity,
// a one-line summary and a longer explanation.
type Rule struct {
	// ID is stable across releases: kebab-case, e.g. "budget-zero".
	ID string
	// Requirement is the requirement number the rule implements ("R-7"),
	// or "" for an operator rule with none.
	Requirement string
	// Severity is the rule's default severity. A finding that comes from a
	// file the parser refuses is always an Error, whatever the rule says.
	Severity Severity
	// Summary is one line, for SARIF shortDescription and listings.
	Summary string
	// Explanation is the text `brighter lint --explain ID` prints: why it
	// matters, what the broker does, and how to fix it.
	Explanation string
}

// The rule ids. They are part of brighter's interface: CI configurations
// and SARIF baselines refer to them, so they are never renamed.
const (
	RuleConfigInvalid          = "config-invalid"
	RuleBudgetZero             = "budget-zero"
	RuleBudgetOutranked        = "budget-outranked"
	RuleBudgetCannotRunDown    = "budget-cannot-run-down"
	RuleBudgetNoDeadLetter     = "budget-no-dead-letter"
	RuleDeadLetterIsSource     = "dead-letter-is-source"
	RuleBufferSizeRange        = "buffer-size-range"
	RuleGCPMaxDeliveryAttempts = "gcp-max-delivery-attempts-range"
	RuleGCPAckDeadlineRange    = "gcp-ack-deadline-range"
	// RuleGCPRetryPolicyRange is a retry policy makeChannels: create would
	// give a Pub/Sub subscription that Pub/Sub refuses (a back-off above
	// 600s, or a minimum above the maximum), so consume cannot start.
	RuleGCPRetryPolicyRange        = "gcp-retry-policy-range"
	RuleSQSVisibilityTimeoutRange  = "sqs-visibility-timeout-range"
	RuleHandlerTimeoutExceedsLease = "handler-timeout-exceeds-lease"
	RuleLeaseExtensionPastCeiling  = "lease-extension-past-ceiling"
	RuleRocketMQInvisibleDuration  = "rocketmq-invisible-duration-range"
	RuleBufferedWaitExceedsLease   = "buffered-wait-exceeds-lease"
	RuleRequeueDelayExceedsLimit   = "requeue-delay-exceeds-limit"
	// RuleRequeueDelayRange is a requeueDelay the parser refuses (and
	// consume with it): negative, or above SQS's 12h.
	RuleRequeueDelayRange = "requeue-delay-range"
	// RuleHandlerCommandNotFound and RuleMemorySeedInvalid are judged on
	// the local file system (internal/lint/local): what consume refuses to
	// start with.
	RuleHandlerCommandNotFound = "handler-command-not-found"
	RuleMemorySeedInvalid      = "memory-seed-invalid"
	// RuleMemoryOutputUnwritable is judged on the local file system too:
	// a memory transport's output file consume could not write.
	RuleMemoryOutputUnwritable = "memory-output-unwritable"
	// RuleHandlerTLSUnreadable is judged on the local file system too: an
	// http handler's tls files consume could not load.
	RuleHandlerTLSUnreadable    = "handler-tls-unreadable"
	RuleOrderingWithPerformers  = "ordering-with-performers"
	RuleDrainShorterThanHandler = "drain-shorter-than-handler"
	RuleEmptyChannelBusyPoll    = "empty-channel-busy-poll"
	RuleNativeLimitDrift        = "native-limit-drift"
	RuleLiveCheckFailed         = "live-check-failed"
	// RuleMissingDestination is a --live rule: a channel the
	// subscription names is missing on the broker.
	RuleMissingDestination     = "missing-destination"
	RuleDestinationMessageSize = "destination-message-size"
	RuleRoutingNoNativeLimit   = "routing-no-native-limit"
	// RuleConsumesRejectionDestination is a cross-subscription rule
	// (docs/adr/0001-delivery-count-contract.md §9.2): a subscription reads another's rejection destination.
	RuleConsumesRejectionDestination = "consumes-rejection-destination"
	// RuleRejectionCycle is a cross-subscription rule (cycles.go): the
	// rejection destinations of a file's subscriptions form a cycle.
	RuleRejectionCycle = "rejection-cycle"
	// RuleUnboundedRedelivery is requeueCount -1 with no native limit and
	// a handler that can defer: a poison message loops for ever.
	RuleUnboundedRedelivery = "unbounded-redelivery"
	// RuleUnacceptableDiscarded is a subscription with neither an
	// invalid-message nor a dead-letter destination: an
	// unacceptable message is acknowledged and discarded.
	RuleUnacceptableDiscarded = "unacceptable-discarded"
)

// RuleOrderingSpendsBudget is the rule of ordered channels under deferral
// (docs/adr/0006-ordered-channels-under-deferral.md): an ordered channel that
// receives several messages at once keeps a key's order only by releasing
// later messages unhandled, which spends their budget.
const RuleOrderingSpendsBudget = "ordering-spends-budget"

// RuleRestartsSpendBudget is the rule of deliveries that stops and kills of
// the consumer waste: a message waiting in the pump's buffer goes back to
// the broker unhandled, and the broker counts that delivery against its
// budget.
const RuleRestartsSpendBudget = "restarts-spend-budget"

// catalogue is every rule, in the order listings show them: the rules of
// the subscriptions file, then those that read the brokers or the
// infrastructure files (rule_broker.go).
var catalogue = slices.Concat(fileRules, brokerRules)

// fileRules are the rules judged on the subscriptions file alone.
var fileRules = []Rule{
	{
		ID: RuleConfigInvalid, Severity: SeverityError,
		Summary: "the subscriptions file is not valid",
		Explanation: `The subscriptions file could not be read as a valid brighter.yaml: a YAML
syntax error, an unknown field, a wrong type, a missing required field or a
value out of range. Each problem is reported at its line and column with the
valid names or values. brighter consume refuses to start on such a file
(exit 2) before any broker call.

Fix: correct the field the finding points at; examples/ holds a valid file
for every transport.`,
	},
	{
		ID: RuleBudgetZero, Requirement: "R-7", Severity: SeverityWarning,
		Summary: "requeueCount 0 or below -1 rejects every message on its first deferral",
		Explanation: `requeueCount is the redelivery budget. -1 disables it; any other value
enables it, and a deferred message is rejected (DeliveryError) once its
delivery count reaches the budget. A budget of 0, or any value below -1 such
as -3, is reached by the very first deferral (1 >= 0, 1 >= -3), so it
behaves exactly like 1: the message is never requeued.

That is far more likely a mistake than an intent, so lint reports it as a
Warning. It never blocks a build or start-up unless you ask for it
(--fail-on warning).

Fix: use -1 for no budget (unlimited redelivery) or 1 to reject on the first
deferral deliberately.`,
	},
	{
		ID: RuleBudgetOutranked, Requirement: "R-10", Severity: SeverityWarning,
		Summary: "requeueCount is at or above the native redrive limit, which fires first",
		Explanation: `The broker has its own redelivery limit (SQS redrivePolicy.maxReceiveCount,
Pub/Sub deadLetterPolicy.maxDeliveryAttempts, RocketMQ's consumer-group
maxDeliveryAttempts). When requeueCount R is not -1 and R >= that limit M,
brighter's budget cannot be relied on to fire first: the broker moves its
stored copy to its own dead-letter destination, without brighter's rejection
metadata, on delivery M. The effective limit is M. At R == M which one fires
is not determined.

Fix: set requeueCount below the native limit (R < M), so brighter rejects
with metadata and the native limit stays a backstop; or raise the native
limit above requeueCount.`,
	},
	{
		ID: RuleBudgetCannotRunDown, Requirement: "R-11", Severity: SeverityWarning,
		Summary: "requeueCount is set on a subscription whose delivery count cannot advance",
		Explanation: `A budget runs down only if the delivery count a consumer presents advances on
each redelivery. On some subscription shapes the transport cannot make
it advance, and the budget is inert: a poison message is redelivered for
ever (or until a native limit acts). The transport says why in the finding.
Today: a Pub/Sub subscription without a deadLetterPolicy, because Pub/Sub
fills delivery_attempt only on subscriptions that have one. With --live,
lint also reports a file that sets gcp.deadLetterPolicy for a subscription
that has none on the broker (made or changed elsewhere, with makeChannels
validate or assume): the counter is missing there all the same.

brighter consume also logs this finding once when it opens the channel,
never per message.

Fix: give the subscription what the transport needs (for Pub/Sub a
gcp.deadLetterPolicy with maxDeliveryAttempts above requeueCount), or set
requeueCount: -1 to state that there is no budget.`,
	},
	{
		ID: RuleRoutingNoNativeLimit, Requirement: "R-19", Severity: SeverityWarning,
		Summary: "rejections are routed but no native redrive limit backs up a routing that keeps failing",
		Explanation: `When the publish of a rejected message to its dead-letter or invalid-message
destination fails, the message is not acknowledged: it is released and
redelivered, with a delay that grows with its delivery count up to 10
minutes. A routing that can never succeed (a copy over the broker's size
limit, a destination name the broker refuses) is released with that longest
delay at once. Either way only the broker's own redrive limit ends the loop:
SQS redrivePolicy.maxReceiveCount, Pub/Sub deadLetterPolicy
.maxDeliveryAttempts, RocketMQ's consumer-group maxDeliveryAttempts. Without
one such a message comes back every 10 minutes for ever, logged at Error
each time (brighter_routing_failures_total,
brighter_routing_permanent_failures_total).

Fix: give the subscription a native redrive limit above requeueCount, so the
broker's dead-letter destination is the backstop.`,
	},
	{
		ID: RuleBudgetNoDeadLetter, Requirement: "R-17", Severity: SeverityWarning,
		Summary: "a budget is set but deadLetterRoutingKey is not: exhausted messages are discarded",
		Explanation: `When a message exhausts its budget the pump rejects it with DeliveryError,
and a rejection is routed to deadLetterRoutingKey. With no destination the
message is acknowledged and discarded; only a Warning log line records it.
That is rarely what a budget was set for.

Fix: set deadLetterRoutingKey to a queue or topic that keeps rejected
messages (brighter dlq peek / replay read it), or set requeueCount: -1 if
the broker's own redrive should handle poison messages.`,
	},
	{
		ID: RuleUnacceptableDiscarded, Requirement: "R-17", Severity: SeverityNote,
		Summary: "no invalid-message or dead-letter destination: unacceptable messages are acknowledged and discarded",
		Explanation: `An unacceptable message (one brighter cannot decode, or one the handler marks
unacceptable: the builtin unacceptable, an exec handler's exit 65) is
rejected at once, whatever the budget, and routed to invalidMessageRoutingKey,
falling back to deadLetterRoutingKey. With neither set it is acknowledged
and discarded (R-17): only a Warning log line with its id and reason
records it, and the message itself is gone.

It is a Note: a subscription that means to drop what it cannot read may
leave both unset. Not on the memory transport, whose messages end with the
process.

Fix: set invalidMessageRoutingKey (or deadLetterRoutingKey) to a queue or
topic that keeps such messages, where brighter dlq peek and replay read them.`,
	},
	{
		ID: RuleUnboundedRedelivery, Requirement: "R-6", Severity: SeverityWarning,
		Summary: "no budget and no native redelivery limit: a message the handler keeps deferring loops for ever",
		Explanation: `requeueCount -1 turns the budget off (R-6): the pump never rejects a
deferred message, however often it has come back. When the broker has no
limit of its own either (SQS sqs.redrivePolicy.maxReceiveCount, Pub/Sub
gcp.deadLetterPolicy.maxDeliveryAttempts, RocketMQ
rocketmq.maxDeliveryAttempts), nothing ends a poison message: it is
redelivered every requeueDelay (at once with 0s) for as long as consume
runs, costing a receive and a handler run each time, and is never
dead-lettered. Reported for handlers that can defer (exec, http, the
builtins defer and fail, a script), not for the builtins log, ack, reject
and unacceptable. Not on the memory transport, whose messages end with
the process.

Fix: set requeueCount (say 3) with a deadLetterRoutingKey, so the pump
dead-letters a message that exhausts it; or give the channel a native
limit, so the broker moves it.`,
	},
	{
		ID: RuleDeadLetterIsSource, Severity: SeverityError,
		Summary: "a dead-letter or invalid-message destination is the subscription's own source",
		Explanation: `deadLetterRoutingKey, invalidMessageRoutingKey (and the native
sqs.redrivePolicy.deadLetterQueue or gcp.deadLetterPolicy.topic) must name a
different queue or topic from the one the subscription reads, as the
transport resolves names: SQS turns '.' into '_', so channelName "lo.op"
and deadLetterRoutingKey "lo_op" are one queue. Routing a
rejected message back to its source puts it straight back in front of the
same handler: a rejected poison message loops for ever, and each loop adds a
routed copy.

Fix: name a separate destination, e.g. "<name>-dlq" and "<name>-invalid".`,
	},
	{
		ID: RuleRejectionCycle, Severity: SeverityError,
		Summary: "the rejection destinations of two or more subscriptions form a cycle",
		Explanation: `A subscription routes the messages it rejects to its deadLetterRoutingKey or
invalidMessageRoutingKey (and the broker moves them to sqs.redrivePolicy
.deadLetterQueue or gcp.deadLetterPolicy.topic). When that destination is
what another subscription of the file reads, and that one's destinations
lead on, subscription by subscription, back to the first (qa dead-letters
to qb, qb to qa; or a -> b -> c -> a, through any of those fields), a
poison message never comes to rest: each rejection publishes a new copy to
the next queue, whose handler rejects it again. A budget does not help (a
routed copy is judged on its own channel's deliveries, ADR 0001 §9), nor
does a native redrive limit (every copy is a new message). Names are
compared as the transport resolves them: SQS turns '.' into '_', so
"lo.op" and "lo_op" are one queue. Only subscriptions of one transport
are compared.

The finding names every subscription on the shortest cycle through the
subscription and the destination of each step. brighter consume refuses
to start a file with such a cycle (exit 2). A cycle across files or
processes, which lint cannot see, is stopped at run time: a message a
rejection has already routed to a destination is not routed there again
but released on its queue with the longest delay and logged at Error
("rejection would route the message round a cycle", docs/adr/0004
decision 12), after one round.

Fix: give one subscription of the cycle a dead-letter destination that no
subscription of the cycle reads, e.g. "<name>-dlq".`,
	},
	{
		ID: RuleConsumesRejectionDestination, Requirement: "R-28", Severity: SeverityNote,
		Summary: "a subscription reads another subscription's dead-letter or invalid-message destination",
		Explanation: `A subscription whose channel is another subscription's deadLetterRoutingKey or
invalidMessageRoutingKey (a "DLQ processor") receives routed copies. Each
copy carries the rejection metadata and presents the count the rejecting
subscription stamped, however often it is read (R-28), so that operators
see the source's evidence. Its own requeueCount is judged on the broker's
delivery attempts on this channel instead: a deferring handler with
requeueCount 3 is invoked at most 3 times per copy, and the copy is then
routed by this subscription's own deadLetterRoutingKey (docs/adr/0001 §9).
With requeueCount -1 it is redelivered for ever. Copies moved by the
broker's own redrive (sqs.redrivePolicy, gcp.deadLetterPolicy) carry no
metadata and present the source's stamped count plus this queue's counter.

The finding names the pair and says how the budget behaves; it is a Note.

Fix: nothing, if this is the DLQ processor you meant; give it a
deadLetterRoutingKey of its own so copies it gives up on are kept.`,
	},
	{
		ID: RuleBufferSizeRange, Severity: SeverityError,
		Summary: "bufferSize is outside 1..10",
		Explanation: `bufferSize is how many messages one receive may return. Every transport
takes 1..10 (SQS's MaxNumberOfMessages is at most 10; brighter applies the
same bound everywhere so that a file means the same on every broker).

Fix: use a value from 1 to 10; raise noOfPerformers for more concurrency.`,
	},
	{
		ID: RuleGCPMaxDeliveryAttempts, Severity: SeverityError,
		Summary: "gcp.deadLetterPolicy.maxDeliveryAttempts is outside 5..100",
		Explanation: `Pub/Sub accepts a dead-letter policy's maxDeliveryAttempts from 5 to 100; 0
means the service default of 5. Any other value is refused when the
subscription is created or updated.

Fix: use a value from 5 to 100, above requeueCount so that brighter's budget
fires first (see budget-outranked).`,
	},
	{
		ID: RuleGCPAckDeadlineRange, Severity: SeverityError,
		Summary: "a Pub/Sub ack deadline is outside 10s..600s",
		Explanation: `Pub/Sub accepts an ack deadline from 10 to 600 seconds (0 means the service
default of 10 s). gcp.ackDeadline is the subscription's deadline and
gcp.deadLetterPolicy.ackDeadline that of the dead-letter subscription; a
value outside the range is refused when the subscription is created.

Fix: use a value from 10s to 600s, longer than the handler usually takes.`,
	},
	{
		ID: RuleSQSVisibilityTimeoutRange, Severity: SeverityError,
		Summary: "sqs.visibilityTimeout is above 12h",
		Explanation: `SQS accepts a visibility timeout from 0 to 43200 seconds (12 hours); a
queue cannot be created or changed with more.

Fix: use at most 12h.`,
	},
	{
		ID: RuleRocketMQInvisibleDuration, Severity: SeverityWarning,
		Summary: "rocketmq.invisibleDuration is outside 10s..12h",
		Explanation: `A RocketMQ 5 proxy refuses a receive whose invisible duration is under
minInvisibleTimeMillsForRecv (10s by default) and any invisible duration
over maxInvisibleTimeMills (12h): every receive of the subscription would
fail. A proxy configured with other bounds may accept it (hence a Warning;
brighter's test broker checks neither).

Fix: use a value from 10s to 12h.`,
	},
	{
		ID: RuleHandlerTimeoutExceedsLease, Severity: SeverityWarning,
		Summary: "handler.timeout is longer than the lease the broker grants a received message",
		Explanation: `A received message is hidden from other consumers for a lease: SQS's
visibility timeout, Pub/Sub's ack deadline (pull) or maximum lease extension
(stream), RocketMQ's invisible duration, the memory transport's visibility
timeout. If the handler may run longer than that (handler.timeout of an exec
or http handler), the broker delivers the message again while the first
delivery is still being handled: it is handled twice, concurrently, and its
delivery count advances without a deferral.

Brighter extends the lease of every message it holds (SQS with a
visibilityTimeout, Pub/Sub pull, RocketMQ, memory) up to maxLeaseExtension
past the first lease, so there the rule fires only for a handler.timeout
longer than the lease plus maxLeaseExtension, or when maxLeaseExtension is 0.
On SQS no extension passes 12 hours from the receive, so a handler.timeout
longer than 12h always fires it, and raising maxLeaseExtension cannot help.

Fix: raise maxLeaseExtension (or leave it at its 1h default; on SQS up to
12h less the visibility timeout), make the lease longer than
handler.timeout, or shorten handler.timeout.`,
	},
	{
		ID: RuleLeaseExtensionPastCeiling, Severity: SeverityWarning,
		Summary: "the lease plus maxLeaseExtension passes the broker's ceiling (SQS: 12h from the receive)",
		Explanation: `SQS keeps a received message invisible for at most 12 hours from its
receive, however often its visibility timeout is changed: a
ChangeMessageVisibility that would reach past that is refused. brighter
stops extending a minute short of the ceiling, logs one Warning per message
("message held to the broker's ceiling on a lease; ..."), and SQS then
redelivers the message, while its handler may still run. A
maxLeaseExtension that with the visibility timeout passes 12h is therefore
not honoured.

Fix: lower maxLeaseExtension to at most 12h less sqs.visibilityTimeout, and
keep handler.timeout well under 12h.`,
	},
	{
		ID: RuleBufferedWaitExceedsLease, Requirement: "R-4", Severity: SeverityWarning,
		Summary: "without lease extension, the wait in the buffer plus the handler can outlast the lease",
		Explanation: `A received batch of bufferSize messages is handled one after another by a
Reactor performer, and a Proactor worker receives a batch ahead while it
handles one, so a message may be held for about bufferSize (Proactor: plus
one) times handler.timeout before it is settled. When brighter does not
extend the lease (maxLeaseExtension: 0, an SQS visibilityTimeout of 0, or a
Pub/Sub stream's gcp.maxExtension), a lease shorter than that lapses while the
message waits: brighter drops it unhandled and the broker delivers it again
with its delivery count advanced, or, if it is already in the handler, it is
handled twice.

Fix: set maxLeaseExtension above 0 (default 1h), lower bufferSize, or make
the lease at least bufferSize x handler.timeout.`,
	},
	{
		ID: RuleRequeueDelayExceedsLimit, Severity: SeverityWarning,
		Summary: "requeueDelay is longer than the transport can delay a redelivery",
		Explanation: `A requeue hides the message for requeueDelay, using the broker's own
mechanism, which has a maximum: SQS's visibility timeout (12h), Pub/Sub's
ack deadline, for which brighter holds the message (600s). A longer
requeueDelay is capped there, so the message returns sooner than the file
says; consume runs the file, hence a Warning. On Pub/Sub this holds with
makeChannels: validate or assume; with makeChannels: create (the default)
a requeueDelay above 600s is also a retry policy Pub/Sub refuses, which
stops consume: gcp-retry-policy-range, an Error. (A requeueDelay consume
refuses, an SQS one above 12h or a negative one, is requeue-delay-range,
an Error.)

Fix: use a requeueDelay within the transport's maximum.`,
	},
	{
		ID: RuleGCPRetryPolicyRange, Severity: SeverityError,
		Summary: "makeChannels: create would give the Pub/Sub subscription a retry policy Pub/Sub refuses, so consume cannot start",
		Explanation: `With makeChannels: create (the default) and a requeueDelay above 0, consume
creates or updates the Pub/Sub subscription with a retry policy: minimum
back-off requeueDelay, maximum back-off gcp.maxRequeueDelay (600s when 0).
Pub/Sub takes a back-off of at most 600s, and a maximum no shorter than the
minimum; it refuses any other policy (InvalidArgument), so consume cannot
create or update the subscription and does not start. Hence an Error,
where a requeueDelay above 600s under makeChannels: validate or assume is
only cut to 600s (requeue-delay-exceeds-limit, a Warning).

Fix: use a requeueDelay of at most 600s and at most gcp.maxRequeueDelay,
and a gcp.maxRequeueDelay of at most 600s; or, for a longer hold, use
makeChannels: validate with a subscription made elsewhere.`,
	},
	{
		ID: RuleRequeueDelayRange, Severity: SeverityError,
		Summary: "requeueDelay is negative, or above 12h on SQS",
		Explanation: `A requeueDelay is a duration of 0 or more. On SQS a requeue changes the
message's visibility timeout, which SQS takes up to 12h (43200 seconds), so
the file refuses an SQS requeueDelay above 12h rather than cap it (Pub/Sub
caps its own: requeue-delay-exceeds-limit). consume refuses a file with
either value (exit 2).

Fix: use a requeueDelay from 0s to 12h on SQS, 0s or more elsewhere.`,
	},
	{
		ID: RuleOrderingWithPerformers, Severity: SeverityWarning,
		Summary: "ordered delivery with a Reactor of several performers does not keep order",
		Explanation: `With messagePumpType: reactor each performer receives and handles its own
messages, one at a time. With noOfPerformers above 1 on an ordered channel
(Pub/Sub enableMessageOrdering) two performers can hold messages of the same
ordering key at once, so they may be handled out of order.

Fix: use noOfPerformers: 1 with the Reactor, or messagePumpType: proactor,
which keeps per-ordering-key order while dispatching concurrently.`,
	},
	{
		ID: RuleOrderingSpendsBudget, Requirement: "R-4", Severity: SeverityWarning,
		Summary: "an ordered channel with bufferSize above 1 keeps order only by spending the budget of messages held back behind a deferred one",
		Explanation: `On an ordered channel (SQS FIFO, Pub/Sub enableMessageOrdering) a receive
can bring several messages of one message group or ordering key at once.
When one of them is deferred (or its settle or routing fails), the pump
keeps the key's order: the later messages of the key that came with it are
released without being handled, and the broker hands them out again after
the deferred one (docs/adr/0006-ordered-channels-under-deferral.md).

The broker counts that delivery: SQS counts every receive
(ApproximateReceiveCount), Pub/Sub every delivery (delivery_attempt, and an
ordered key's Nack sends its later messages again anyway). Each deferral of
an earlier message therefore spends one delivery of each later message
received with it. With requeueCount R, a message behind one deferred R
times reaches its budget without ever being handled, and exhausted is final:
it is dead-lettered unhandled. Order cannot be kept here without that cost.

How much one deferral costs at most: the pump holds back only the messages
of the key that it received before the deferred one went back, which are
those received with it: at most bufferSize - 1 (on a Pub/Sub stream, whose
flow control lets bufferSize x noOfPerformers messages be outstanding, that
product less one), one delivery each. The finding shows that number. A
message is charged once for each deferral of an earlier message of its key
received with it, so the deeper in a batch, the more it can be charged.

RocketMQ FIFO message groups are not reported: a consumer group created
orderly hands out a group's next message only once the one before is
settled, so no message is received behind a deferred one (the file has no
ordering setting for RocketMQ; orderliness is the group's, on the broker).

Fix: bufferSize: 1 receives one message at a time (SQS MaxNumberOfMessages
1, Pub/Sub maxMessages 1, one outstanding message on a stream of one
performer), so no message is received behind a deferred one and every
budget is a message's own; or requeueCount: -1 when a message may wait
behind others without limit; or accept the cost where throughput matters
more (the rule is a Warning).`,
	},
	{
		ID: RuleRestartsSpendBudget, Requirement: "R-4", Severity: SeverityWarning,
		Summary: "stops and kills of the consumer can spend the budget of messages waiting in the pump's buffer",
		Explanation: `SQS (ApproximateReceiveCount), Pub/Sub (delivery_attempt) and RocketMQ
(DeliveryAttempt) count every delivery, also one the pump never hands to a
handler. The pump receives ahead: a Proactor holds noOfPerformers x
bufferSize received messages besides the one in each worker's handler; a
Reactor performer handles its received batch of bufferSize one after
another. When the process is killed, every message it holds goes back to the
broker with a delivery spent, the waiting ones without a handler run. A
graceful stop (SIGTERM) stops receiving and hands what is buffered to the
handlers within drainTimeout, but a message that cannot be handled in time
is released unhandled too: with an exec or http handler a performer may
need bufferSize (Proactor: plus one) x handler.timeout to get through what
it holds.

The rule judges one message waiting in the buffer against requeueCount R,
for one rolling deploy (one graceful stop) and one crash (one kill): the
kill costs it 1 delivery, and the stop 1 more when drainTimeout is shorter
than bufferSize (Proactor: plus one) x handler.timeout (a builtin handler
returns at once, so the stop costs nothing). Those L deliveries (1 or 2)
leave it R - L handler runs; a delivery that arrives with its budget spent
is still handed to its handler once. It warns when that leaves a single
run, R <= L + 1 (so R = 2 always, R = 3 when the drain is too short), and,
whatever R, when drainTimeout cannot get through the buffer, since every
graceful stop then spends a delivery of each message it releases. Each
further kill costs one more. The finding shows how many messages one kill
reaches: noOfPerformers x bufferSize, Proactor plus noOfPerformers in
handlers.

Not reported: requeueCount -1 (no budget), 1 (one run, which even an
exhausted delivery gets; 0 and below -1 behave as 1), a Reactor with
bufferSize 1 (no message waits: each performer receives one message and
handles it), the memory transport (its messages end with the process) and a
budget that cannot run down (budget-cannot-run-down).

Fix: first a drainTimeout of at least bufferSize (Proactor: plus one) x
handler.timeout, or a smaller bufferSize, so that a graceful stop gets
through the buffer (keep the container's termination grace period above
drainTimeout); a larger budget does not end that shortfall. Then, with the
kill alone costing 1, a requeueCount of at least 3 leaves a buffered message
two runs or more. Or messagePumpType: reactor with bufferSize: 1, where no
message waits in a buffer.`,
	},
	{
		ID: RuleDrainShorterThanHandler, Severity: SeverityNote,
		Summary: "drainTimeout is shorter than handler.timeout",
		Explanation: `On SIGINT or SIGTERM brighter consume stops receiving and waits up to
drainTimeout for messages in flight. A handler that may run for up to
handler.timeout can be cut off by a shorter drain; its message is not lost
(it returns when its lease lapses) but it will be handled again.

Fix: make drainTimeout at least handler.timeout, and keep the container's
termination grace period above drainTimeout.`,
	},
	{
		ID: RuleEmptyChannelBusyPoll, Severity: SeverityWarning,
		Summary: "an empty channel is polled without a pause",
		Explanation: `When a receive finds the channel empty, the pump waits emptyChannelDelay
before the next one. With emptyChannelDelay: 0s, on a transport whose
receive returns at once for this timeOut (SQS below 1s: a short poll, as SQS
long-polls in whole seconds), an empty queue is asked again and again without
a pause: a core spent, and on AWS every request billed.

Fix: set timeOut to at least 1s (SQS long-polls up to 20s) or give
emptyChannelDelay a pause (default 500ms).`,
	},
	{
		ID: RuleHandlerCommandNotFound, Severity: SeverityWarning,
		Summary: "an exec handler's command is not an executable file (consume refuses to start)",
		Explanation: `An exec handler runs handler.command for each message. consume looks the
command up when it starts the subscription, as exec.LookPath does: a path
(one with a slash; a relative one is relative to the subscriptions file's
directory) must name an executable file, and a bare name (python3) must be
found on PATH. When it is not, consume refuses to start (exit 2).

This rule reads the file system where lint runs, with lint's PATH: a
command that is built or installed later (a CI job that lints before it
builds the handler, a PATH that only the deployed image has) is reported
although consume, run later elsewhere, would find it. That is why it is a
warning, not an error: it fails a build only with --fail-on warning (or
note). lint says nothing about the program itself: only that it can be
started.

Fix: correct handler.command, make the file executable (chmod +x), or lint
where and after the command exists.`,
	},
	{
		ID: RuleHandlerTLSUnreadable, Severity: SeverityWarning,
		Summary: "an http handler's tls files cannot be loaded (consume refuses to start)",
		Explanation: `An http handler's handler.tls names PEM files that consume loads when it
starts the subscription: caFile (CA certificates trusted besides the
system's), certFile and keyFile (a client certificate and its key, for
mutual TLS). A relative path is relative to the subscriptions file's
directory. A file that does not exist or cannot be read, a caFile with no
PEM certificate, or a certificate and key that are not a pair makes
consume refuse to start (exit 2).

This rule reads the file system where lint runs: certificates are often
mounted only where the consumer is deployed (a secret volume), so a file
missing here may be there. That is why it is a warning, not an error: it
fails a build only with --fail-on warning (or note).

Fix: correct the paths, or lint where the certificates are mounted.`,
	},
	{
		ID: RuleMemorySeedInvalid, Severity: SeverityError,
		Summary: "a memory transport's seed file is missing or does not parse (consume refuses to start)",
		Explanation: `memory.seed names a file of messages, one JSON record per line (the shape
brighter dlq peek -o json and memory.output write), that consume loads into
the subscription's queue when it starts. A relative path is relative to the
subscriptions file's directory. A seed file that does not exist, cannot be
read or holds a line that is not such a record makes consume refuse to
start (exit 2); the finding names the line.

This rule reads the file system where lint runs: a seed file written later
(by a test harness, say) is reported although consume, run after it, would
load it.

Fix: correct memory.seed, or the record on the line named.`,
	},
	{
		ID: RuleMemoryOutputUnwritable, Severity: SeverityError,
		Summary: "a memory transport's output file cannot be written (consume refuses to start)",
		Explanation: `memory.output names the file consume writes, when it stops, every message
its memory queues still hold: those the handlers left and those dead-lettered
or routed as invalid, which brighter dlq reads back from it. A relative path
is relative to the subscriptions file's directory. consume checks at start-up
that it can write there, and refuses to start (exit 2) when the file is a
directory or may not be written, or when it does not exist and its directory
does not exist or no file may be created in it: found only at stop, the
messages would be lost.

This rule reads the file system where lint runs: a directory made later (by a
test harness, say) is reported although consume, run after it, would write
there.

Fix: correct memory.output, or make its directory.`,
	},
}

// Rules returns every rule, in listing order. The slice is a copy.
func Rules() []Rule { return append([]Rule(nil), catalogue...) }

// Lookup finds a rule by its id ("budget-zero") or by the requirement it
// implements ("R-7", case-insensitive).
func Lookup(idOrRequirement string) (Rule, bool) {
	for _, r := range catalogue {
		if r.ID == idOrRequirement || (r.Requirement != "" && strings.EqualFold(r.Requirement, idOrRequirement)) {
			return r, true
		}
	}
	return Rule{}, false
}

// ruleIndex maps an id to its index in catalogue (for SARIF ruleIndex).
var ruleIndex = func() map[string]int {
	m := make(map[string]int, len(catalogue))
	for i, r := range catalogue {
		m[r.ID] = i
	}
	return m
}()

// ruleByID returns the rule with id; ok is false for an unknown id.
func ruleByID(id string) (Rule, bool) {
	i, ok := ruleIndex[id]
	if !ok {
		return Rule{}, false
	}
	return catalogue[i], true
}
