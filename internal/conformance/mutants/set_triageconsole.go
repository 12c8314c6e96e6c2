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
	{Name: "retry-history-records-dry-runs", What: "a dry run's would-be replays are recorded in the retry history: the console shows retries that never happened",
		File: "internal/inspect/replay.go",
		Old:  "if o.History != nil && !out.DryRun && ",
		New:  "if o.History != nil && ",
		Pkg:  "./internal/inspect", Run: "^TestReplay_RecordsRetryHistory$"},
	{Name: "retry-failed-again-missed", What: "a retried message dead-lettered again after its last retry is shown pending (or settled), never failed again",
		File: "internal/inspect/history.go",
		Old:  "if m.Header.MessageID == last.ID && !Describe(m).RejectedAt.Before(last.At) {",
		New:  "if false && m.Header.MessageID == last.ID && !Describe(m).RejectedAt.Before(last.At) {",
		Pkg:  "./internal/tui/triage", Run: "^(TestTriageShowsRetryHistory|TestRetryStatus)$"},
	{Name: "triage-archived-view-writable", What: "in the console's archived view r, R, a, e and space act: a replay or archive of records that are not in the destination is asked for",
		File: "internal/tui/triage/keys.go",
		Old:  "\tif m.archived {\n\t\tfor _, b := range",
		New:  "\tif false && m.archived {\n\t\tfor _, b := range",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageArchivedView$"},
	{Name: "group-notes-cross-destinations", What: "a note on a failure group is kept without its destination: two dead-letter destinations share (and overwrite) the notes of groups with the same id",
		File: "internal/inspect/notes.go",
		Old:  "\t\tall[NoteKey(source, group)] = note\n",
		New:  "\t\tall[NoteKey(\"\", group)] = note\n",
		Pkg:  "./internal/inspect", Run: "^TestGroupNotes$"},
	{Name: "triage-grouping-by-reason-splits", What: "the console's grouping by reason still splits a reason by its rejection message: one exception type shows as several groups",
		File: "internal/tui/triage/grouping.go",
		Old:  "k = inspect.GroupKey{Reason: k.Reason}",
		New:  "k = inspect.GroupKey{Reason: k.Reason, Message: k.Message}",
		Pkg:  "./internal/tui/triage", Run: "^TestTriageGroupingKey$"},
	{Name: "triage-header-edit-opens-body", What: "the console's E opens the body instead of the headers and bag: the header edit an operator makes never reaches the copy",
		File: "internal/cmd/dlq/dlq_triage.go",
		Old:  "s, err := newEditSession(m, true, false)",
		New:  "s, err := newEditSession(m, false, true)",
		Pkg:  "./internal/cmd/dlq", Run: "^TestDLQTriage_ConsoleEditsHeaders$"},
}
