package main

// staleMutants are the stale-receipt mutants: the receipt a settle uses once a message's
// lease lapsed while the run held it (the Pub/Sub stream's too, whose
// client keeps the leases), and lint --live's look-ups of the
// channels a subscription names (killed by the corpus test of internal/cmd/lint,
// which no conformance row reaches).
var staleMutants = []mutant{
	{Name: "stale-fresher-unused", What: "a settle after the lease lapsed uses its own, superseded receipt, not the later delivery's",
		File: "internal/pump/settle.go",
		Old:  "\tf, late := r.leases.settling(m, st, settling, final)\n\tif f != nil {",
		New:  "\tf, late := r.leases.settling(m, st, settling, final)\n\tif f != nil && false {",
		Run:  cells(sqsStd, "SqsStandard/proactor", "R4_lapseredelivery")},
	{Name: "stale-late-settle-forgotten", What: "a later delivery handed out during a late settle is handled again, and the superseded settle goes unreported",
		File: "internal/pump/redelivery.go",
		Old:  "if e.id == id && (e.refused || e.at > started || l.client != nil) {",
		New:  "if false && e.id == id && (e.refused || e.at > started || l.client != nil) {",
		Run:  cells(sqsStd, "SqsStandard/reactor", "R4_stalesettle")},
	{Name: "stale-stream-untracked", What: "the pump tracks nothing a client-leased (Pub/Sub stream) consumer delivers: a redelivery after the client's MaxExtension is not known as the same message",
		File: "internal/pump/lease.go",
		Old:  "if !ok || cl.ClientLease() <= 0 {",
		New:  "if true || !ok || cl.ClientLease() <= 0 {",
		Run:  cells(pubsub, "^Stream$/proactor", "R4_stalesettle")},
	{Name: "stale-stream-entry-used-up", What: "a stream's late settle supersedes only the first later delivery: those queued behind it in the client's buffer are handled again",
		File: "internal/pump/redelivery.go",
		Old:  "\t\t\tif l.client != nil {\n\t\t\t\te.at, e.reported = time.Since(l.base), true",
		New:  "\t\t\tif false {\n\t\t\t\te.at, e.reported = time.Since(l.base), true",
		Run:  cells(pubsub, "^Stream$/reactor", "R4_lapseredelivery")},
	{Name: "live-missing-unmarked", What: "lint --live reports a missing channel as a failed look-up (a warning), not a missing destination",
		File: "internal/transport/live.go",
		Old:  "return missingChannel{err}",
		New:  "return err",
		Run:  liveCorpus, Pkg: "./internal/cmd/lint"},
	{Name: "live-sqs-held-redrive-ignored", What: "the dead-letter queue the queue's own RedrivePolicy names is not looked up",
		File: "internal/broker/sqs/channels.go",
		Old:  "if held != \"\" && held != redrive {",
		New:  "if false && held != \"\" && held != redrive {",
		Run:  liveCorpus, Pkg: "./internal/cmd/lint"},
	{Name: "live-gcp-unsubscribed-kept", What: "a Pub/Sub dead-letter topic with no subscription passes",
		File: "internal/broker/gcp/channels.go",
		Old:  "case errors.Is(err, iterator.Done):\n\t\treturn fmt.Errorf(",
		New:  "case errors.Is(err, iterator.Done):\n\t\treturn nil\n\t\treturn fmt.Errorf(",
		Run:  liveCorpus, Pkg: "./internal/cmd/lint"},
	{Name: "live-rocketmq-topic-missing-unclassified", What: "a RocketMQ topic the broker answers TOPIC_NOT_FOUND for is not reported missing",
		File: "internal/broker/rocketmq/channels.go",
		Old:  "case err != nil && topicNotFound(err):",
		New:  "case err != nil && false:",
		Run:  liveCorpus, Pkg: "./internal/cmd/lint"},
}

// liveCorpus is the -run pattern of the corpus test of lint --live.
const liveCorpus = "^TestLintLiveMissingDestinations$"
