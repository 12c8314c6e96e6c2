package main

// signalsMutants break the rules of how the commands stop on SIGINT and
// SIGTERM: one stop that arrives twice in the same moment (timeout(1)
// signals the command and then its process group) is one stop in every
// dlq verb and the triage console; send, lint --live and demo stop cleanly
// at the first signal (exit 130, saying what was done), and the demo
// removes the subscriptions file it wrote for an emulator that stops;
// watch reports a target that accepts connections and never answers as
// unreachable and retries it; a consume drain waiting only for a receive
// in flight says so, in its log and on its dashboard.
var signalsMutants = []mutant{
	{Name: "dlq-double-signal-not-merged", What: "the dlq verbs take timeout(1)'s repeated signal as a second one: they exit at once with no summary and leave what they held invisible for --visibility",
		File: "internal/cmd/dlq/shared/options.go",
		Old:  "MergeWindow: cmdutil.SignalMergeWindow, Signals:",
		New:  "Signals:",
		Run:  "^TestDLQ_TimeoutsDoubleSignal_IsOneStop$", Pkg: "./internal/cmd/dlq"},
	{Name: "dlq-triage-double-signal-not-merged", What: "the triage console takes a signal right after the first as a second one and exits at once, leaving what an action held invisible",
		File: "internal/cmd/dlq/shared/signals.go",
		Old:  "if !firstAt.IsZero() && time.Since(firstAt) < o.MergeWindow {",
		New:  "if false {",
		Run:  "^TestSignalsWithinMergeWindowAreOneStop$", Pkg: "./internal/cmd/dlq/shared"},
	{Name: "send-signal-unhandled", What: "send does not watch signals: SIGINT or SIGTERM kills it mid --count with no line saying how many were sent",
		File: "internal/cmd/send/send.go",
		Old:  "ctx, interrupted, stopWatch := cmdutil.StopOnSignals(ctx, logger, logSendStopping, o.global.Signals, o.global.Exit)",
		New:  "ctx, interrupted, stopWatch := ctx, func() bool { return false }, func() {}",
		Run:  "^TestSend_SignalStopsTheSendSayingHowManyWereSent$", Pkg: "./internal/cmd/send"},
	{Name: "lint-live-signal-unhandled", What: "lint --live does not watch signals: SIGINT or SIGTERM kills it with no line saying the lint was interrupted",
		File: "internal/cmd/lint/lint.go",
		Old:  "ctx, interrupted, stopWatch = cmdutil.StopOnSignals(ctx, logger, logLintStopping, o.global.Signals, o.global.Exit)",
		New:  "_, _ = logger, logLintStopping",
		Run:  "^TestLintLive_SignalStopsTheLookUpsWithoutAReport$", Pkg: "./internal/cmd/lint"},
	{Name: "demo-keep-running-file-left", What: "demo --keep-running stopped by Ctrl-C leaves its brighter-demo-*.yaml behind, naming an emulator that has stopped",
		File: "internal/cmd/demo/demo.go",
		Old:  "if o.writeConfig == \"\" && o.emulator == \"\" {",
		New:  "if false {",
		Run:  "^TestDemo_SignalStopsTheStoryAndRemovesItsFile$", Pkg: "./internal/cmd/demo"},
	{Name: "watch-client-no-timeouts", What: "watch's HTTP client has no dial or response-header timeout: a target that accepts connections and never answers shows 'waiting for events' for ever, never unreachable",
		File: "internal/cmd/watch/watch.go",
		Old:  "client: tui.NewWatchClient()}",
		New:  "client: &http.Client{}}",
		Run:  "^TestWatch_TargetThatNeverAnswersIsShownUnreachable$", Pkg: "./internal/cmd/watch"},
	{Name: "watch-no-header-timeout", What: "the watch client waits for a target's response headers without a bound: a target that never answers is never reported unreachable nor retried",
		File: "internal/tui/feed.go",
		Old:  "tr.ResponseHeaderTimeout = HeaderTimeout",
		New:  "_ = HeaderTimeout",
		Run:  "^TestWatch_TargetThatNeverAnswersIsUnreachableAndRetried$", Pkg: "./internal/tui"},
	{Name: "consume-drain-receive-silent", What: "a stop's drain that waits only for a receive in flight (an SQS long poll, up to 20s) says nothing: the pump never counts its receives in flight",
		File: "internal/pump/run.go",
		Old:  "\tr.receiving.Add(1)\n",
		New:  "",
		Run:  "^TestConsumeStop_WaitingOnlyForTheReceiveInFlightSaysSo$", Pkg: "./internal/cmd/consume"},
	{Name: "tui-drain-receive-line-missing", What: "consume --tui keeps saying 'handlers finish and settle' while the drain waits only for a receive in flight",
		File: "internal/tui/view_header.go",
		Old:  "if n := m.inFlight(); n > 0 || len(m.awaitingReceive) == 0 {",
		New:  "if n := m.inFlight(); true {",
		Run:  "^TestModel_DrainingWaitingForTheReceiveInFlightSaysSo$", Pkg: "./internal/tui"},
}
