package lint

// budgetRules are the rules of the redelivery budget (R-7, R-10, R-11, R-19,
// R-17) and of where exhausted and rejected messages go: the dead-letter
// and rejection destinations.
var budgetRules = []Rule{
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
Pub/Sub deadLetterPolicy.maxDeliveryAttempts, the RocketMQ consumer group's
maximum delivery attempts). When requeueCount R is not -1 and R >= that limit M,
brighter's budget cannot be relied on to fire first: the broker moves its
stored copy to its own dead-letter destination, without brighter's rejection
metadata, on delivery M. The effective limit is M. At R == M which one fires
is not determined.

Fix: set requeueCount below the native limit (R < M), so brighter rejects
with metadata and the native limit stays a backstop; or raise the native
limit above requeueCount.`,
	},
	{
		ID: RuleRestartsReachNativeLimit, Requirement: "R-10", Severity: SeverityWarning,
		Summary: "the native redrive limit is above requeueCount but below 2 x requeueCount + 1: stops and crashes can move a message there with no rejection reason",
		Explanation: `The broker counts every delivery, also one no handler finished: a message a
graceful stop released from the pump's buffer, a handler the stop cut off, a
message in the pump when the process was killed, a lease that lapsed. The
budget forgives up to requeueCount R such deliveries (at least 1), since
brighter cannot mark them on the stored message: a message reaches its
budget through deliveries that no handler may have seen, its handler still
runs once, and only a message past 2 x R deliveries is routed without a run
(docs/adr/0001-delivery-count-contract.md §10). So brighter may need up to
2 x R + 1 deliveries of a message before it routes it to deadLetterRoutingKey
with its rejection reason.

The broker's own redrive limit M (SQS redrivePolicy.maxReceiveCount,
Pub/Sub deadLetterPolicy.maxDeliveryAttempts, RocketMQ's consumer-group
maxDeliveryAttempts) hands a message out at most M times: SQS moves it when
its receive count would exceed M. With R < M < 2 x R + 1, a message that M
stops or crashes each caught (a rolling deploy that keeps releasing the same
buffered messages, a crash loop) is moved to the broker's dead-letter
destination before brighter can route it: no rejection reason, no
handled-count, nothing brighter dlq peek shows without --native, and consume
logs nothing about it. (At R >= M the native limit fires first for every
deferred message: budget-outranked.)

Fix: set the native limit to at least 2 x requeueCount + 1 (7 for
requeueCount 3), so that brighter routes every message it gives up on with
its reason and the native limit stays a backstop for routings that fail.`,
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
.maxDeliveryAttempts, the RocketMQ consumer group's maximum delivery
attempts. Without one such a message comes back for ever, at least once
every 10 minutes, logged at Error each time
(brighter_routing_failures_total, brighter_routing_permanent_failures_total).

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
builtins defer and fail, a script with one of them), not for the builtins
log, ack, reject and unacceptable or a script of only those. Not on the memory transport, whose messages end with
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
}
