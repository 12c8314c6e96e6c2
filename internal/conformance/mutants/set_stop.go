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
	{Name: "drain-up-to-timeout-only", What: "a drain waiting only for the receive in flight states its bound as the receive's timeOut, without the pump's receive margin: a broker that does not answer holds the stop 10s longer than up_to (and the --tui status line) says",
		File: "internal/pump/run.go",
		Old:  "func (p *Pump) ReceiveBound() time.Duration { return p.opts.TimeOut + p.opts.ReceiveMargin }",
		New:  "func (p *Pump) ReceiveBound() time.Duration { return p.opts.TimeOut }",
		Run:  "^TestConsumeStop_WaitingOnlyForTheReceiveInFlightSaysSo$", Pkg: "./internal/cmd/consume"},
	{Name: "stop-releases-silently", What: "a stop releases the messages waiting in the receive-ahead buffer (or a received batch) unstarted without a trace: no released event, so no /events record, no counter and no Info line naming them, though each lost a delivery of its budget",
		File: "internal/pump/run.go",
		Old:  "\t\tcase h.unstarted:\n",
		New:  "\t\tcase false && h.unstarted:\n",
		Run:  "^TestConsumeStop_SaysWhatItReleasedUnstarted$", Pkg: "./internal/cmd/consume"},
	{Name: "released-not-counted", What: "brighter_messages_released_total does not count a message a stop released unstarted",
		File: "internal/observe/metrics.go",
		Old:  "m.released.WithLabelValues(e.Subscription, ReleasedAtStop).Inc()",
		New:  "m.released.WithLabelValues(e.Subscription, ReleasedAtStop).Add(0)",
		Run:  "^TestMetrics_ReleasedAtAStopCountedByReason$", Pkg: "./internal/observe"},
	{Name: "watch-released-unshown", What: "brighter watch and consume --tui do not show a message a stop released unstarted as released",
		File: "internal/tui/state.go",
		Old:  "ms.state, ms.settled = \"released\", true",
		New:  "ms.settled = true",
		Run:  "^TestModel_ReleasedRecordShowsTheMessageReleased$", Pkg: "./internal/tui"},
}
