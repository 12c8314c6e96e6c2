package main

// dlqSafeMutants guard `dlq` against duplicate copies and shared state:
// every copy of an id counted and acted on, restore's check for ids
// already in the destination, the replay journal's lock, and the guard
// that keeps a replay from a dead-letter queue shared by several
// subscribers from fanning out again.
var dlqSafeMutants = []mutant{
	{Name: "limit-receive-order", What: "dlq replay --limit takes the first messages the broker hands out, so a dry run and the run after it can pick different ones",
		File: "internal/cmd/dlq/shared/replay.go",
		Old:  "\tif f.Limit > 0 && o.EditID == \"\" {\n",
		New:  "\tif false && f.Limit > 0 && o.EditID == \"\" {\n",
		Run:  "^TestDLQReplay_LimitPicksTheSameWithAndWithoutDryRun$", Pkg: "./internal/cmd/dlq/replay"},
	{Name: "shared-dlq-fans-out", What: "a replay from a dead-letter destination shared by several subscriptions of one topic publishes through the topic: every subscriber gets the event again",
		File: "internal/cmd/dlq/shared/fanout.go",
		Old:  "\t\tif len(mine) > 1 {\n",
		New:  "\t\tif false && len(mine) > 1 {\n",
		Run:  "^TestDLQReplay_(SNSSharedDLQ_RefusedNotFannedOut|PubSubSharedDeadLetterTopic_Refused)$", Pkg: "./internal/cmd/dlq/replay"},
	{Name: "triage-fanout-blocks-open", What: "dlq triage on a destination the fan-out guard refuses does not open, even to look",
		File: "internal/cmd/dlq/shared/replay.go",
		Old:  "\trefused = guard.check(\"replay\")\n\treturn \"\", guard.allow(allow), guard, refused, nil\n",
		New:  "\trefused = guard.check(\"replay\")\n\treturn \"\", guard.allow(allow), guard, nil, refused\n",
		Run:  "^TestDLQTriage_SharedDeadLetterTopic_OpensToLook$", Pkg: "./internal/cmd/dlq/triage"},
	{Name: "restore-duplicates-unchecked", What: "dlq restore publishes a record whose id the dead-letter destination already holds, without asking: run twice it makes a second copy of each",
		File: "internal/cmd/dlq/restore/restore.go",
		Old:  "\tif len(there) == 0 || o.yes || o.dryRun {\n",
		New:  "\tif true || len(there) == 0 || o.yes || o.dryRun {\n",
		Run:  "^TestDLQRestore_RefusesIDsAlreadyThere$", Pkg: "./internal/cmd/dlq/restore"},
	{Name: "copies-merged", What: "a scan takes two stored copies with the same id and rejection time for one: stats undercount, archive and replay leave the second behind",
		File: "internal/inspect/scan.go",
		Old:  "\tif m.StoredID != \"\" {\n",
		New:  "\tif false && m.StoredID != \"\" {\n",
		Run:  "^TestCopies_", Pkg: "./internal/inspect"},
	{Name: "copies-replayed-twice", What: "a replay publishes every stored copy of one failure: subscribers get the event once per copy",
		File: "internal/inspect/replay.go",
		Old:  "\t\t\tif j.out.Duplicate {\n",
		New:  "\t\t\tif false && j.out.Duplicate {\n",
		Run:  "^TestCopies_ReplayRemovesEveryCopyPublishesOnce$", Pkg: "./internal/inspect"},
	{Name: "journal-unlocked", What: "a second replay opens a journal another replay holds: the first to finish deletes it under the other",
		File: "internal/inspect/journal_lock.go",
		Old:  "if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {",
		New:  "if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); false && err != nil {",
		Run:  "^TestJournal_LockRefusesASecondRunAndFreesOnDeath$", Pkg: "./internal/inspect"},
}
