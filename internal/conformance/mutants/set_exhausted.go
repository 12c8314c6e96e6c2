package main

// exhaustedMutants break the rules of a delivery that arrives with its
// redelivery budget spent (docs/adr/0001-delivery-count-contract.md §10):
// routed without a handler run only on evidence that handlers spent the
// budget, counted once, and a graceful stop that hands what is buffered to
// the handlers instead of spending a delivery of each.
var exhaustedMutants = []mutant{
	{Name: "exhausted-handled-again", What: "a delivery whose earlier routing by the budget failed here is handed to the handler again instead of straight to routing",
		File: "internal/pump/exhausted.go",
		Old:  "if _, judged := r.p.here.lookup(m.Header.MessageID, \"\"); judged > 0 {",
		New:  "if _, judged := r.p.here.lookup(m.Header.MessageID, \"\"); false && judged > 0 {",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R4_exhaustedfinal")},
	{Name: "exhausted-without-evidence", What: "a delivery that reached the budget through deliveries no handler saw (stops, kills) is routed without a handler run",
		File: "internal/pump/exhausted.go",
		Old:  "if spentByHandlers(m, b) >= b {",
		New:  "if true || spentByHandlers(m, b) >= b {",
		Pkg:  "./internal/pump ./internal/conformance",
		Run: "^(TestBudgetReachedByWastedDeliveriesStillRunsTheHandler_R4|TestBudgetReachedByWastedDeliveriesRoutesAfterOneRun_R4)$|" +
			cells(sqsStd, "SqsStandard/(reactor|proactor)", "R4_stopswastenobudget"), CI: true},
	{Name: "waste-allowance-unbounded", What: "any number of deliveries is forgiven as stops and kills: a message that crashes its consumer every time is never routed",
		File: "internal/pump/exhausted.go",
		Old:  "return before - min(attemptsBefore, b)",
		New:  "return before - attemptsBefore",
		Pkg:  "./internal/pump", Run: "^TestDeliveriesPastTwiceTheBudgetAreRoutedWithoutARun_R4$"},
	{Name: "stamped-reason-as-deliveries", What: "a message routed on arrival because its stamped count reached the budget is said to have been delivered as many times as its count, not named by its stamp",
		File: "internal/pump/exhausted.go",
		Old:  "stamped := max(m.Header.HandledCount-attemptsBefore, 0)",
		New:  "stamped := 0 * max(m.Header.HandledCount-attemptsBefore, 0)",
		Pkg:  "./internal/pump", Run: "^TestStampedCountReachingTheBudgetIsNamedInTheReason_R4$"},
	{Name: "stream-close-ends-holds", What: "a stop Nacks every message the Pub/Sub stream consumer holds for its requeue delay at once: it comes back before its delay",
		File: "internal/broker/gcp/stream.go",
		Old:  "if h.until.After(keepUntil) {",
		New:  "if true || h.until.After(keepUntil) {",
		Pkg:  "./internal/broker/gcp", Run: "^TestStop_DeferredMessageStaysAwayForItsDelay$"},
	{Name: "routing-retry-copy-count-raised", What: "a retried routing stamps the copy with the count the failed routings' deliveries raised, not the count the budget judged",
		File: "internal/pump/exhausted.go",
		Old:  "\t\t\tm.Header.HandledCount = judged\n",
		New:  "",
		Pkg:  "./internal/pump", Run: "^TestExhaustedMessageNeverHandledAgainWhileRoutingFails_AC3$"},
	{Name: "routing-retry-counted-again", What: "a retried routing is counted as a rejected message again in the metrics",
		File: "internal/observe/metrics.go",
		Old:  "\t\tif e.Err == nil {\n\t\t\tm.rejected.",
		New:  "\t\tif true {\n\t\t\tm.rejected.",
		Pkg:  "./internal/observe", Run: "^TestMetrics_ScrapedAndParsed$"},
	{Name: "drain-releases-buffered", What: "a graceful stop releases what is buffered (each a delivery spent with no handler run) instead of handing it to the handlers within drainTimeout",
		File: "internal/pump/run.go",
		Old:  "\treturn until > 0 && time.Now().UnixNano() < until\n",
		New:  "\treturn until < 0 && false\n",
		Pkg:  "./internal/pump", Run: "^(TestGracefulStopHandlesWhatIsBufferedWithinTheDrain_NFR8|TestStopLetsTheReceiveInProgressEndAndHandlesWhatItBrought_NFR8)$", CI: true},
}

// rejectionRetryMutants break the rule that a handler's rejection whose
// routing failed is retried without a handler run.
var rejectionRetryMutants = []mutant{
	{Name: "rejection-handled-again", What: "a message whose handler rejected it and whose routing failed is handed to the handler again on its next delivery",
		File: "internal/pump/exhausted.go",
		Old:  "\tif r.p.here.rejection(m.Header.MessageID) != nil {\n",
		New:  "\tif false && r.p.here.rejection(m.Header.MessageID) != nil {\n",
		Pkg:  "./internal/pump", Run: "^TestHandlerRejectionNeverHandledAgainWhileRoutingFails_AC3$"},
	{Name: "stop-releases-spent-budget", What: "a stop releases a buffered message whose budget handlers spent instead of routing it: it comes back past the delivery the budget routes on, where a native redrive limit of 2 x requeueCount + 1 moves it to the broker's own dead-letter destination with no reason",
		File: "internal/pump/run.go",
		Old:  "\t\tif h.unstarted && r.routeSpentAtRelease(m) {",
		New:  "\t\tif false && h.unstarted && r.routeSpentAtRelease(m) {",
		Pkg:  "./internal/pump ./internal/broker/sqs", Run: "^(TestStopRoutesABufferedMessageWhoseBudgetIsSpent_R4|TestStopRoutesABufferedMessageWhoseBudgetIsSpent)$"},
}
