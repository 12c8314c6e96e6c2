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
	{Name: "config-range-shows-expanded", What: "a range a transport checks after the field was read (an SQS requeueDelay above 12h) shows the value a ${VAR} expanded to",
		File: "internal/config/values.go",
		Old:  "\tif raw, ok := d.raw[e.path]; ok {\n\t\tgot = ",
		New:  "\tif raw, ok := d.raw[e.path]; ok && false {\n\t\tgot = ",
		Run:  "^TestErrors_OnlyTheNodesOwnValueIsShownAsWritten$", Pkg: "./internal/config"},
	{Name: "lint-requeue-delay-range-as-warning-rule", What: "a requeueDelay the parser refuses is reported as an error under requeue-delay-exceeds-limit, a rule whose metadata says warning",
		File: "internal/lint/lint.go",
		Old:  "\t{\".requeueDelay\", RuleRequeueDelayRange},\n",
		New:  "\t{\".requeueDelay\", RuleRequeueDelayExceedsLimit},\n",
		Run:  "^(TestConfigFindings_SeverityIsTheRules|TestRequeueDelayRange)$", Pkg: "./internal/lint"},
	{Name: "lint-gcp-retry-policy-unchecked", What: "a Pub/Sub retry policy makeChannels: create would make and Pub/Sub refuses (a requeueDelay above 600s or above gcp.maxRequeueDelay) is not reported, so lint passes the file and consume starts it and fails creating the subscription",
		File: "internal/lint/rules/rules.go",
		Old:  "\tout := retryPolicy(s)\n",
		New:  "\tout := retryPolicy(s)[:0]\n",
		Run:  "^TestGCPRetryPolicyRange$", Pkg: "./internal/lint"},
}

// cfgLintLocalMutants break the rules lint judges on the local file system
// (internal/lint/local): what consume opens or runs at start-up.
var cfgLintLocalMutants = []mutant{
	{Name: "lint-local-command-unchecked", What: "an exec handler's command that cannot be run is not reported, so lint passes a file consume refuses (exit 2)",
		File: "internal/lint/local/local.go",
		Old:  "\t\t\tif err := commandError(h.Command, h.Env[\"PATH\"]); err != nil {\n",
		New:  "\t\t\tif err := commandError(h.Command, h.Env[\"PATH\"]); err != nil && false {\n",
		Run:  "^TestCheck_WhatConsumeRefusesToStart$", Pkg: "./internal/lint/local"},
	{Name: "lint-local-tls-unchecked", What: "an http handler's tls files are not loaded by lint, so a missing CA file or a certificate and key that are not a pair pass lint and consume refuses them",
		File: "internal/lint/local/local.go",
		Old:  "\t\tif h := s.Handler; h.Type == config.HandlerHTTP && h.TLS != nil {\n",
		New:  "\t\tif h := s.Handler; h.Type == config.HandlerHTTP && h.TLS != nil && false {\n",
		Run:  "^TestCheck_WhatConsumeRefusesToStart$", Pkg: "./internal/lint/local"},
	{Name: "lint-local-seed-only-opened", What: "a memory seed file is opened but not loaded, so a seed that does not parse passes lint and consume refuses it",
		File: "internal/lint/local/local.go",
		Old:  "\t_, err = memory.NewBroker(false).Load(ctx, fh, queue)\n",
		New:  "\t_, err = memory.NewBroker(false).Load(ctx, fh, queue)\n\terr = nil\n",
		Run:  "^TestCheck_WhatConsumeRefusesToStart$", Pkg: "./internal/lint/local"},
	{Name: "lint-local-not-run", What: "brighter lint does not run the file-system rules, so it exits 0 on a file whose command or seed consume refuses",
		File: "internal/cmd/lint/lint.go",
		Old:  "\t\t\tfs = append(fs, local.Check(ctx, f)...)\n",
		New:  "\t\t\t_ = local.Check\n",
		Run:  "^TestLint_RefusesWhatConsumeCannotStart$", Pkg: "./internal/cmd/lint"},
}
