package lint

import "time"

// The --infra rules: they compare the subscriptions file with the
// infrastructure files that declare its queues and subscriptions.
const (
	// RuleDeadLetterTargetMismatch: the declared redrive or dead-letter
	// policy sends to another queue or topic than the file names.
	RuleDeadLetterTargetMismatch = "dead-letter-target-mismatch"
	// RuleRedriveAllowForbidsSource: the dead-letter queue's redrive allow
	// policy does not let the source queue use it.
	RuleRedriveAllowForbidsSource = "redrive-allow-forbids-source"
	// RuleRetentionShorterThanBudget: the source's retention ends before
	// the budget can run out (DeadLetterOutageAllowance included).
	RuleRetentionShorterThanBudget = "retention-shorter-than-budget"
	// RuleDeliveryOrderDrift: the declared ordering (FIFO, message
	// ordering) disagrees with the file.
	RuleDeliveryOrderDrift = "delivery-order-drift"
	// RuleInfraUndeclared: no infrastructure file declares the
	// subscription's channel.
	RuleInfraUndeclared = "infra-undeclared"
	// RuleRawDeliveryDrift: the declared SNS subscription's raw message
	// delivery disagrees with sqs.rawMessageDelivery.
	RuleRawDeliveryDrift = "raw-delivery-drift"
)

// RuleDeadLetterTopicUnsubscribed is a rule of --live and --infra alike: a
// Pub/Sub dead-letter topic (the subscription's dead-letter policy's, or
// the file's dead-letter channel) that no subscription reads, so what is
// dead-lettered there is lost.
const RuleDeadLetterTopicUnsubscribed = "dead-letter-topic-unsubscribed"

// DeadLetterOutageAllowance is how long retention-shorter-than-budget
// allows, beyond the time a budget can take (requeueCount x requeueDelay;
// on Pub/Sub with a retry policy, requeueCount x (requeueDelay + its
// maximum back-off)), for a dead-letter destination
// to be unavailable: while it is, each routing of an exhausted message
// fails and the message is released and redelivered (every 10 minutes at
// the longest, R-19), so it must still be retained on the source when the
// destination returns. One hour: long enough to restore a queue or topic a
// deploy deleted or broke.
const DeadLetterOutageAllowance = time.Hour

