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
		Old:  "\t\t\tshorten(ackBatchWait)\n",
		New:  "\n",
		Pkg:  "./internal/pump", Run: "^TestAckBatchNeverHoldsAnAcknowledgementPastItsBound$"},
	{Name: "settle-batch-one-ms-window", What: "the batching window is 1 ms again: with acknowledgements 2.5 ms apart (a 10 ms handler on 4 performers) every batch carries one",
		File: "internal/pump/settler.go",
		Old:  "\tackBatchWindow = 25 * time.Millisecond\n",
		New:  "\tackBatchWindow = time.Millisecond\n",
		Pkg:  "./internal/pump", Run: "^TestAckBatchFillsWithinTheWindow$"},
	{Name: "settle-batch-lease-ignored-by-pump", What: "the pump gives its batcher the window unbounded by the consumer's lease: on a lease of 300 ms an acknowledgement may wait 25 ms, not 15",
		File: "internal/pump/settler.go",
		Old:  "b := &ackBatcher{bound: ackBound(lease),",
		New:  "b := &ackBatcher{bound: ackBound(lease * 0),",
		Pkg:  "./internal/pump", Run: "^TestBatchedAcknowledgementsLeaveWithinTheirBound$"},
	{Name: "proactor-stop-no-flush", What: "the Proactor returns from a stop without waiting for its settle batcher: Run returns while batched acknowledgements are still unsent",
		File: "internal/pump/proactor.go",
		Old:  "\tr.releaseHeld()\n\tflush()\n",
		New:  "\tr.releaseHeld()\n\tgo flush()\n",
		Pkg:  "./internal/pump", Run: "^TestGracefulStopSendsEveryBatchedAcknowledgement$"},
	{Name: "reactor-receives-before-acks-sent", What: "a Reactor performer receives again while acknowledgements of its batch are still in the batcher: a lapsed message's late acknowledgement races its redelivery",
		File: "internal/pump/reactor.go",
		Old:  "\t\t\t\t\tsent.Wait()\n",
		New:  "\n",
		Pkg:  "./internal/pump", Run: "^TestReactorReceivesAgainOnlyOnceItsAcknowledgementsAreSent$"},
	{Name: "reactor-batch-end-waits-window", What: "a Reactor performer waits for its batch's acknowledgements without asking the batcher to send them: each receive waits out the 25 ms window",
		File: "internal/pump/reactor.go",
		Old:  "acks <- ackItem{} // send what the batch holds now",
		New:  "// no request to send what the batch holds",
		Pkg:  "./internal/pump", Run: "^TestReactorReceivesAgainOnlyOnceItsAcknowledgementsAreSent$"},
}
