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
}
