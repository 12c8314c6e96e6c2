package main

// ackRetryMutants break the rule that a handler's Ack is final: a message
// whose handler acknowledged it and whose acknowledgement failed is
// acknowledged on its next delivery here without a handler run, whatever
// its count and the budget.
var ackRetryMutants = []mutant{
	{Name: "ack-retry-handled-again", What: "a message whose handler acknowledged it and whose acknowledgement failed is handed to the handler again on its next delivery, and its budget judged",
		File: "internal/pump/exhausted.go",
		Old:  "\tif r.p.here.ackRetry(m.Header.MessageID) {\n",
		New:  "\tif false && r.p.here.ackRetry(m.Header.MessageID) {\n",
		Pkg:  "./internal/pump ./internal/conformance",
		Run:  "^TestFailedAcknowledgementRetriedWithoutAHandlerRun$|" + cells(sqsStd, "SqsStandard/(reactor|proactor)", "R4_ackretry")},
}
