package main

// leaseClockMutants break where the pump's lease clock starts (ADR 0005,
// "where each lease clock starts").
var leaseClockMutants = []mutant{
	{Name: "lease-clock-at-arrival", What: "a RocketMQ batch's lease clock starts when Receive returns, not when the receive call began: a message handed out seconds into a long poll is extended after the consumer's receipt deadline ran out",
		File: "internal/pump/lease.go",
		Old:  "return l.holdFrom(ms, l.at(started), l.at(started))",
		New:  "return l.holdFrom(ms, time.Since(l.base), l.at(started))",
		Pkg:  "./internal/pump ./internal/broker/rocketmq ./internal/conformance", Run: "^(TestLeaseClockStartsAtTheReceiveCallsStart|TestMessageArrivingLateInALongPollKeepsItsLease|TestRocketMQ)$/^(reactor|proactor)$/^R4_lateinpoll$"},
	{Name: "lease-clock-call-start-everywhere", What: "every batch's lease clock starts at the receive call's start, also where the broker hands a message out when the poll returns it: a message handed out late in a poll as long as its lease is dropped as lapsed on arrival, again and again",
		File: "internal/pump/lease.go",
		Old:  "\tif l.fromCall {\n",
		New:  "\tif true || l.fromCall {\n",
		Pkg:  "./internal/pump", Run: "^TestLeaseClockStartsAtTheReturnWhereTheBrokerHandsOutThere$"},
	{Name: "lease-extension-untimed", What: "a lease extension is recorded without when its call was sent, how long it took and how much of the lease was left: a lease that lapsed although extended cannot be told from one never extended by the log",
		File: "internal/pump/lease_schedule.go",
		Old:  "Delay: d, Since: sent, Duration: took, Left: lefts[i]})",
		New:  "Delay: d})",
		Pkg:  "./internal/pump", Run: "^TestLeaseExtensionRecordsItsCallsTiming$"},
}
