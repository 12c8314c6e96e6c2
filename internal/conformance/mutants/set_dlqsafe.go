package main

// dlqSafeMutants guard `dlq` against duplicate copies and shared state:
// every copy of an id counted and acted on, restore's check for ids
// already in the destination, the replay journal's lock, and the guard
// that keeps a replay from a dead-letter queue shared by several
// subscribers from fanning out again.
var dlqSafeMutants = []mutant{
	{Name: "restore-duplicates-unchecked", What: "dlq restore publishes a record whose id the dead-letter destination already holds, without asking: run twice it makes a second copy of each",
		File: "internal/cmd/dlq/dlq_archive.go",
		Old:  "\tif len(there) == 0 || o.yes || o.dryRun {\n",
		New:  "\tif true || len(there) == 0 || o.yes || o.dryRun {\n",
		Run:  "^TestDLQRestore_RefusesIDsAlreadyThere$", Pkg: "./internal/cmd/dlq"},
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
