package main

// connectSignalMutants break the rule that a signal is handled while a
// command is still connecting to the broker (before consume's pumps or a
// dlq command's scan start): the first SIGINT/SIGTERM gives up the
// connection at once with the command's exit code for a stop (consume 0,
// dlq 130) and a line saying so, and a second exits 130 at once. consume's
// and the dlq commands' process tests against a broker that never answers,
// and the watches' own tests, kill them. The triage console's rule: q is a
// quit (exit 0), ctrl+c and SIGTERM an interruption (exit 130), as for
// every dlq command; its tmux test kills those.
var connectSignalMutants = []mutant{
	{Name: "consume-connect-signal-unwatched", What: "consume does not watch signals while it opens its channels: a SIGTERM while connecting waits for the broker's call deadline (15s) and the run fails",
		File: "internal/cmd/consume/consume.go",
		Old:  "startupWatch(ctx, logger, sigs, signalMergeWindow, o.exit)",
		New:  "startupWatch(ctx, logger, nil, signalMergeWindow, o.exit)",
		Run:  "^TestConsume_SignalWhileConnecting_StopsAtOnce$", Pkg: "./internal/cmd/consume"},
	{Name: "consume-connect-stop-fails", What: "a consume stopped by a signal while connecting exits 1, as a failure, not 0 as any first stop",
		File: "internal/cmd/consume/connecting.go",
		Old:  "Code: cmdutil.ExitOK, Err:",
		New:  "Code: cmdutil.ExitFailure, Err:",
		Run:  "^TestConsume_SignalWhileConnecting_StopsAtOnce$", Pkg: "./internal/cmd/consume"},
	{Name: "consume-connect-second-signal-waits", What: "a second signal while consume connects does not exit at once: the run waits for the open to give up",
		File: "internal/cmd/consume/connecting.go",
		Old:  "\t\t\t\texit(ExitInterrupted)\n",
		New:  "\t\t\t\tcontinue\n",
		Run:  "^TestStartupWatch_SecondSignalExits130$", Pkg: "./internal/cmd/consume"},
	{Name: "dlq-connect-signal-unwatched", What: "a dlq command does not watch signals while it opens its reader: a SIGTERM while connecting waits for the broker's call deadline (15s) and the run fails with exit 1",
		File: "internal/cmd/dlq/shared/open.go",
		Old:  "cctx, done := o.connecting(ctx, logger)",
		New:  "cctx, done := ctx, func() bool { return false }",
		Run:  "^TestDLQ_SignalWhileConnecting_Exits130$", Pkg: "./internal/cmd/dlq"},
	{Name: "dlq-replay-target-signal-unwatched", What: "dlq replay does not watch signals while it resolves where the copies go (--to's queue asked of the broker): a SIGTERM then waits for the broker",
		File: "internal/cmd/dlq/shared/replay.go",
		Old:  "cctx, connected := o.connecting(ctx, logger)",
		New:  "cctx, connected := ctx, func() bool { return false }",
		Run:  "^TestDLQ_SignalWhileConnecting_Exits130$", Pkg: "./internal/cmd/dlq"},
	{Name: "dlq-connect-second-signal-waits", What: "a second signal while a dlq command connects does not exit 130 at once: the run waits for the open to give up",
		File: "internal/cmd/dlq/shared/signals.go",
		Old:  "logger.Warn(LogDLQConnectStopping)\n\t\tcancel()\n\t\tselect {\n\t\tcase <-sigs:",
		New:  "logger.Warn(LogDLQConnectStopping)\n\t\tcancel()\n\t\tselect {\n\t\tcase <-make(chan os.Signal):",
		Run:  "^TestConnecting_FirstSignalCancelsSecondExits130$", Pkg: "./internal/cmd/dlq/shared"},
	{Name: "triage-ctrl-c-quits-0", What: "ctrl+c in the dlq triage console is a normal quit: the command exits 0, not 130 as an interrupted dlq command",
		File: "internal/tui/triage/keys.go",
		Old:  "\t\tm.interrupted = true\n",
		New:  "\t\tm.interrupted = false\n",
		Run:  "^TestDLQTriage_TmuxExitCodes$", Pkg: "./internal/cmd/dlq/triage"},
	{Name: "triage-sigterm-quits-0", What: "a SIGTERM to dlq triage ends the console as q does: exit 0, not 130",
		File: "internal/cmd/dlq/triage/triage.go",
		Old:  "\t\tsignalled.Store(true)\n",
		New:  "\t\tsignalled.Store(false)\n",
		Run:  "^TestDLQTriage_TmuxExitCodes$", Pkg: "./internal/cmd/dlq/triage"},
}
