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
	{Name: "test-brighter-orphaned", What: "a `brighter` the command tests start has no parent-death signal: a test binary killed by go test -timeout or SIGKILL leaves its `brighter consume` running for ever",
		File: "internal/cmd/cmdtest/child_linux.go",
		Old:  "\tcmd.SysProcAttr.Pdeathsig = syscall.SIGKILL\n",
		New:  "\t_ = syscall.SIGKILL\n",
		Run:  "^TestStartBrighter_EndsWithItsKilledTestBinary$", Pkg: "./internal/cmd/cmdtest"},
	{Name: "test-brighter-pdeathsig-callers-thread", What: "a `brighter` the command tests start is started on the caller's thread: Linux sends the parent-death signal when that thread ends, so the process is killed while its test still runs",
		File: "internal/cmd/cmdtest/child_linux.go",
		Old:  "\tgo func() {\n\t\truntime.LockOSThread()\n\t\tdefer runtime.UnlockOSThread()\n\t\tif err := cmd.Start(); err != nil {\n\t\t\tstarted <- err\n\t\t\treturn\n\t\t}\n\t\tstarted <- nil\n",
		New:  "\tstarted <- cmd.Start()\n\tgo func() {\n\t\truntime.LockOSThread()\n\t\tdefer runtime.UnlockOSThread()\n",
		Run:  "^TestStartChild_OutlivesTheThreadThatAskedForIt$", Pkg: "./internal/cmd/cmdtest"},
}
