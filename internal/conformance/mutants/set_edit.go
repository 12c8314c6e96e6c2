package main

// editMutants are the mutants of dlq edit and the triage console:
// each is killed by the named tests.
var editMutants = []mutant{
	{Name: "edit-changed-original-sent", What: "an edit is replayed although the dead-lettered body changed since it was edited (originalBodySha256 would be a lie)",
		File: "internal/inspect/edit.go",
		Old:  "if got := BodySHA256(m.Body); got != e.OriginalSHA256 {",
		New:  "if got := BodySHA256(m.Body); false && got != e.OriginalSHA256 {",
		Run:  "TestEditTransform", Pkg: "./internal/inspect"},
	{Name: "edit-json-unchecked", What: "an edited body that is not valid JSON is sent although its content type says JSON",
		File: "internal/inspect/edit.go",
		Old:  "if !IsJSON(contentType) {",
		New:  "if true || !IsJSON(contentType) {",
		Run:  "TestEditTransform", Pkg: "./internal/inspect"},
	{Name: "edit-transform-ignored", What: "dlq edit replays the original, not the edited copy (the replay skips its transform)",
		File: "internal/inspect/replay.go",
		Old:  "if o.Transform != nil {",
		New:  "if false && o.Transform != nil {",
		Run:  "TestDLQEdit_EveryTransport/sqs", Pkg: "./internal/cmd/dlq/edit"},
	{Name: "triage-any-key-confirms", What: "the triage console runs a destructive action on any answer, not only y",
		File: "internal/tui/triage/keys.go",
		Old:  "if k.Yes.Matches(msg) {",
		New:  "if true {",
		Run:  "TestTriageConsole", Pkg: "./internal/tui/triage"},
}
