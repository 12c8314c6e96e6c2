package main

// lintBudgetMutants break the lint rules of deliveries spent without a
// handler run: restarts-spend-budget (stops and kills of consume spend the
// budget of messages waiting in the pump's buffer) and the cost of one
// deferral that ordering-spends-budget reports. No message flows through
// lint, so no conformance row can observe them: internal/lint's rule tests
// kill them.
var lintBudgetMutants = []mutant{
	{Name: "lint-unacceptable-discarded-invalid-ignored", What: "unacceptable-discarded ignores invalidMessageRoutingKey: a subscription that keeps its unacceptable messages there is told they are discarded",
		File: "internal/lint/lint.go",
		Old:  `if s.DeadLetterRoutingKey == "" && s.InvalidMessageRoutingKey == "" && s.Transport != config.TransportMemory {`,
		New:  `if s.DeadLetterRoutingKey == "" && s.Transport != config.TransportMemory {`,
		Run:  "^TestUnacceptableDiscarded_R17$", Pkg: "./internal/lint"},
	{Name: "lint-unbounded-redelivery-native-ignored", What: "unbounded-redelivery ignores the native limit: a subscription with no budget whose broker moves poison messages (sqs.redrivePolicy, gcp.deadLetterPolicy) is still reported as looping for ever",
		File: "internal/lint/lint.go",
		Old:  "\t\tif _, ok := tr.NativeLimit(s); !ok {\n\t\t\tc.add(RuleUnboundedRedelivery,",
		New:  "\t\tif _, ok := tr.NativeLimit(s); true || !ok {\n\t\t\tc.add(RuleUnboundedRedelivery,",
		Run:  "^TestUnboundedRedelivery_R6$", Pkg: "./internal/lint"},
	{Name: "lint-restarts-budget-edge", What: "restarts-spend-budget misses a budget one lost delivery brings down to a single handler run (requeueCount 2 against a kill)",
		File: "internal/lint/restarts.go",
		Old:  "spends := r <= rc.lost+1",
		New:  "spends := r <= rc.lost",
		Run:  "^TestRestartsSpendBudget$", Pkg: "./internal/lint"},
	{Name: "lint-restarts-drain-unjudged", What: "restarts-spend-budget takes every graceful stop to get through the buffer, whatever drainTimeout and handler.timeout",
		File: "internal/lint/restarts.go",
		Old:  "c.drainShort = s.DrainTimeout < c.drainNeeds",
		New:  "c.drainShort = s.DrainTimeout < 0",
		Run:  "^TestRestartsSpendBudget$", Pkg: "./internal/lint"},
	{Name: "lint-ordering-cost-whole-batch", What: "ordering-spends-budget says one deferral costs every message received with it, the deferred one included, rather than the later ones",
		File: "internal/lint/rules/rules.go",
		Old:  "behind := atOnce - 1",
		New:  "behind := atOnce",
		Run:  "^TestOrderingSpendsBudget_CostOfOneDeferral$", Pkg: "./internal/lint"},
}

// lintNativeLimitMutants break restarts-reach-native-limit (a native
// redrive limit within the deliveries the budget forgives) and what
// restarts-spend-budget says of stops and crashes that catch one message
// every time.
var lintNativeLimitMutants = []mutant{
	{Name: "lint-native-limit-forgiveness-ignored", What: "restarts-reach-native-limit takes requeueCount + 1 deliveries for what brighter needs before it routes, so a native limit between requeueCount and 2 x requeueCount (the old examples' maxReceiveCount 5 for requeueCount 3) passes and stops and crashes move messages there with no reason",
		File: "internal/lint/lint.go",
		Old:  "func ForgivenDeliveries(requeueCount int) int { return 2 * max(requeueCount, 1) }",
		New:  "func ForgivenDeliveries(requeueCount int) int { return max(requeueCount, 1) }",
		Run:  "^(TestRestartsReachNativeLimit_R10|TestRestartsSpendBudget)$", Pkg: "./internal/lint"},
	{Name: "lint-native-limit-at-2r-plus-1", What: "restarts-reach-native-limit also reports a native limit of exactly 2 x requeueCount + 1, which lets the delivery brighter routes on reach it",
		File: "internal/lint/lint.go",
		Old:  "} else if ok && m.Value < ForgivenDeliveries(s.RequeueCount)+1 {",
		New:  "} else if ok && m.Value <= ForgivenDeliveries(s.RequeueCount)+1 {",
		Run:  "^(TestRestartsReachNativeLimit_R10|TestExamplesHaveNoWarnings_AC32)$", Pkg: "./internal/lint"},
}

// lintStreamHoldMutants break requeue-delay-lost-at-stop: a Pub/Sub stream
// subscription whose requeueDelay a stop does not keep.
var lintStreamHoldMutants = []mutant{
	{Name: "lint-stream-hold-mode-ignored", What: "requeue-delay-lost-at-stop also reports a Pub/Sub subscription in pull mode, whose deferral the broker keeps across stops, and advises the mode it already has",
		File: "internal/lint/rules/rules.go",
		Old:  "if s.GCP.Mode != config.GCPModePull && s.RequeueDelay > limits.PubSubStreamHoldAcrossStop {",
		New:  "if s.RequeueDelay > limits.PubSubStreamHoldAcrossStop {",
		Run:  "^TestRequeueDelayLostAtStop_R4$", Pkg: "./internal/lint"},
	{Name: "lint-stream-hold-unchecked", What: "a Pub/Sub stream subscription with a requeueDelay longer than a stop keeps passes lint, and every rolling deploy brings its deferrals back at once",
		File: "internal/lint/rules/rules.go",
		Old:  "if s.GCP.Mode != config.GCPModePull && s.RequeueDelay > limits.PubSubStreamHoldAcrossStop {",
		New:  "if s.GCP.Mode != config.GCPModePull && s.RequeueDelay > 100*limits.PubSubStreamHoldAcrossStop {",
		Run:  "^TestRequeueDelayLostAtStop_R4$", Pkg: "./internal/lint"},
}
