package main

// ackRetryMutants break the rule that a handler's Ack is final: a message
// whose handler acknowledged it and whose acknowledgement failed, or still
// waits in the settle batcher, is acknowledged on its next delivery here
// without a handler run, whatever its count and the budget.
var ackRetryMutants = []mutant{
	{Name: "ack-retry-handled-again", What: "a message whose handler acknowledged it and whose acknowledgement failed is handed to the handler again on its next delivery, and its budget judged",
		File: "internal/pump/exhausted.go",
		Old:  "\tif r.p.here.ackRetry(m.Header.MessageID) {\n",
		New:  "\tif false && r.p.here.ackRetry(m.Header.MessageID) {\n",
		Pkg:  "./internal/pump ./internal/conformance",
		Run:  "^TestFailedAcknowledgementRetriedWithoutAHandlerRun$|" + cells(sqsStd, "SqsStandard/(reactor|proactor)", "R4_ackretry")},
	{Name: "ack-retry-batch-failure-unrecorded", What: "a failed batched acknowledgement (the settle batcher, both variants) is not recorded, so the message's redelivery runs its handler again",
		File: "internal/pump/settler.go",
		Old:  "\t\t\tr.p.here.ackFailed(a.m.Header.MessageID) // its next delivery here: retryAck\n",
		New:  "\t\t\t_ = a // its next delivery here: retryAck\n",
		Pkg:  "./internal/pump", Run: "^TestFailedAcknowledgementRetriedWithoutAHandlerRun$"},
	{Name: "ack-retry-single-failure-unrecorded", What: "a failed acknowledgement made one message per call (a consumer with no batch acknowledgement: RocketMQ) is not recorded, so the message's redelivery runs its handler again",
		File: "internal/pump/settle.go",
		Old:  "\t\t\tr.p.here.ackFailed(m.Header.MessageID) // its next delivery here: retryAck\n",
		New:  "",
		Pkg:  "./internal/pump", Run: "^TestFailedAcknowledgementRetriedWithoutAHandlerRun$"},
	{Name: "ack-waiting-handled-again", What: "a redelivery that arrives while the handler's acknowledgement of an earlier delivery still waits in the settle batcher for its answer is handed to the handler again",
		File: "internal/pump/settle.go",
		Old:  "\tackWaiting := acks.waiting(m)\n",
		New:  "\tackWaiting := false\n",
		Pkg:  "./internal/pump ./internal/conformance",
		Run:  "^TestRedeliveryWhileItsAcknowledgementWaitsIsNotHandledAgain$|" + cells(sqsStd, "(SqsStandard|SqsFifo)/(reactor|proactor)", "R4_ackwaiting")},
	{Name: "ack-waiting-filling-batch-unsearched", What: "an acknowledgement still filling its settle batch (not yet sent) is not known to a later delivery of its message, which is then handled again",
		File: "internal/pump/settler.go",
		Old:  "\tfor _, a := range b.batch {\n",
		New:  "\tfor _, a := range b.batch[:0] {\n",
		Pkg:  "./internal/pump", Run: "^TestBatcherKnowsTheAcknowledgementsItHolds$"},
	{Name: "ack-retry-duration-observed", What: "an acknowledgement retried without a handler run adds a zero sample to the handler-duration histogram",
		File: "internal/observe/metrics.go",
		Old:  "\t\tif !e.Retry { // a retried acknowledgement ran no handler\n",
		New:  "\t\tif true {\n",
		Pkg:  "./internal/observe", Run: "^TestMetrics_RetriedAcknowledgementCountedWithoutAHandlerDuration$"},
}
