package main

// fixedCostMutants break the stop's rule for receives in flight: only a
// consumer whose Receive takes nothing from the broker while it waits
// (broker.InterruptibleReceiver) has that wait ended by a stop.
var fixedCostMutants = []mutant{
	{Name: "stop-interrupts-every-receive", What: "a stop cancels every receive in flight, SQS long polls included: a message the broker hands to an abandoned long poll is left invisible with a receive spent",
		File: "internal/pump/run.go",
		Old:  "if ir, ok := p.consumer.(broker.InterruptibleReceiver); ok && ir.ReceiveInterruptible() {",
		New:  "if _, ok := p.consumer.(broker.InterruptibleReceiver); ok || true {",
		Pkg:  "./internal/broker/sqs", Run: "^TestStopDuringLongPoll_MessageNotLeftInvisible_NFR8$"},
	{Name: "stream-stop-waits-for-receive", What: "a stop lets a Pub/Sub stream receive wait out its timeOut: a stop with nothing in flight takes up to timeOut",
		File: "internal/broker/gcp/stream.go",
		Old:  "func (c *StreamConsumer) ReceiveInterruptible() bool { return true }",
		New:  "func (c *StreamConsumer) ReceiveInterruptible() bool { return false }",
		Pkg:  "./internal/broker/gcp", Run: "^TestStreamStop_EndsTheIdleReceiveAtOnce$"},
}