// brokerRules are the rules that judge the subscriptions file against the
// settings in force: read from the brokers (--live) or from the
// infrastructure files that declare them (--infra).
var brokerRules = []Rule{
	{
		ID: RuleNativeLimitDrift, Requirement: "R-10", Severity: SeverityWarning,
		Summary: "the native redrive limit on the broker differs from the subscriptions file (--live)",
		Explanation: `With --live, lint asks each broker for the native redrive limit actually in
force (SQS GetQueueAttributes RedrivePolicy.maxReceiveCount, Pub/Sub
GetSubscription deadLetterPolicy.maxDeliveryAttempts) and compares it with
the file. A difference means the file does not describe the queue or
subscription: someone changed it by hand, or makeChannels: assume/validate
never applied the file's policy. budget-outranked is then checked
against the broker's value too, because that is the limit that fires.

Fix: make the file and the broker agree: apply the file (makeChannels:
create updates the policy) or change the file to what the broker has.`,
	},
	{
		ID: RuleMissingDestination, Requirement: "R-30", Severity: SeverityError,
		Summary: "a queue, topic or subscription the subscription names is missing on the broker (--live)",
		Explanation: `With --live, lint looks up on the broker every channel a subscription with
makeChannels: validate or assume names: its queue or subscription and topic,
the dead-letter and invalid-message destinations, the native redrive
target in the file and the one the queue or subscription really holds
(SQS RedrivePolicy, Pub/Sub DeadLetterPolicy), and on Pub/Sub that each
dead-letter topic has a subscription: a dead-letter topic with none loses
what is forwarded there. It runs the same validation brighter consume runs
at start-up with makeChannels: validate, which refuses to start on this
finding; with assume, consume starts, and each message routed to a missing
destination is released and redelivered instead (R-19). Subscriptions with
makeChannels: create are not looked up: consume creates what is missing.

Fix: create what the finding names (makeChannels: create, or the broker's
own tools), or correct the routing key in the file.`,
	},
	{
		ID: RuleLiveCheckFailed, Severity: SeverityWarning,
		Summary: "--live could not read a subscription's settings from its broker",
		Explanation: `With --live, lint reads each subscription's native limit from its broker. When
the queue or subscription does not exist, the broker cannot be reached, or
the credentials are refused, the live comparison is skipped for that
subscription and this finding says why.

Fix: check connections in the file, the credentials in the environment, and
that the queue or subscription exists (brighter consume with makeChannels:
create creates it).`,
	},
	{
		ID: RuleDestinationMessageSize, Severity: SeverityWarning,
		Summary: "--live: a rejection destination takes smaller messages than its source (SQS MaximumMessageSize)",
		Explanation: `An SQS queue refuses a message over its MaximumMessageSize (256 KiB unless
set, at most 1 MiB). A dead-letter or invalid-message queue whose limit is
smaller than the source queue's cannot take every message the source
accepts, and the routed copy is larger still: it carries the five rejection
keys and the rejection reason (up to about 2 KiB more). Such a copy is
refused as too large: brighter tries once more with a shortened rejection
message, then releases the original for the longest delay and counts it
(the message stays on the source, never lost, but is never routed).

Fix: give the destination queue a MaximumMessageSize at least the source's
(1 MiB, 1048576, takes everything SQS does).

With --infra, the sizes are the infrastructure files' (max_message_size),
the service default where they set none, and the destinations include the
queue the declared redrive policy sends to: SQS moves a message there as
it is, and refuses one the target cannot take.`,
	},
	{
		ID: RuleDeadLetterTargetMismatch, Severity: SeverityWarning,
		Summary: "--infra: the declared redrive or dead-letter policy sends to another queue or topic than the subscription names",
		Explanation: `With --infra, lint reads the redrive policy of the subscription's SQS queue
(redrive_policy deadLetterTargetArn) or the dead-letter policy of its
Pub/Sub subscription (dead_letter_policy dead_letter_topic) from the
infrastructure files, and compares its target with the dead-letter channel
the subscriptions file names: sqs.redrivePolicy.deadLetterQueue or
gcp.deadLetterPolicy.topic when the file sets one, else
deadLetterRoutingKey. A different target means messages the broker gives up
on land where nobody looks for them (brighter dlq peek and replay read the
file's destination), or that the infrastructure and the file were changed
apart. A target the files decide only at apply time is not judged.

Fix: point the policy at the queue or topic the file names, or change the
file to the one the infrastructure declares.`,
	},
	{
		ID: RuleRedriveAllowForbidsSource, Severity: SeverityError,
		Summary: "--infra: the dead-letter queue's redrive allow policy forbids the source queue",
		Explanation: `An SQS queue's redrive allow policy (redrive_allow_policy, RedriveAllowPolicy)
says which source queues may use it as their dead-letter queue: allowAll,
denyAll, or byQueue with a list of source queue ARNs. When the queue a
source's redrive policy names forbids that source (denyAll, or byQueue
without it), SQS refuses the source's redrive policy: the deploy fails, or
the redrive never moves a message and poison messages stay on the source.
A source ARN decided only at apply time and not a reference to the source
is not judged.

Fix: add the source queue's ARN to sourceQueueArns (or use allowAll), or
point the source's redrive policy at a queue that allows it.`,
	},
	{
		ID: RuleRetentionShorterThanBudget, Severity: SeverityWarning,
		Summary: "--infra: the source's message retention ends before the budget can run out",
		Explanation: `A queue or subscription keeps a message for its retention period from the
moment it was sent (SQS message_retention_seconds, default 4 days; Pub/Sub
message_retention_duration, default 7 days), however often it is
redelivered. A message deferred requeueCount times, each time for
requeueDelay, is on the source for requeueCount x requeueDelay before its
budget is spent and it is routed to the dead-letter destination; if that
destination is unavailable, routing fails and the message is released and
redelivered until it comes back. lint allows one hour for that outage
(the dead-letter outage allowance). A retention shorter than
requeueCount x requeueDelay + 1h deletes such a message from the source
before it reaches the dead-letter destination: lost, with no record.

On Pub/Sub a subscription's retry policy adds its back-off after each of
brighter's holds of requeueDelay. Pub/Sub documents the back-off as
exponential between the policy's minimum and maximum, without saying how
fast it grows, so lint takes every redelivery at the maximum:
requeueCount x (requeueDelay + maximum back-off) + 1h, a bound never below
what the documented policy allows. The policy in force is the file's with
makeChannels: create (when requeueDelay is above 0: maximum
gcp.maxRequeueDelay, 600s unless set; none otherwise), else the declared
one (retry_policy maximum_backoff, retryPolicy.maximumBackoff; 600s, the
service default, when unset or decided at apply time); with none, the
back-off is 0.

Fix: raise the retention above that sum, or lower requeueCount,
requeueDelay or, on Pub/Sub, the retry policy's maximum back-off.`,
	},
	{
		ID: RuleDeliveryOrderDrift, Severity: SeverityWarning,
		Summary: "--infra: the declared ordering (FIFO, message ordering) disagrees with the subscriptions file",
		Explanation: `The order guarantees of a channel are the broker's: an SQS queue is FIFO
or not (fifo_queue), a Pub/Sub subscription orders by key or not
(enable_message_ordering). The subscriptions file says what the consumer
expects (sqs.queueType: fifo, gcp.enableMessageOrdering), and the pump
keeps a key's order, and lint judges the rules of ordered channels, only
where the file asks for it (docs/adr/0006-ordered-channels-under-deferral.md).
When the infrastructure declares otherwise, the consumer runs with the
wrong assumptions: messages of a key handled out of order by several
performers, or an unordered channel treated as ordered and budgets spent
holding messages back.

Fix: make the infrastructure and the file agree.`,
	},
	{
		ID: RuleRawDeliveryDrift, Severity: SeverityWarning,
		Summary: "--infra: the SNS subscription to the queue declares raw message delivery otherwise than sqs.rawMessageDelivery",
		Explanation: `An SQS subscription with sqs.channelType: pubSub reads a queue subscribed to
an SNS topic. With raw message delivery (sqs.rawMessageDelivery, true by
default) SNS puts the message body and attributes on the queue as they were
published; without it, it wraps them in an SNS notification envelope. brighter
sets the subscription's RawMessageDelivery when it makes the channels
(makeChannels: create); with validate or assume it reads what the
infrastructure made. An aws_sns_topic_subscription to the queue whose
raw_message_delivery (false when unset) differs from the file hands the
consumer messages in the other shape: envelopes where it expects raw bodies,
and the message's own attributes missing.

Fix: set raw_message_delivery on the aws_sns_topic_subscription to what the
file says (true for brighter's default), or change sqs.rawMessageDelivery.`,
	},
	{
		ID: RuleInfraUndeclared, Severity: SeverityWarning,
		Summary: "--infra: no infrastructure file declares the subscription's channel",
		Explanation: `With --infra, every subscription whose channels brighter does not create
(makeChannels validate or assume) is looked up in the infrastructure files:
its SQS queue or Pub/Sub subscription. None declared means the files given
do not cover it (declared elsewhere, or never), so no --infra rule could
check it. It is a Warning, because one repository's files seldom declare
every queue; with --infra-require-all the files are taken to declare
everything and the finding is an Error.

Fix: pass the files that declare the channel to --infra, declare it, or
correct channelName.`,
	},
	{
		ID: RuleDeadLetterTopicUnsubscribed, Severity: SeverityWarning,
		Summary: "a Pub/Sub dead-letter topic has no subscription: what is dead-lettered there is lost",
		Explanation: `A Pub/Sub topic keeps nothing by itself: a message published to a topic
with no subscription is kept only for the topic's own message retention
(none unless the topic sets message_retention_duration) and then lost. A
subscription's dead-letter topic (its dead-letter policy's
dead_letter_topic, Config Connector deadLetterPolicy.deadLetterTopicRef,
the file's gcp.deadLetterPolicy.topic) and the topic brighter routes
rejected messages to (deadLetterRoutingKey) therefore need a subscription
that reads them: without one, every message the broker gives up on or
brighter rejects is lost, and brighter dlq peek and replay have nothing to
read.

With --live, lint lists each such topic's subscriptions on the broker
(ListTopicSubscriptions), the dead-letter policy the subscription really
holds included; a topic that does not exist is missing-destination's.
With --infra, it looks for a declared google_pubsub_subscription or
PubSubSubscription whose topic is the dead-letter topic; a topic a
subscription names only at apply time is not judged. Subscriptions with
makeChannels: create are not judged: brighter consume makes a subscription
for each dead-letter topic it creates.

It is a Warning, not an Error: another team, project or repository may
subscribe to the topic outside the files or brokers lint reads. With
--live, a subscription with makeChannels validate or assume is also
reported as missing-destination: the validation brighter consume runs at
start-up with validate refuses a dead-letter topic with no subscription.

Fix: declare a subscription on the dead-letter topic (brighter dlq reads
the one named like the topic), or point the dead-letter policy and
deadLetterRoutingKey at a topic that has one.`,
	},
}
