package main

// orderingMutants are the ordered-channel mutants: a message of a
// partition key released unsettled (deferred, or its acknowledgement
// failed) holds back the key's messages received with it. Each is killed by
// a conformance row alone (I28-2, I28/ack-hold).
var orderingMutants = []mutant{
	{Name: "ordered-no-holdback", What: "a later message of a partition key, received with one that was deferred, is handled at once instead of released unhandled",
		File: "internal/pump/settle.go",
		Old:  "if held, delay := r.holds.heldBack(m, now); held {",
		New:  "if held, delay := r.holds.heldBack(m, now); held && false {",
		Run:  cells(sqsStd, "SqsFifo/proactor", "I282")},
	{Name: "ordered-batch-ack-no-hold", What: "a failed batched acknowledgement (Proactor settler) does not hold back its key: the later messages of the key received with it are handled while it is still on the broker",
		File: "internal/pump/settler.go",
		Old:  "r.holds.ackSettled(a.m, a.done, before, err)",
		New:  "r.holds.ackSettled(a.m, a.done, before, nil)",
		Run:  cells(sqsStd, "SqsFifo/proactor", "I28_ackhold")},
	{Name: "ordered-batch-ack-no-wait", What: "the next message of a key does not wait for its predecessor's batched acknowledgement, so a failure of it comes too late to hold the key back",
		File: "internal/pump/settle.go",
		Old:  "\tr.holds.awaitAck(m)\n",
		New:  "\n",
		Run:  cells(sqsStd, "SqsFifo/proactor", "I28_ackhold")},
	{Name: "fifo-routed-dedup-source", What: "a routed copy to a FIFO dead-letter queue keeps the source's deduplication id, so SQS drops the copy of a second message with the same id rejected within five minutes",
		File: "internal/broker/sqs/routing.go",
		Old:  "\tif p.k.opts.Fifo && m.Header.PartitionKey != \"\" {\n",
		New:  "\tif false && p.k.opts.Fifo && m.Header.PartitionKey != \"\" {\n",
		Run:  "^TestFifoRoutedCopiesOfTwoMessagesWithOneDeduplicationIDBothKept_R18$", Pkg: "./internal/broker/sqs"},
}
