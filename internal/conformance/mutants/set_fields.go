package main

// fieldsMutants break the agreement between the subscriptions file's field
// table (internal/config) and what is held to it: the documentation, the
// JSON Schema and consume's mapping to the pump's options.
var fieldsMutants = []mutant{
	{Name: "config-default-undocumented", What: "a transport block's default changes in the field table and not in docs/configuration.md (rocketmq maxDeliveryAttempts 17, documented 16)",
		File: "internal/config/transports.go",
		Old:  "def: 16, lo: 1, hi: math.MaxInt}",
		New:  "def: 17, lo: 1, hi: math.MaxInt}",
		Pkg:  "./internal/config", Run: "^TestFields_AreDocumented$"},
	{Name: "config-bound-off-schema", What: "a field's bound changes in the field table and not in the schema (sqs redrivePolicy.maxReceiveCount up to 999, the schema 1000)",
		File: "internal/config/transports.go",
		Old:  "at: func(p *RedrivePolicy) any { return &p.MaxReceiveCount }, lo: 1, hi: 1000}",
		New:  "at: func(p *RedrivePolicy) any { return &p.MaxReceiveCount }, lo: 1, hi: 999}",
		Pkg:  "./internal/config", Run: "^TestSchemaListsMatchDecoder$"},
	{Name: "consume-pump-option-dropped", What: "consume's mapping to the pump leaves out a field the table maps to a pump option (stallAfter), so the pump runs on its default",
		File: "internal/cmd/consume/consume.go",
		Old:  "\t\tStallAfter:                     s.StallAfter,\n",
		New:  "",
		Pkg:  "./internal/cmd/consume", Run: "^TestConsume_PumpOptionsFollowTheFieldTable$"},
	{Name: "config-drain-zero-accepted", What: "drainTimeout: 0s is accepted again, and the pump reads it as its 10s default: an operator writing 0s for an immediate release gets a 10s drain",
		File: "internal/config/subscription.go",
		Old:  "def: DefaultDrainTimeout, dur: durRange{positive: true}}",
		New:  "def: DefaultDrainTimeout}",
		Pkg:  "./internal/config", Run: "^TestParse_BrokenFiles$"},
}
