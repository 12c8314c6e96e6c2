package main

// pubsubCPUMutants break what keeps a Pub/Sub consume cheap without
// changing what it reads or serves: the decode's one pass over the
// attributes, the /metrics scrape filtered to Brighter's families, and the
// event stream's backlog of events observed with no reader connected.
var pubsubCPUMutants = []mutant{
	{Name: "pubsub-decode-tracestate-dropped", What: "the Pub/Sub decode's one pass over the attributes loses its ce-tracestate case: the header comes back empty",
		File: "internal/broker/gcp/codec.go",
		Old:  "\t\tcase AttrTraceState:\n\t\t\th.TraceState = v\n",
		New:  "",
		Pkg:  "./internal/broker/gcp", Run: "^TestCodec_RoundTrip_Ref3$"},
	{Name: "pubsub-decode-count-stash-overwrites", What: "an unparseable HandledCount's stashed value overwrites a HandledCountReceived attribute the message carried",
		File: "internal/broker/gcp/codec.go",
		Old:  "\t\t\tif _, ok := h.Bag[AttrHandledCount+\"Received\"]; !ok {\n",
		New:  "\t\t\tif true {\n",
		Pkg:  "./internal/broker/gcp", Run: "^TestUnparseableCountKeptUnlessTheMessageCarriesTheKeyItself$"},
	{Name: "metrics-filtered-scrape-any-own-name", What: "a /metrics scrape that names one brighter_ family and a runtime family is gathered without the runtime collectors: the runtime family is missing",
		File: "internal/observe/server.go",
		Old:  "\t\tif !strings.HasPrefix(n, \"brighter_\") {\n\t\t\treturn false\n\t\t}\n",
		New:  "\t\tif strings.HasPrefix(n, \"brighter_\") {\n\t\t\treturn true\n\t\t}\n",
		Pkg:  "./internal/observe", Run: "^TestMetrics_FilteredScrapeAnswersWithTheFamiliesAskedFor$"},
	{Name: "events-backlog-drops-unread-events", What: "a pump event observed while no /events reader is connected is not kept in the backlog: a reader that connects later misses it",
		File: "internal/observe/stream.go",
		Old:  "\t\t\ts.backlog[s.next] = backlogEntry{ev: e, event: true}\n",
		New:  "",
		Pkg:  "./internal/observe", Run: "^(TestEvents_NDJSONAndBacklog|TestStream_BacklogRecordsMadeLaterShowNoSecretOfTheRun)$"},
}
