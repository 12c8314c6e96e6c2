package main

// endpointMutants are the new-user defects' endpoint mutants: a malformed
// dlq --endpoint is a usage error named before any connection is tried.
var endpointMutants = []mutant{
	{Name: "endpoint-scheme-taken", What: "a Pub/Sub --endpoint with a scheme (http://host:port) is dialled and reported as an endpoint that did not answer, exit 1, instead of a usage error naming the flag",
		File: "cmd/brighter/endpoint.go",
		Old:  "\tif scheme, _, ok := strings.Cut(s, \"://\"); ok {\n",
		New:  "\tif scheme, _, ok := strings.Cut(s, \"://\"); ok && false {\n",
		Run:  "^TestScripts$/^dlq_endpoint_malformed$", Pkg: "./cmd/brighter"},
	{Name: "endpoint-sqs-unchecked", What: "an SQS --endpoint that is not an http(s) URL reaches the SDK, which says \"Failed to parse uri\" after its retries, exit 1",
		File: "cmd/brighter/endpoint.go",
		Old:  "\tif err != nil || (u.Scheme != \"http\" && u.Scheme != \"https\") || u.Host == \"\" {\n",
		New:  "\tif err != nil || u == nil {\n",
		Run:  "^TestScripts$/^dlq_endpoint_malformed$", Pkg: "./cmd/brighter"},
}
