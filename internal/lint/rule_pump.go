package lint

// pumpRules are the rules of how the pump runs: ordered channels,
// deliveries that stops and kills of the consumer spend, the drain and
// polling an empty channel.
var pumpRules = []Rule{
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
further kill costs one more, and the budget forgives at most R deliveries
that no handler finished: a message that 2 x R stops or crashes each caught
(a rolling deploy that releases the same buffered messages again and again,
a crash loop) is dead-lettered on its next delivery with no handler run at
all, the rejection message saying that it was routed without a run. The
finding says so. A native redrive limit below 2 x R + 1 moves such a message
to the broker's own dead-letter destination first, with no reason
(restarts-reach-native-limit). The finding shows how many messages one kill
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
}
