package main

// firstRunMutants break what a first run of the commands meets: the AWS
// SDK's own log line past --log-format json, the replay history kept per
// endpoint, send creating or missing destinations silently, and usage
// errors.
var firstRunMutants = []mutant{
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
	{Name: "sqs-producer-creates-queue-silently", What: "a producer that creates a missing queue (makeChannels create) logs nothing: a typo in send --topic makes a stray queue unseen",
		File: "internal/broker/sqs/producer.go",
		Old:  "\t\tif q.log != nil {\n",
		New:  "\t\tif q.log != nil && false {\n",
		Run:  "^TestSendThatCreatesAQueueSaysSo$", Pkg: "./internal/cmd/send"},
	{Name: "gcp-send-missing-topic-bare-notfound", What: "send to a Pub/Sub topic that does not exist fails with the bare NotFound, naming neither the topic's full name nor how to make it",
		File: "internal/transport/gcp.go",
		Old:  "\tif status.Code(err) != codes.NotFound {\n\t\treturn err\n",
		New:  "\tif true {\n\t\treturn err\n",
		Run:  "^TestSendToAMissingPubSubTopicSaysHowToMakeIt$", Pkg: "./internal/cmd/send"},
	{Name: "listen-port-range-unchecked", What: "a --listen port over 65535 is accepted until the listen fails, instead of refused at once naming the range",
		File: "internal/observe/server.go",
		Old:  "\tif n < 0 || n > 65535 {\n",
		New:  "\tif n < 0 || n > 99999 {\n",
		Run:  "^(TestListenAddr_OutOfRangePortQuotedAsGiven|TestListenAddr_LoopbackByDefault)$", Pkg: "./internal/observe"},
	{Name: "send-empty-body-reaches-broker", What: "send with an empty body goes to the broker, which refuses it as a failure (exit 1) where every other body error is a usage error (exit 2)",
		File: "internal/cmd/send/send.go",
		Old:  "\tif len(body) == 0 {\n",
		New:  "\tif false {\n",
		Run:  "^TestScripts$/^usage_errors$", Pkg: "./internal/cmd/root"},
	{Name: "config-missing-no-flag-hint", What: "a subscriptions file that does not exist is reported as a bare \"open brighter.yaml: no such file\", not naming -c/--config",
		File: "internal/cmd/cmdutil/flags.go",
		Old:  "\tif !errors.Is(err, fs.ErrNotExist) {\n",
		New:  "\tif !errors.Is(err, fs.ErrNotExist) || true {\n",
		Run:  "^TestScripts$/^usage_errors$", Pkg: "./internal/cmd/root"},
}
