package main

// suiteMutants are the suite's: workarounds that keep the suite green every
// time (a race the detector would report under load) and that a test must
// still prove needed.
var suiteMutants = []mutant{
	{Name: "rocketmq-isolated-uninitialised", What: "the producer starts without initialising the client's isolated map first: rocketmq-clients v5.1.2's first heartbeat races a Send under the race detector",
		File: "internal/broker/rocketmq/producer.go",
		Old:  "\tinitIsolated(p) // before Start",
		New:  "\t_ = initIsolated // before Start",
		Run:  "TestSendDuringFirstHeartbeatRaceFree", Pkg: "./internal/broker/rocketmq", Race: true},
	{Name: "stream-extension-unbounded", What: "the Pub/Sub stream client's extensions are not bounded by the ack deadline (MaxDurationPerAckExtension unset: 60 s or more): a killed replica's messages stay away past every attempt of the test that retries only what Google's emulator lost",
		File: "internal/broker/gcp/stream.go",
		Old:  "s.ReceiveSettings.MaxDurationPerAckExtension = streamAckDeadline(opts.AckDeadline)",
		New:  "s.ReceiveSettings.MaxDurationPerAckExtension = 0 * streamAckDeadline(opts.AckDeadline)",
		Run:  "^TestStreamKilledReplicaMessagesBackWithinAckDeadline$", Pkg: "./internal/broker/gcp"},
	{Name: "subprocess-self-first", What: "the command tests' plain build of ./cmd/brighter goes after the test binary on the PATH: every `brighter` process is the test binary again (with -race, several times the CPU)",
		File: "internal/cmd/cmdtest/cmdtest.go",
		Old:  "_ = os.Setenv(\"PATH\", dir+string(filepath.ListSeparator)+os.Getenv(\"PATH\"))",
		New:  "_ = os.Setenv(\"PATH\", os.Getenv(\"PATH\")+string(filepath.ListSeparator)+dir)",
		Run:  "^TestSubprocessBrighterIsWhatTheEnvironmentChooses$", Pkg: "./internal/cmd/root"},
}
