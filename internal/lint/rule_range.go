package lint

// rangeRules are the rules of a setting outside the range its broker or
// brighter accepts: the buffer size and the transports' own limits.
var rangeRules = []Rule{
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
}
