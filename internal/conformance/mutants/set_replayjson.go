package main

// replayJSONMutants are the `dlq replay -o json` mutants: each
// record promised by docs/commands/dlq.md must carry its fields, on the
// emulators (testdata/scripts/dlq_replay_json_*.txtar).
var replayJSONMutants = []mutant{
	{Name: "replay-json-would-refuse-no-error", What: "a dry run's would-refuse record carries no error, so a script cannot tell why the message would stay",
		File: "internal/inspect/progress.go",
		Old:  "\t\tr.Outcome, r.Error = \"would-refuse\", refused\n",
		New:  "\t\tr.Outcome = \"would-refuse\"\n",
		Run:  "^TestScripts$/^dlq_replay_json_pubsub$", Pkg: "./internal/cmd/root"},
}
