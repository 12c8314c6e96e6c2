package main

// settleMutants are the stale settles' rules: an acknowledgement sent with
// a receipt whose lease lapsed (the first delivery's or a later one's) is
// reported as stale and never counted, in both variants and in the
// Proactor's batched settler; an exactly-once Pub/Sub subscription's
// refusal is a stale receipt; a requeue's delay is reported as the broker
// applies it; the rows' check that a message was settled for good excuses
// only a delivery from a Receive under way when its newest receipt's
// acknowledgement was answered.
var settleMutants = []mutant{
	{Name: "stale-later-receipt-unchecked", What: "a settle with a later delivery's receipt is never late, though that receipt lapsed too: the Proactor handles the message again and counts the stale acknowledgement",
		File: "internal/pump/redelivery.go",
		Old:  "late = fresher == nil && late || fresher != nil && freshLapsed",
		New:  "late = fresher == nil && late || fresher != nil && freshLapsed && false",
		Run:  cells(sqsStd, "SqsStandard/proactor", "R4_staleack")},
	{Name: "stale-lapsed-ack-counted", What: "an acknowledgement sent with a lapsed receipt and answered with success is counted as acknowledged, not reported as stale",
		File: "internal/pump/redelivery.go",
		Old:  "\tcase late:\n\t\te.Kind, e.Err, e.EndsFlight = EventStaleSettle, ErrLapsedReceipt, true",
		New:  "\tcase late && false:\n\t\te.Kind, e.Err, e.EndsFlight = EventStaleSettle, ErrLapsedReceipt, true",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R4_staleack")},
	{Name: "stale-settler-lapse-ignored", What: "the Proactor's batched settler counts an acknowledgement sent with a lapsed receipt as acknowledged",
		File: "internal/pump/settler.go",
		Old:  "r.p.emit(ackEvent(a.m, a.took, late, err))",
		New:  "r.p.emit(ackEvent(a.m, a.took, false, err))",
		Run:  cells(sqsStd, "SqsStandard/proactor", "R4_staleack")},
	{Name: "conformance-ack-crossed-any-later-receive", What: "the redelivery and stale-settle rows take a delivery from a Receive begun after the newest receipt's acknowledgement was answered as one that crossed it: a message handed out again after it was settled for good passes them",
		File: "internal/conformance/recording.go",
		Old:  "\t\tif !b.Before(answered) {",
		New:  "\t\tif false && !b.Before(answered) {",
		Run:  "^TestAckCrossed_OnlyAReceiveUnderWayAtTheAnswerCrosses$", Pkg: "./internal/conformance"},
	{Name: "gcp-exactly-once-refusal-unclassified", What: "an acknowledgement an exactly-once subscription refuses for a lapsed ack id is a plain failure (an Error), not a stale receipt",
		File: "internal/broker/gcp/exactlyonce.go",
		Old:  "if !errors.As(err, &ae) || ae.Reason() != exactlyOnceAckIDFailure {",
		New:  "if true || !errors.As(err, &ae) || ae.Reason() != exactlyOnceAckIDFailure {",
		Run:  "^TestExactlyOnceRefusedAcknowledgementReportedAsStale_Pull$", Pkg: "./internal/broker/gcp"},
	{Name: "gcp-stream-ack-result-ignored", What: "the stream consumer acknowledges without its result: an exactly-once subscription's refusal goes unseen and the acknowledgement is counted",
		File: "internal/broker/gcp/stream.go",
		Old:  "st, err := pm.AckWithResult().Get(ctx)",
		New:  "pm.Ack()\n\tst, err := pubsub.AcknowledgeStatusSuccess, error(nil)",
		Run:  "^TestExactlyOnceRefusedAcknowledgementReportedAsStale_Stream$", Pkg: "./internal/broker/gcp"},
	{Name: "requeue-delay-reported-as-asked", What: "a deferral is logged and reported with the delay the handler asked for, not the one the broker applies at its cap",
		File: "internal/pump/settle.go",
		Old:  "\tdelay = broker.AppliedDelay(p.consumer, delay) // as the broker bounds it: what is logged\n",
		New:  "",
		Run:  "^TestRequeueDelayAtTheCapReportedAsApplied$", Pkg: "./internal/broker/sqs ./internal/broker/gcp ./internal/broker/rocketmq"},
	{Name: "rocketmq-requeue-delay-uncapped", What: "a RocketMQ requeue past the 12 h invisible duration is sent (and reported) as asked",
		File: "internal/broker/rocketmq/consumer.go",
		Old:  "return min(max(delay, 0), limits.RocketMQ.MaxLease)",
		New:  "return min(max(delay, 0), 1000*limits.RocketMQ.MaxLease)",
		Run:  "^TestRequeueDelayAtTheCapReportedAsApplied$", Pkg: "./internal/broker/rocketmq"},
	{Name: "stale-lapsed-requeue-unreported", What: "a requeue sent with a lapsed receipt and answered with success is reported as a plain deferral, not as stale",
		File: "internal/pump/settle.go",
		Old:  "\t\tif late || r.leases.answeredLate(until, time.Now()) {\n\t\t\tr.staleSettle(m, Defer, end.requeued, end.delay)",
		New:  "\t\tif false {\n\t\t\tr.staleSettle(m, Defer, end.requeued, end.delay)",
		Run:  "^TestLapsedReceiptRequeueAndRejectReportedAsStale$", Pkg: "./internal/pump"},
	{Name: "stale-lapsed-ack-flight-kept", What: "an acknowledgement reported as stale leaves its message in flight (brighter_messages_in_flight never comes down)",
		File: "internal/observe/metrics.go",
		Old:  "\t\tif e.EndsFlight {",
		New:  "\t\tif false {",
		Run:  "^TestMetrics_LapsedAcknowledgementStaleNotAcknowledged$", Pkg: "./internal/observe"},
}
