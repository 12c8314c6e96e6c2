package main

// settleBatchMutants break the settle batching of both variants
// (internal/pump/settler.go, ADR 0004 item 9): the window, its bound by the
// lease, the short wait of an acknowledgement something waits on, a
// stop's, and the Reactor's flush before it returns. Each is killed by the
// batcher's or the pump's synctest tests.
var settleBatchMutants = []mutant{
	{Name: "settle-batch-window-not-bounded-by-lease", What: "the batching window is not bounded by a twentieth of the lease: a batch may hold an acknowledgement 25 ms on a lease of 200 ms",
		File: "internal/pump/settler.go",
		Old:  "\t\tw = min(w, lease/ackWindowLeaseDiv)\n",
		New:  "\n",
		Pkg:  "./internal/pump", Run: "^TestAckBoundIsAFractionOfTheLease$"},
	{Name: "settle-batch-keyed-waits-window", What: "an acknowledgement the key's next message waits on (or whose lease lapsed) waits the whole batching window instead of 1 ms",
		File: "internal/pump/settler.go",
		Old:  "if stopping || a.done != nil || a.late {",
		New:  "if stopping {",
		Pkg:  "./internal/pump", Run: "^TestAckBatchNeverHoldsAnAcknowledgementPastItsBound$", CI: true},
	{Name: "settle-batch-stop-keeps-window", What: "a stop does not shorten the wait of the acknowledgements a batch already holds: they wait the whole window into the stop's drain",
		File: "internal/pump/settler.go",
		Old:  "\t\tb.shortenLocked(ackBatchWait)\n",
		New:  "\n",
		Pkg:  "./internal/pump", Run: "^TestAckBatchNeverHoldsAnAcknowledgementPastItsBound$"},
	{Name: "settle-batch-one-ms-window", What: "the batching window is 1 ms again: with acknowledgements 2.5 ms apart (a 10 ms handler on 4 performers) every batch carries one",
		File: "internal/pump/settler.go",
		Old:  "\tackBatchWindow = 25 * time.Millisecond\n",
		New:  "\tackBatchWindow = time.Millisecond\n",
		Pkg:  "./internal/pump", Run: "^TestAckBatchFillsWithinTheWindow$"},
	{Name: "settle-batch-lease-ignored-by-pump", What: "the pump gives its batcher the window unbounded by the consumer's lease: on a lease of 300 ms an acknowledgement may wait 25 ms, not 15",
		File: "internal/pump/settler.go",
		Old:  "b := newAckBatcher(ackBound(lease),",
		New:  "b := newAckBatcher(ackBound(lease*0),",
		Pkg:  "./internal/pump", Run: "^TestBatchedAcknowledgementsLeaveWithinTheirBound$"},
	{Name: "settle-batch-full-not-sent", What: "a batch its last acknowledgement filled is not sent by the one that filled it: it keeps growing past the consumer's AckBatchMax until its bound",
		File: "internal/pump/settler.go",
		Old:  "\tif len(b.batch) < b.max {\n",
		New:  "\tif true {\n",
		Pkg:  "./internal/pump", Run: "^TestAckBatch"},
	{Name: "proactor-stop-no-flush", What: "the Proactor returns from a stop without waiting for its settle batcher: Run returns while batched acknowledgements are still unsent",
		File: "internal/pump/proactor.go",
		Old:  "\tr.releaseHeld()\n\tflush()\n",
		New:  "\tr.releaseHeld()\n\tgo flush()\n",
		Pkg:  "./internal/pump", Run: "^TestGracefulStopSendsEveryBatchedAcknowledgement$"},
	{Name: "reactor-stop-no-flush", What: "the Reactor returns from a stop without waiting for its settle batcher: Run returns while batched acknowledgements are still unsent",
		File: "internal/pump/reactor.go",
		Old:  "\tr.releaseHeld()\n\tflush()\n",
		New:  "\tr.releaseHeld()\n\tgo flush()\n",
		Pkg:  "./internal/pump", Run: "^TestGracefulStopSendsEveryBatchedAcknowledgement$"},
	{Name: "reactor-receives-before-late-acks-sent", What: "a Reactor performer receives again while a late acknowledgement (lease lapsed) of its batch is still in the batcher: it races the message's redelivery",
		File: "internal/pump/reactor.go",
		Old:  "\t\t\t\t\tsent.Wait()\n",
		New:  "\n",
		Pkg:  "./internal/pump", Run: "^TestReactorReceivesAgainOnlyOnceItsLateAcknowledgementsAreSent$"},
	{Name: "pull-ack-batch-of-ten", What: "Pub/Sub pull's acknowledgement batches are capped at SQS's ten ack ids per AcknowledgeRequest",
		File: "internal/broker/gcp/pull.go",
		Old:  "func (c *PullConsumer) AckBatchMax() int { return PullAckBatchMax }",
		New:  "func (c *PullConsumer) AckBatchMax() int { return 10 }",
		Pkg:  "./internal/broker/gcp", Run: "^TestPullAcknowledgementsBatchedPastTenAckIDs$"},
}

// proactorRunMutants break how Proactor workers share a received batch of
// keyless messages (internal/pump/proactor.go): idle workers steal part of
// another's run, and a worker about to handle a message of a run with more
// left wakes a waiting one.
var proactorRunMutants = []mutant{
	{Name: "proactor-run-never-stolen", What: "an idle Proactor worker never takes part of another worker's run: a received batch's keyless messages wait behind its first handler while workers idle",
		File: "internal/pump/proactor.go",
		Old:  "\tif left <= 0 {\n\t\treturn heldRun{}, 0, false\n",
		New:  "\tif true {\n\t\treturn heldRun{}, 0, false\n",
		Pkg:  "./internal/pump", Run: "^TestProactorIdleWorkersShareAReceivedBatch$"},
	{Name: "proactor-idle-never-woken", What: "a Proactor worker about to handle a message of a run with more left does not wake a waiting worker: the rest waits behind its handler",
		File: "internal/pump/proactor.go",
		Old:  "\t\tif idle.Load() > 0 {\n",
		New:  "\t\tif false {\n",
		Pkg:  "./internal/pump", Run: "^TestProactorIdleWorkersShareAReceivedBatch$"},
}
