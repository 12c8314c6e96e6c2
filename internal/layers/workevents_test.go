package layers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// workEvent matches a sentence that cites the team's way of working rather
// than what the code does: a work session ("this" + " session", "the
// second" + " session", "the session" + "'s last"), a reviewer ("a fresh" + "
// user saw"), a numbered list of user reports ("a new user's" + " defect
// 4"). A clone has none of these; a comment or document says what the
// behaviour is and why, or gives a date. A terminal's, an editor's or an
// ssh session ("the session's server", "the edit session") is not matched.
// Spelt in pieces, so that this file cites none itself.
var workEvent = regexp.MustCompile(`(?i)\b(?:this|previous|last|second|third|fourth|fifth|next) ` + `session\b|\bthe session's (?:last|branches)\b|\bfresh ` + `user|\bnew user's ` + `defect`)

// workEventProblems returns one line per file the issue check reads that
// cites a work event (workEvent), each by line.
func workEventProblems(files map[string]string) []string {
	var out []string
	for path, text := range files {
		if !checksIssues(path) {
			continue
		}
		text = issueText(path, text)
		var hits []string
		for _, m := range workEvent.FindAllStringIndex(text, -1) {
			hits = append(hits, fmt.Sprintf("line %d: %q", 1+strings.Count(text[:m[0]], "\n"), text[m[0]:m[1]]))
		}
		if len(hits) > 0 {
			out = append(out, fmt.Sprintf("%s cites how the work was done (%s): a clone has no sessions or reviewers; say what the behaviour is and why, or give a date",
				path, strings.Join(hits, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// TestDocs_NoWorkSessionsOrReviewersCited reads every file the issue check
// reads and fails on a citation of a work session or a reviewer.
func TestDocs_NoWorkSessionsOrReviewersCited(t *testing.T) {
	files := repositoryFiles(t, "", 400, "docs/testing.md", "ARCHITECTURE.md")
	for _, p := range workEventProblems(files) {
		t.Error(p)
	}
}

// TestDocs_WorkEventCheckerFlagsSessionsAndReviewers feeds the checker what
// it must flag and what it must leave alone (a terminal's or an editor's
// session).
func TestDocs_WorkEventCheckerFlagsSessionsAndReviewers(t *testing.T) {
	r := strings.NewReplacer("<s>", "session", "<f>", "fresh "+"user", "<d>", "new user's "+"defect").Replace
	files := map[string]string{
		"docs/testing.md":          r("# Tests\n\nThe last run of this <s> was green.\nAfter the second <s>, the <s>'s last clone.\n"),
		"internal/x/x_test.go":     r("// a <f> saw it (a <d> 4)\n"),
		"internal/y/y.go":          "// the session's server; the edit session's files; an ssh session dropped\n",
		"internal/cmdtest/tmux.go": "// Tmux runs tmux with args on the session's server\n",
	}
	got := workEventProblems(files)
	want := []string{
		r(`docs/testing.md cites how the work was done (line 3: "this <s>", line 4: "second <s>", line 4: "the <s>'s last"): a clone has no sessions or reviewers; say what the behaviour is and why, or give a date`),
		r(`internal/x/x_test.go cites how the work was done (line 1: "<f>", line 1: "<d>"): a clone has no sessions or reviewers; say what the behaviour is and why, or give a date`),
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
