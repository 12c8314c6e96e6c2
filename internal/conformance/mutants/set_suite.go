package main

// suiteMutants are issue 33's: workarounds that keep the suite green every
// time (a race the detector would report under load) and that a test must
// still prove needed.
var suiteMutants = []mutant{
	{Name: "rocketmq-isolated-uninitialised", What: "the producer starts without initialising the client's isolated map first: rocketmq-clients v5.1.2's first heartbeat races a Send under the race detector",
		File: "internal/broker/rocketmq/producer.go",
		Old:  "\tinitIsolated(p) // before Start",
		New:  "\t_ = initIsolated // before Start",
		Run:  "TestSendDuringFirstHeartbeatRaceFree_Issue33", Pkg: "./internal/broker/rocketmq", Race: true},
}
