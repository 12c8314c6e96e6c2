package main

// signalsMutants break the rules of how the commands stop on SIGINT and
// SIGTERM: one stop that arrives twice in the same moment (timeout(1)
// signals the command and then its process group) is one stop in every
// dlq verb and the triage console.
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
}
