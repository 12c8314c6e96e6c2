package main

// dlqBatchMutants break the batching and end-of-scan rules of the dlq
// verbs on SQS: releases ten per call, one batch per receive, and an end
// proved by one long poll made after every move, confirmed by a short poll.
var dlqBatchMutants = []mutant{
	{Name: "dlq-release-one-per-call", What: "a scan releases the messages it held with one ChangeMessageVisibility each (50,000 calls for a 50,000-message peek) instead of ten per ChangeMessageVisibilityBatch",
		File: "internal/inspect/scan.go",
		Old:  "\tbr, batched := src.Consumer.(broker.BatchReleaser)\n",
		New:  "\tbr, batched := src.Consumer.(broker.BatchReleaser)\n\tbatched = false\n",
		Run:  "^TestPeek_ReleasesTenPerCall$", Pkg: "./internal/inspect"},
	{Name: "sqs-release-batch-claims-success", What: "the SQS consumer's ReleaseBatch releases nothing and reports every message released",
		File: "internal/broker/sqs/consumer.go",
		Old:  "\treturn k.visibilityBatch(ctx, ms, 0, \"release\")\n",
		New:  "\treturn make([]error, len(ms))\n",
		Run:  "^TestReleaseBatch_TenPerCall_RefusedEntryReported$", Pkg: "./internal/broker/sqs"},
	{Name: "dlq-replay-spreads-receive", What: "a replay spreads one receive's messages (no partition key) over its workers by id, so each SendMessageBatch and DeleteMessageBatch carries two or three instead of ten",
		File: "internal/inspect/replay.go",
		Old:  "\t\tif m.Header.PartitionKey == \"\" {\n\t\t\tloose = append(loose, j)\n",
		New:  "\t\tif false {\n\t\t\tloose = append(loose, j)\n",
		Run:  "^TestReplay_Batched_OneSendOneDeletePerReceive$", Pkg: "./internal/inspect"},
	{Name: "dlq-replay-long-polls-at-end", What: "a replay on SQS long-polls while its moves are under way, so the empty long poll that comes back during the last moves is followed by a second one: two --wait long polls to prove the end",
		File: "internal/inspect/replay.go",
		Old:  "\t\th.pollShort = func() bool { return handed > 0 }\n",
		New:  "\t\th.pollShort = func() bool { return false }\n",
		Run:  "^TestReplay_ShortPoll_EndProvedByOneLongPollThenShort$", Pkg: "./internal/inspect"},
	{Name: "dlq-scan-early-short-poll-counts", What: "an empty short poll made while handed-over work was under way counts towards the end, so a replay --copy (no remove to report) ends on two short polls, which sample only some SQS servers",
		File: "internal/inspect/scan.go",
		Old:  "\t\t\tif early {\n\t\t\t\tcontinue\n\t\t\t}\n",
		New:  "\t\t\tif false && early {\n\t\t\t\tcontinue\n\t\t\t}\n",
		Run:  "^TestReplay_Copy_ShortPoll_EndStillNeedsALongPoll$", Pkg: "./internal/inspect"},
}
