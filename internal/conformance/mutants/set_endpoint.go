package main

// endpointMutants are the new-user defects' endpoint mutants: a malformed
// dlq --endpoint is a usage error named before any connection is tried.
var endpointMutants = []mutant{
	{Name: "endpoint-scheme-taken", What: "a Pub/Sub --endpoint with a scheme (http://host:port) is dialled and reported as an endpoint that did not answer, exit 1, instead of a usage error naming the flag",
		File: "internal/config/endpoint.go",
		Old:  "\tif scheme, _, ok := strings.Cut(s, \"://\"); ok {\n",
		New:  "\tif scheme, _, ok := strings.Cut(s, \"://\"); ok && false {\n",
		Run:  "^TestScripts$/^dlq_endpoint_malformed$", Pkg: "./internal/cmd/root"},
	{Name: "endpoint-sqs-unchecked", What: "an SQS --endpoint that is not an http(s) URL reaches the SDK, which says \"Failed to parse uri\" after its retries, exit 1",
		File: "internal/transport/endpoint.go",
		Old:  "\tif err != nil || (u.Scheme != \"http\" && u.Scheme != \"https\") || u.Host == \"\" {\n",
		New:  "\tif err != nil || u == nil {\n",
		Run:  "^TestScripts$/^dlq_endpoint_malformed$", Pkg: "./internal/cmd/root"},
}

// refusalMutants: a connection refused at once is said as such, naming the
// endpoint and where it came from.
var refusalMutants = []mutant{
	{Name: "gcp-refusal-said-no-answer", What: "a Pub/Sub endpoint that refuses the connection at once is reported as one that \"did not answer within 5s\"",
		File: "internal/broker/gcp/producer.go",
		Old:  "\t\tif status.Code(err) == codes.Unavailable && pctx.Err() == nil {\n",
		New:  "\t\tif false {\n",
		Run:  "^TestProbeOfARefusingEndpointSaysRefused$", Pkg: "./internal/broker/gcp"},
	{Name: "sqs-refusal-unnamed", What: "an SQS endpoint that refuses the connection is reported in the SDK's words only, without the endpoint's source (the --endpoint flag, the subscriptions file)",
		File: "internal/broker/sqs/deadline.go",
		Old:  "\t\t\t\t\tif err == nil || !errors.Is(err, syscall.ECONNREFUSED) {\n",
		New:  "\t\t\t\t\tif err == nil || !errors.Is(err, syscall.ECONNREFUSED) || true {\n",
		Run:  "^TestRefusedConnectionNamesTheEndpoint$", Pkg: "./internal/broker/sqs"},
	{Name: "lint-live-gcp-unprobed", What: "lint --live on an unreachable Pub/Sub waits out the whole --live-timeout and says only \"context deadline exceeded\", naming no endpoint",
		File: "internal/transport/live.go",
		Old:  "\tif err := gcp.Probe(ctx, cl, project, gcpProbeTimeout); err != nil {\n",
		New:  "\tif err := error(nil); err != nil {\n",
		Run:  "^TestScripts$/^lint_live_gcp_unreachable$", Pkg: "./internal/cmd/root"},
	{Name: "lint-live-rocketmq-refusal-said-no-answer", What: "lint --live on a RocketMQ endpoint that refuses connections waits out the look-up deadline and reports the refusal as a look-up cut off",
		File: "internal/transport/live.go",
		Old:  "\tif !errors.Is(err, syscall.ECONNREFUSED) {\n",
		New:  "\tif !errors.Is(err, syscall.ECONNREFUSED) || true {\n",
		Run:  "^TestLintLive_RefusingRocketMQEndpointSaysRefusedAtOnce$", Pkg: "./internal/cmd/lint"},
}
