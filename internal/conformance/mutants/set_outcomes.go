package main

// outcomeMutants break what a command says about its own outcome: a lint
// whose infrastructure files could not be read, a Config Connector
// dead-letter topic named by reference, a dry-run replay to a destination
// that does not exist. No message flows through them, so no conformance
// row can observe them: the command tests kill them.
var outcomeMutants = []mutant{
	{Name: "lint-infra-unread-claims-clean", What: "lint --infra with an infrastructure file that cannot be read still writes its summary (\"no findings in 1 file\", a JSON summary, a successful SARIF run): the report passes for a clean result",
		File: "internal/cmd/lint/lint.go",
		Old:  `infraUnread = true`,
		New:  `infraUnread = false`,
		Run:  "^TestLintInfraUnreadableClaimsNoCleanResult$", Pkg: "./internal/cmd/lint"},
	{Name: "krm-dead-letter-ref-by-name-unjudged", What: "a Config Connector deadLetterTopicRef by name to a topic no --infra file declares stays Unknown: a dead-letter policy that sends to another topic than the subscriptions file names is not reported, and nothing says it was not judged",
		File: "internal/lint/infra/krm/krm.go",
		Old:  `dl.V, dl.State = dl.Ref[strings.LastIndex(dl.Ref, "/")+1:], infra.Known`,
		New:  `_ = dl`,
		Run:  "^TestLintInfraConfigConnectorDeadLetterRefByName$", Pkg: "./internal/cmd/lint"},
	{Name: "krm-address-empty-namespace", What: "a Kubernetes object without a namespace is named Kind//name (an empty namespace segment) in findings, not Kind/name",
		File: "internal/lint/infra/krm/krm.go",
		Old:  "\t\treturn kind + \"/\" + name\n",
		New:  "\t\treturn kind + \"//\" + name\n",
		Run:  "^TestRead_MergeKeysAndAliasesAreFollowed$", Pkg: "./internal/lint/infra/krm"},
	{Name: "dlq-dry-run-to-unchecked", What: "a dry run does not look up --to: a replay to a queue that does not exist says it would replay every message, and the real run then fails them all",
		File: "internal/cmd/dlq/shared/replay.go",
		Old:  `if o.DryRun && to != "" {`,
		New:  `if false && to != "" {`,
		Run:  "^TestDLQReplay_DryRunRefusesMissingTo$", Pkg: "./internal/cmd/dlq/replay"},
	{Name: "dlq-journal-unpublished-may-have-reached", What: "the kept journal's notice says a failed publish may still have reached its destination for a message that failed before any publish (no destination): the operator looks for a copy that cannot exist",
		File: "internal/cmd/dlq/shared/journal.go",
		Old:  `if n := failed - unpublished; n > 0 {`,
		New:  `if n := failed; n > 0 {`,
		Run:  "^TestDLQReplay_JournalKeptSaysNothingWasSentForUnpublishedFailures$", Pkg: "./internal/cmd/dlq/replay"},
	{Name: "lint-infra-unread-claims-undeclared", What: "lint --infra with an infrastructure file that cannot be read reports infra-undeclared for channels that file may declare: a false \"no infrastructure file given declares\"",
		File: "internal/cmd/lint/lint.go",
		Old:  `infraFs = slices.DeleteFunc(infraFs, func(fd lint.Finding) bool { return fd.RuleID == lint.RuleInfraUndeclared })`,
		New:  `infraFs = slices.DeleteFunc(infraFs, func(fd lint.Finding) bool { return false })`,
		Run:  "^TestLintInfraUnreadable$", Pkg: "./internal/cmd/lint"},
	{Name: "dlq-dry-run-to-unchecked-pubsub", What: "on Pub/Sub the dry run's lookup of --to finds every topic: a replay to a topic that does not exist says it would replay, and the real run then fails every message",
		File: "internal/broker/gcp/producer.go",
		Old:  `if _, err := p.client.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: name}); err != nil {`,
		New:  `if err := error(nil); err != nil {`,
		Run:  "^TestDLQReplay_DryRunRefusesMissingTo_PubSub$", Pkg: "./internal/cmd/dlq/replay"},
}
