package main

// dlqMutants are issue 30's dlq replay mutants: the fan-out guard (and,
// below, the resumable replay's journal).
var dlqMutants = []mutant{
	{Name: "fanout-sns-through-topic", What: "a replay without --to of an SNS-fed subscription's dead letter goes through the topic to every subscriber instead of to the failed subscription's queue",
		File: "cmd/brighter/dlq_fanout.go",
		Old:  "\t\td.route = g.ft.directQueue(g.t, mine[0])\n",
		New:  "",
		Run:  "^TestDLQReplay_SNSFanOut_FailedSubscriberOnly_Issue30$", Pkg: "./cmd/brighter"},
	{Name: "fanout-pubsub-unguarded", What: "a replay without --to into a Pub/Sub topic with other subscriptions goes ahead without --fan-out",
		File: "cmd/brighter/dlq_fanout.go",
		Old:  "\tif len(refusals) == 0 {\n",
		New:  "\tif true {\n",
		Run:  "^TestDLQReplay_PubSubFanOut_RefusedWithoutFlag_Issue30$", Pkg: "./cmd/brighter"},
	{Name: "journal-resent", What: "a resumed replay publishes again a copy the journal records as sent by an earlier run",
		File: "internal/inspect/replay.go",
		Old:  "\t\t\tif journal != nil && journal.Sent(rid) {\n",
		New:  "\t\t\tif false && journal != nil && journal.Sent(rid) {\n",
		Run:  "^TestDLQReplay_JournalResumes_Issue30$", Pkg: "./cmd/brighter"},
	{Name: "group-completion-unfiltered-prefix", What: "--group-id completion offers every group whatever prefix was typed",
		File: "cmd/brighter/completion.go",
		Old:  "\t\tif strings.HasPrefix(g.ID, toComplete) {\n",
		New:  "\t\tif strings.HasPrefix(g.ID, toComplete) || true {\n",
		Run:  "^TestDLQ_GroupIDCompletion_Issue30$", Pkg: "./cmd/brighter"},
}
