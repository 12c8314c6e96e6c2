package main

// newUserMutants: what a new user following the README met: an AWS SDK
// line past --log-format json, tests writing the real replay history,
// send creating or missing destinations silently, and usage errors.
var newUserMutants = []mutant{
	{Name: "sqs-sdk-logger-default", What: "the AWS SDK keeps its default logger: its \"falling back to IMDSv1\" warning is a raw line on stderr, past --log-format json",
		File: "internal/broker/sqs/clients.go",
		Old:  "\topts = append(opts, config.WithLogger(newSDKLogger(conn.Logger)))\n",
		New:  "\t_ = newSDKLogger\n",
		Run:  "^TestSDKWarningIsOneRecordOfTheCommandsLogger$", Pkg: "./internal/broker/sqs"},
	{Name: "retry-history-ignores-endpoint", What: "the retry history of a dead-letter destination is read by its URL alone: an emulator's replays and restores show in the console of the production queue of the same name",
		File: "internal/inspect/history.go",
		Old:  "\t\tif r.Endpoint != endpoint {\n",
		New:  "\t\tif false && r.Endpoint != endpoint {\n",
		Run:  "^(TestReplay_RecordsRetryHistory|TestRestore_RecordsRestoresInHistory)$", Pkg: "./internal/inspect"},
}
