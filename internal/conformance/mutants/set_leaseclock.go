package main

// leaseClockMutants break where the pump's lease clock starts (ADR 0005,
// "where each lease clock starts").
var leaseClockMutants = []mutant{
	{Name: "lease-clock-at-arrival", What: "a received batch's lease clock starts when Receive returns, not when the receive call began: a message handed out seconds into a long poll is extended after the broker's lease (and the RocketMQ consumer's receipt deadline) ran out",
		File: "internal/pump/lease.go",
		Old:  "return l.holdFrom(ms, from, from)",
		New:  "return l.holdFrom(ms, time.Since(l.base), from)",
		Pkg:  "./internal/pump ./internal/broker/rocketmq ./internal/conformance", Run: "^(TestLeaseClockStartsAtTheReceiveCallsStart|TestMessageArrivingLateInALongPollKeepsItsLease|TestRocketMQ)$/^(reactor|proactor)$/^R4_lateinpoll$"},
}
