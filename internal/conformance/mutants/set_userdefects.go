package main

// userDefectMutants: what a new user trying the README met: a memory://
// file path holding "+", lint --live on a silent SQS endpoint, and dlq
// commands that ignored a signal while connecting.
var userDefectMutants = []mutant{
	{Name: "memory-file-plus-as-space", What: "a \"+\" in memory://QUEUE?file=PATH is decoded as a space, so dlq reads (or creates) another file than the one named",
		File: "internal/broker/memory/address.go",
		Old:  "\t\tvalue, err := url.PathUnescape(v)\n",
		New:  "\t\tvalue, err := url.QueryUnescape(v)\n",
		Run:  "^TestScripts$/^dlq_memory_file_path$", Pkg: "./internal/cmd/root"},
	{Name: "lint-live-sqs-no-lookup-deadline", What: "lint --live gives an SQS look-up no deadline of its own: on an endpoint that accepts and never answers the SDK's retries run out the whole --live-timeout (30s) and the finding names no endpoint",
		File: "internal/transport/live.go",
		Old:  ", CallDeadline: LiveLookupTimeout})",
		New:  "})",
		Run:  "^TestLintLive_SilentSQSEndpointGivesUpNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "sqs-call-deadline-yields-to-later", What: "an SQS client's CallDeadline yields to any deadline of the caller, however later: lint --live's look-ups wait out --live-timeout",
		File: "internal/broker/sqs/deadline.go",
		Old:  "if dl, ok := ctx.Deadline(); ok && (limit <= 0 || time.Until(dl) <= limit) {",
		New:  "if dl, ok := ctx.Deadline(); ok && dl.After(time.Time{}) {",
		Run:  "^TestLintLive_SilentSQSEndpointGivesUpNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-live-sqs-unanswered-asked-again", What: "lint --live asks an SQS endpoint that let a look-up run out again for every later look-up: each subscription costs another 5s per look-up",
		File: "internal/transport/live.go",
		Old:  "\t\tc.unanswered[f.Connections.AWS] = fmt.Errorf(",
		New:  "\t\t_ = fmt.Errorf(",
		Run:  "^TestLintLive_SilentSQSEndpointGivesUpNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-live-unchecked-complete", What: "a lint --live that could not check a subscription on its broker reports a complete lint (a summary in text and json, a successful SARIF invocation)",
		File: "internal/cmd/lint/lint.go",
		Old:  "\t\t\tliveUnchecked += uncheckedSubscriptions(lfs)\n",
		New:  "\t\t\t_ = uncheckedSubscriptions(lfs)\n",
		Run:  "^TestLintLive_SilentSQSEndpointGivesUpNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-live-rocketmq-no-lookup-deadline", What: "lint --live gives a RocketMQ look-up no deadline of its own: on a proxy that accepts and never answers each look-up waits out the client library's own timeouts and the finding does not say it was cut off",
		File: "internal/transport/live.go",
		Old:  "\tlctx, cancel := context.WithTimeout(ctx, c.deadline)\n",
		New:  "\tlctx, cancel := context.WithCancel(ctx)\n",
		Run:  "^TestLintLive_SilentRocketMQEndpointIsCutOffNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "lint-live-rocketmq-unanswered-asked-again", What: "lint --live asks a RocketMQ proxy that let a look-up run out again for every later look-up: each costs another deadline",
		File: "internal/transport/live.go",
		Old:  "\t\tc.unanswered[conn.Endpoint] = fmt.Errorf(",
		New:  "\t\t_ = fmt.Errorf(",
		Run:  "^TestLintLive_SilentRocketMQEndpointIsCutOffNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "rocketmq-group-settings-dial-ignores-ctx", What: "reading a consumer group's maximum deliveries dials the proxy without the caller's context: a silent proxy holds it for the client library's 5s dial timeout, whatever lint --live's deadline",
		File: "internal/broker/rocketmq/groupsettings.go",
		Old:  "rmq.NewClientConn(c.Endpoint, rmq.WithContext(ctx))",
		New:  "rmq.NewClientConn(c.Endpoint)",
		Run:  "^TestLintLive_SilentRocketMQEndpointIsCutOffNamingIt$", Pkg: "./internal/cmd/lint"},
	{Name: "rocketmq-validate-ignores-ctx", What: "RocketMQ's channel validation waits for the producer's start-up whatever its context: a proxy holding route queries holds it for the client library's request timeout, whatever lint --live's deadline",
		File: "internal/broker/rocketmq/channels.go",
		Old:  "p, err := startWithin(ctx, ProducerOptions{",
		New:  "p, err := NewProducer(ctx, ProducerOptions{",
		Run:  "^TestLintLive_RocketMQChannelValidationIsCutOff$", Pkg: "./internal/cmd/lint"},
}

// endpointNameMutants break the redaction of the SQS endpoint an error
// names.
var endpointNameMutants = []mutant{
	{Name: "sqs-endpoint-name-unredacted", What: "an error naming the configured SQS endpoint shows its user-info and query (a proxy's credentials reach logs and lint findings)",
		File: "internal/broker/sqs/clients.go",
		Old:  "\t\treturn service + \" at \" + redact.URL(endpoint)\n",
		New:  "\t\treturn service + \" at \" + endpoint\n",
		Pkg:  "./internal/broker/sqs", Run: "^TestEndpointNameRedactsCredentials$"},
}
