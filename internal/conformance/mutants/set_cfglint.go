package main

// cfgLintMutants break what keeps configuration errors and brighter lint
// true to the file and to consume: an error quotes as written only its own
// field's ${VAR} value, a value the parser refuses is reported under a rule
// whose severity is the finding's, and lint refuses what consume refuses
// on the file system. No message flows through any of them, so
// internal/config's and internal/lint's tests kill them.
var cfgLintMutants = []mutant{
	{Name: "config-written-keeps-empty-value", What: "a ${VAR} that expands to nothing is recorded by its value, so every quoted empty text of a finding becomes that variable",
		File: "internal/config/values.go",
		Old:  "\tif value == \"\" || value == raw {\n",
		New:  "\tif value == raw {\n",
		Run:  "^TestAsWritten_OnlyTheSubscriptionsOwnValues$", Pkg: "./internal/config"},
	{Name: "config-written-shared-by-subscriptions", What: "every subscription shares the file's as-written table, so a finding quotes as a variable a plain value equal to what another subscription's ${VAR} expanded to",
		File: "internal/config/subscription.go",
		Old:  "\t\tIndex: i,\n",
		New:  "\t\tIndex: i, written: d.f.written,\n",
		Run:  "^TestAsWritten_OnlyTheSubscriptionsOwnValues$", Pkg: "./internal/config"},
	{Name: "config-names-quote-by-value", What: "a name error quotes the name as written by another field whose ${VAR} expanded to the same text",
		File: "internal/config/names.go",
		Old:  "shorten(d.writtenAt(s.Path()+\".\"+from, value))",
		New:  "shorten(d.writtenAt(s.Path()+\".\"+from[:0]+\"name\", value))",
		Run:  "^TestErrors_OnlyTheNodesOwnValueIsShownAsWritten$", Pkg: "./internal/config"},
	{Name: "lint-requeue-delay-range-as-warning-rule", What: "a requeueDelay the parser refuses is reported as an error under requeue-delay-exceeds-limit, a rule whose metadata says warning",
		File: "internal/lint/lint.go",
		Old:  "\t{\".requeueDelay\", RuleRequeueDelayRange},\n",
		New:  "\t{\".requeueDelay\", RuleRequeueDelayExceedsLimit},\n",
		Run:  "^(TestConfigFindings_SeverityIsTheRules|TestRequeueDelayRange)$", Pkg: "./internal/lint"},
}
