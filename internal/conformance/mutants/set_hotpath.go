package main

// hotPathMutants break the rules the pump's cheaper hot path keeps: the
// Proactor's receive-ahead slots, counted, still wake a waiting receiver;
// a message's lease check reuses the previous message's clock reading
// only when nothing that could wait came between; receives sharing a
// deadline context still end at timeOut + receiveMargin.
var hotPathMutants = []mutant{
	{Name: "receive-slots-no-wake", What: "a Proactor receiver waiting for a receive's worth of buffer slots is not woken when workers give them back: it waits for ever",
		File: "internal/pump/proactor.go",
		Old:  "\tif s.free.Add(int64(k)) >= s.batch {\n\t\ts.signal()\n\t}\n",
		New:  "\ts.free.Add(int64(k))\n",
		Pkg:  "./internal/pump", Run: "^TestReceiveSlotsWakeAWaiterOnceABatchIsFree$"},
	{Name: "keyed-lease-check-stale-reading", What: "a keyed message's lease check takes the previous message's clock reading, though it may have waited for its predecessor's batched acknowledgement since",
		File: "internal/pump/settle.go",
		Old:  "if now.IsZero() || m.Header.PartitionKey != \"\" {",
		New:  "if now.IsZero() {",
		Pkg:  "./internal/pump", Run: "^TestKeyedMessageReadsTheClockForItsLeaseCheck$"},
	{Name: "clock-reading-across-batch-sent", What: "a message's clock reading is passed on to the next message's lease check after its acknowledgement sent a batch (a broker call)",
		File: "internal/pump/settle.go",
		Old:  "return sent != nil, time.Time{} // it sent a batch: a broker call",
		New:  "return sent != nil, settling",
		Pkg:  "./internal/pump", Run: "^TestReadingIsNotPassedOnAcrossABatchSent$"},
	{Name: "receive-shared-deadline-late", What: "receives sharing a deadline context get it with the share window added: a receive's deadline ends later than timeOut + receiveMargin",
		File: "internal/pump/run.go",
		Old:  "ctx, cancel := context.WithDeadline(r.brokerCtx, now.Add(deadline))",
		New:  "ctx, cancel := context.WithDeadline(r.brokerCtx, now.Add(deadline+deadline/callShareDiv))",
		Pkg:  "./internal/broker/sqs", Run: "^TestBlackHoledCallsEndAtTheirBound$/^receive$"},
}
