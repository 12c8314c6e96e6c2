package main

// cycleMutants break what stops a poison message going round a cycle of
// rejection destinations (docs/adr/0004 decision 12): the Router's refusal
// of a destination already on a message's rejectionPath, its exemption of
// a redriven copy (and that exemption's two bounds: the source is not the
// destination, at most MaxRedrives in a row), the path Stamp writes, and
// lint's rejection-cycle and resolved dead-letter-is-source.
// The run-time rule is killed by the Router's unit test and the pump tests
// over the memory transport (both variants); the lint rules by
// internal/lint's tests.
var cycleMutants = []mutant{
	{Name: "router-routes-round-cycles", What: "the Router routes a message to a destination already on its rejectionPath: a poison message goes round a cycle of dead-letter destinations for ever, a new copy each time",
		File: "internal/broker/routing.go",
		Old:  "\t\tif !r.redriven(m, dest) {\n\t\t\treturn r.refuseCycle(ctx, log, m, rej, res)\n\t\t}\n",
		New:  "",
		Pkg:  "./internal/broker ./internal/pump", Run: "^(TestRouterRefusesRejectionCycle|TestRejectionCycleIsBounded)$"},
	{Name: "router-holds-redriven-copies", What: "the Router holds a redriven copy (moved back from its dead-letter queue by SQS's redrive to source) as a rejection cycle instead of dead-lettering it again",
		File: "internal/broker/cycle.go",
		Old:  "\tif r.Source == \"\" {\n\t\treturn false\n\t}\n",
		New:  "\treturn false\n",
		Pkg:  "./internal/broker ./internal/pump ./internal/broker/sqs", Run: "^(TestRouterRoutesARedrivenCopyAgain|TestRedrivenCopyIsDeadLetteredAgain)$"},
	{Name: "router-redrive-ignores-source", What: "the Router takes a copy whose path ends with its destination for a redriven one even when the destination is its own source under another spelling (lo.op / lo_op on SQS): a self-loop is routed round MaxRedrives more times",
		File: "internal/broker/cycle.go",
		Old:  "\tif r.resolve(r.Source) == d {\n\t\treturn false\n\t}\n",
		New:  "",
		Pkg:  "./internal/broker ./internal/broker/sqs", Run: "^(TestRouterHoldsWhatIsNotARedrive|TestRejectionCycleIsBounded)$"},
	{Name: "router-redrives-unbounded", What: "the Router routes a redriven copy back to its destination however often it comes back: a destination whose native dead-letter policy moves messages back to the source loops for ever",
		File: "internal/broker/cycle.go",
		Old:  "run >= 1 && run <= MaxRedrives && ",
		New:  "run >= 1 && ",
		Pkg:  "./internal/broker ./internal/pump", Run: "^(TestRouterRoutesARedrivenCopyAgain|TestRedrivenCopyIsDeadLetteredAgain)$"},
	{Name: "redrive-origin-is-destination", What: "a redriven copy dead-lettered again records the dead-letter queue itself as its originalTopic (the topic the moved-back copy still carries): dlq replay then has no source to send it back to",
		File: "internal/broker/routing.go",
		Old:  "\t\tstamped = r.redrivenFrom(m, dest)\n",
		New:  "\t\tstamped = m\n",
		Pkg:  "./internal/broker", Run: "^TestRouterRoutesARedrivenCopyAgain$"},
	{Name: "stamp-no-rejection-path", What: "a routed copy does not record its destination in rejectionPath: the Router cannot see a cycle and the message goes round for ever",
		File: "internal/message/metadata.go",
		Old:  "\tc.Header.Bag[KeyRejectionPath] = extendPath(RejectionPath(m), destination)\n",
		New:  "",
		Pkg:  "./internal/message ./internal/pump", Run: "^(TestStampExtendsRejectionPath|TestRejectionCycleIsBounded)$"},
	{Name: "lint-no-rejection-cycle", What: "lint reports no rejection cycle among a file's subscriptions, and consume starts one",
		File: "internal/lint/cycles.go",
		Old:  "cyc := x.cycles[s]",
		New:  "cyc := x.cycles[nil]",
		Pkg:  "./internal/lint", Run: "^(TestRejectionCycle_IsAnErrorOnEachSubscriptionOfTheCycle|TestRejectionCycleInSubscriptionIn)$"},
	{Name: "lint-source-raw-names", What: "dead-letter-is-source compares names as written: an SQS subscription reading lo.op whose deadLetterRoutingKey is lo_op (one queue) is not reported",
		File: "internal/lint/names.go",
		Old:  "if src.value == \"\" || destKey(s.Transport, src.value) != k {",
		New:  "if src.value == \"\" || src.value != name {",
		Pkg:  "./internal/lint", Run: "^TestDeadLetterIsSourceResolvesNames$"},
}
