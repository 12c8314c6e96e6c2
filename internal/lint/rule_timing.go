package lint

// timingRules are the rules of how long a message is held: the handler's
// timeout and lease extension against the lease, the wait in the buffer,
// the requeue delay and Pub/Sub's retry back-off.
var timingRules = []Rule{
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
		ID: RuleRequeueDelayLostAtStop, Requirement: "R-4", Severity: SeverityWarning,
		Summary: "a Pub/Sub stream subscription's requeueDelay is longer than the 9s a stop keeps it: every stop brings those deferrals back at once",
		Explanation: `On a Pub/Sub subscription in gcp.mode stream (the default) brighter keeps a
deferred message away for requeueDelay by holding it itself and Nacking it
when the delay ends: the streaming client library can neither hand a
message back with a deadline of its own nor let its lease lapse. When
consume stops (a rolling deploy, a scale-down, a restart), the stream
consumer keeps a hold that ends within 9s of the stop (its 10s close bound
less 1s for the client to send the Nack) and Nacks every longer one at
once: those messages are delivered again straight away, to the next
consumer, each spending a delivery of its requeueCount. Over a rolling
deploy (several stops in a row) a back-off meant to spare a struggling
downstream collapses to nothing and the budget runs down in seconds
(docs/commands/consume.md, Pub/Sub redelivery gaps).

Fix: gcp.mode: pull, where a deferral is a ModifyAckDeadline the broker
keeps across stops (up to 600s); or a requeueDelay of at most 9s.`,
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
}
