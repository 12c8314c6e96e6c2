package main

// stopMutants break the rule that a stop always stops, whatever reads the
// observability listener: its stop ends every /events stream and is
// bounded. No conformance row reaches the listener, so the observe
// package's tests and consume's stop tests (a real process, one SIGTERM,
// a reader attached) kill them.
var stopMutants = []mutant{
	{Name: "listener-streams-left-open", What: "the listener's stop does not end the /events streams: their readers are cut off when the shutdown deadline passes, not sent a clean end of stream",
		File: "internal/observe/server.go",
		Old:  "closeOnce.Do(func() { close(closing) })",
		New:  "closeOnce.Do(func() {})",
		Run:  "^(TestServerStop_EndsEventStreamsCleanly|TestConsumeStop_EndsWithAnEventsReaderAttached|TestConsumeStop_EndsWithBrighterWatchAttached)$", Pkg: "./internal/observe ./internal/cmd/consume"},
	{Name: "listener-stop-unbounded", What: "the listener's stop waits for its connections as long as its caller's context allows: a reader that does not read holds it for ever",
		File: "internal/observe/server.go",
		Old:  "ctx, cancel := context.WithTimeout(ctx, timeout)",
		New:  "ctx, cancel := context.WithCancel(ctx)",
		Run:  "^TestServerStop_BoundedWithAReaderThatDoesNotRead$", Pkg: "./internal/observe"},
	{Name: "listener-stop-waits-for-readers", What: "a stop with a reader on /events never ends: the streams are not ended and the listener's shutdown has no deadline, so consume runs on after `consume stopped` until a second signal",
		File: "internal/observe/server.go",
		Old:  "closeOnce.Do(func() { close(closing) })\n\t\tctx, cancel := context.WithTimeout(ctx, timeout)",
		New:  "closeOnce.Do(func() {})\n\t\tctx, cancel := context.WithCancel(ctx)",
		Run:  "^TestConsumeStop_(EndsWithAnEventsReaderAttached|EndsWithBrighterWatchAttached)$", Pkg: "./internal/cmd/consume"},
}
