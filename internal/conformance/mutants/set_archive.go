package main

// archiveMutants are the `dlq archive` speed-up mutants: the short
// confirming receive and the archive's receive overlapping its commit must
// keep the proof of the end and lose nothing.
var archiveMutants = []mutant{
	{Name: "scan-end-unconfirmed", What: "one empty receive ends a scan: a long poll answered empty early by a busy broker ends the archive with the messages unread",
		File: "internal/inspect/scan.go",
		Old:  "\t\t\tif empty++; empty < emptyReceives {\n",
		New:  "\t\t\tif empty++; empty < 1 {\n",
		Run:  "^TestArchive_ShortPoll_EarlyEmptyConfirmed$", Pkg: "./internal/inspect"},
	{Name: "archive-inflight-empty-counts", What: "an empty short poll made while a remove was under way counts towards the end, so the end is proved without a long poll after every remove",
		File: "internal/inspect/archive.go",
		Old:  "\t\t\tagain := commits != settled\n",
		New:  "\t\t\tagain := false && commits != settled\n",
		Run:  "^TestArchive_ShortPoll_OverlapsSyncsFirstProvesEnd$", Pkg: "./internal/inspect"},
	{Name: "archive-readahead-kept", What: "when a commit fails, the receive read ahead meanwhile is not released (its messages stay invisible for the visibility timeout)",
		File: "internal/inspect/archive.go",
		Old:  "\t\trelease(nctx, src, holds(pending))\n",
		New:  "",
		Run:  "^TestArchive_ShortPoll_SyncFailsMidway_LosesNothing$", Pkg: "./internal/inspect"},
	{Name: "restore-keyed-at-once", What: "a restore publishes several batches of one message group at once, so the group can arrive out of the archive's order",
		File: "internal/inspect/archive.go",
		Old:  "\t\twindow = 1\n",
		New:  "\t\twindow = restoreInFlight\n",
		Run:  "^TestRestore_Keyed_OneBatchAtATimeInOrder$", Pkg: "./internal/inspect"},
}
