package main

// urlQueryMutants are the URL-query redaction mutants: a
// destination URL's refused query is repeated in the error with its values
// redacted, killed by the script that gives a token in ?x=.
var urlQueryMutants = []mutant{
	{Name: "refused-query-unredacted", What: "an sqs:// or pubsub:// URL's refused query is printed with its values",
		File: "internal/broker/address.go",
		Old:  `return fmt.Errorf("%s takes no query (%s)%s", what, redact.URL("?"+query), hint)`,
		New:  `return fmt.Errorf("%s takes no query (%s)%s", what, "?"+query+redact.Cut(""), hint)`,
		Run:  "^TestScripts$/^dlq_url_query$", Pkg: "./internal/cmd/root"},
	{Name: "rocketmq-query-unredacted", What: "a rocketmq:// URL's unparsable query is printed with its values",
		File: "internal/broker/rocketmq/address.go",
		Old:  `does not parse: want rocketmq://TOPIC?group=GROUP", redact.URL("?"+query))`,
		New:  `does not parse: want rocketmq://TOPIC?group=GROUP", "?"+query+redact.Cut(""))`,
		Run:  "^TestScripts$/^dlq_url_query$", Pkg: "./internal/cmd/root"},
}
