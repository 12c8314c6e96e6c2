package main

// evidenceMutants break rules that only a test on their own layer sees:
// `dlq peek -o json` masks a forged originalTopic as the table does, a
// replay keeps a FIFO group's messages in order through one worker, a
// journal cut by a crash mid-line stays readable, the console runs one
// action at a time, `dlq edit --set` finds a stored header whatever its
// key's case, and archive and journal writes are durable before anything
// is removed.
var evidenceMutants = []mutant{
	{Name: "peek-json-unredacted", What: "dlq peek -o json writes a stored forged originalTopic (and rejection texts) with the credentials the table masks",
		File: "internal/inspect/peek.go",
		Old:  "line, err := message.MarshalRecordJSON(shownRecord(m))",
		New:  "line, err := message.MarshalRecordJSON(m)",
		Pkg:  "./internal/inspect", Run: "^TestJSONLines_ForgedDestinationCredentialsAreMasked$"},
	{Name: "journal-cut-line-read", What: "a replay journal whose last line a crash cut mid-write is refused as not a journal (or the cut text read as a record): the replay cannot resume",
		File: "internal/inspect/journal.go",
		Old:  "\t\t\t\tj.cut = line\n\t\t\t\tbreak\n",
		New:  "\t\t\t\tif err := j.read(line); err != nil {\n\t\t\t\t\tfh.Close()\n\t\t\t\t\treturn nil, fmt.Errorf(\"replay journal %s:%d: %w\", path, n+1, err)\n\t\t\t\t}\n\t\t\t\tbreak\n",
		Pkg:  "./internal/inspect ./internal/cmd/dlq", Run: "^(TestJournal_LineCutByACrashIsDroppedAndTheRunResumes|TestDLQReplay_JournalLineCutByACrashIsReportedAndTheRunResumes)$"},
	{Name: "journal-cut-line-kept", What: "the line a crash cut is left in the replay journal, so the next record is glued to it and the journal the resumed run leaves is unreadable",
		File: "internal/inspect/journal.go",
		Old:  "\tif j.cut != \"\" {\n",
		New:  "\tif false && j.cut != \"\" {\n",
		Pkg:  "./internal/inspect", Run: "^TestJournal_LineCutByACrashIsDroppedAndTheRunResumes$"},
	{Name: "replay-group-spread", What: "a replay hands each message of a FIFO group (partition key) to a worker by its own id: the group's messages are published by several workers at once and arrive out of order",
		File: "internal/inspect/replay.go",
		Old:  "\t\tkey := m.Header.PartitionKey\n",
		New:  "\t\tkey := \"\"\n",
		Pkg:  "./internal/inspect", Run: "^TestReplay_MessageGroupGoesThroughOneWorkerInOrder$"},
	{Name: "edit-set-field-case", What: "dlq edit --set CorrelationId=x (a header field in another case) becomes a bag entry no transport sends instead of setting the field",
		File: "internal/inspect/edit.go",
		Old:  "\t\tif strings.EqualFold(name, key) {\n",
		New:  "\t\tif name == key {\n",
		Pkg:  "./internal/inspect", Run: "^TestEditSet_KeysMatchWhateverTheirCase$"},
	{Name: "edit-set-bag-key-case", What: "dlq edit --set tenant=x on a message whose bag holds Tenant adds a second entry differing only in case",
		File: "internal/inspect/edit.go",
		Old:  "\th.Bag[storedKey(h.Bag, key)] = value\n",
		New:  "\th.Bag[key] = value\n",
		Pkg:  "./internal/inspect", Run: "^TestEditSet_KeysMatchWhateverTheirCase$"},
	{Name: "triage-busy-keys-unblocked", What: "the triage console takes a, r, R and e while an action runs: a second action is asked for and started beside the first",
		File: "internal/tui/triage/keys.go",
		Old:  "\tif m.busy != \"\" {\n\t\t// One action at a time: keys wait",
		New:  "\tif false {\n\t\t// One action at a time: keys wait",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageOneActionAtATime$"},
	{Name: "triage-confirm-while-busy", What: "an edit whose editor ends while the console's replay runs is replayed on y beside it",
		File: "internal/tui/triage/keys.go",
		Old:  "\t\t\tif m.busy != \"\" {\n\t\t\t\t// One action at a time: a question",
		New:  "\t\t\tif false {\n\t\t\t\t// One action at a time: a question",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageOneActionAtATime$"},
}
