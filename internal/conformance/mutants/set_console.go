package main

// consoleMutants break the safety rules of the `dlq triage` console: a
// selection belongs to the failure group it was made in, and the console's
// replays (r, R, and e's edited copy) go through the replay allow-list as
// dlq replay's do.
var consoleMutants = []mutant{
	{Name: "triage-selection-crosses-groups", What: "a selection made in one failure group is kept when the cursor moves to another group, so r there replays the first group's messages",
		File: "internal/tui/triage/state.go",
		Old:  "\t\tm.sel, m.selGroup = map[string]bool{}, id\n",
		New:  "\t\tm.selGroup = id\n",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageSelectionBelongsToItsGroup$"},
	{Name: "triage-console-allow-list-dropped", What: "the console's replays (r, R, e) are not given the allow-list: a dead letter whose originalTopic is forged is published to the queue it names",
		File: "internal/cmd/dlq/triage/replay.go",
		Old:  "opts := inspect.ReplayOptions{To: a.to, Allow: a.allow,",
		New:  "opts := inspect.ReplayOptions{To: a.to, Allow: nil,",
		Pkg:  "./internal/cmd/dlq/triage", Run: "^TestDLQTriage_ConsoleAppliesTheAllowList$"},
}
