package main

// triageConsoleMutants break the rules of the `dlq triage` console's
// ServicePulse-like views: every stored copy counted in the lists, a
// refresh that hides nothing for long, the retry history and pending
// retries, the archived view (read-only), group notes, the grouping key
// and the header edit's confirmation.
var triageConsoleMutants = []mutant{
	{Name: "triage-copies-hidden", What: "the console counts no stored copies: an id stored twice shows as two identical rows with no ×2",
		File: "internal/tui/triage/state.go",
		Old:  "\tm.copies = inspect.CopyCounts(ms)\n",
		New:  "\tm.copies = map[string]int{}\n",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageShowsStoredCopiesOfAnID$"},
	{Name: "triage-refresh-holds", What: "a console re-read holds every message it reads until its scan ends: refreshing every few seconds, it hides the dead letters from another consumer about half the time",
		File: "internal/inspect/scan.go",
		Old:  "\t\tif src.ReleaseEach {\n",
		New:  "\t\tif false && src.ReleaseEach {\n",
		Pkg:  "./internal/cmd/dlq", Run: "^TestDLQTriage_TmuxRefreshHidesNothing$"},
}
