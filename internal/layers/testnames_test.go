package layers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// issueTestName matches a test or other identifier named after an issue
// by number, the word glued to it ("TestSoak_" + "Issue" + "31",
// "TestX" + "issue" + "7"), or a Test name carrying an issue's short
// number as a suffix part ("TestModel_Draining" + "_I" + "13", also before
// a further part such as "_Golden"): issueCitation needs a space or a
// comment's line break between the word and the number, so it does not see
// these. Written in pieces here, so that this file names none itself.
var issueTestName = regexp.MustCompile(`[Ii]ssue[0-9]+\b|\bTest[A-Za-z0-9_]*_I[0-9]+(_[A-Za-z0-9_]*)?\b`)

// issueNameProblems returns one line per file the issue check reads
// (checksIssues, issueText) that names something after an issue number
// (issueTestName), each name by line.
func issueNameProblems(files map[string]string) []string {
	var out []string
	for path, text := range files {
		if !checksIssues(path) {
			continue
		}
		text = issueText(path, text)
		var names []string
		for _, m := range issueTestName.FindAllStringIndex(text, -1) {
			names = append(names, fmt.Sprintf("line %d: %q", 1+strings.Count(text[:m[0]], "\n"), text[m[0]:m[1]]))
		}
		if len(names) > 0 {
			out = append(out, fmt.Sprintf("%s names a test after an issue number (%s): a clone has no issue tracker; name the test for the behaviour it proves",
				path, strings.Join(names, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// TestDocs_NoTestNamedAfterAnIssue reads every Go file and Markdown
// document the issue check reads and fails on a name that wears an issue
// number (a test renamed since, or a document naming it).
func TestDocs_NoTestNamedAfterAnIssue(t *testing.T) {
	files := repositoryFiles(t, "", 400, "docs/testing.md")
	for _, p := range issueNameProblems(files) {
		t.Error(p)
	}
}

// TestDocs_IssueNameCheckerFlagsGluedNumbers feeds the checker names it
// must flag (a test name in Go and in a document, in either case) and the
// ones it must leave alone (the mutant catalogue, the mutant table of
// docs/conformance.md, a number after a space, which issueCitation
// reports, and words that are not names).
func TestDocs_IssueNameCheckerFlagsGluedNumbers(t *testing.T) {
	r := strings.NewReplacer("<I>", "Issue", "<i>", "issue").Replace
	files := map[string]string{
		"internal/cmd/consume/soak_test.go": r("func TestSoak_<I>31(t *testing.T) {}\n"),
		"docs/testing.md":                   r("# Tests\n\n`TestMakeSQSEmulator*_<I>32` and Test<i>7\n"),
		mutantsDir + "set_x.go":             r("// killed by TestSoak_<I>31\n"),
		conformanceDoc:                      r(mutantTableBegin + "\n| x | TestSoak_<I>31 |\n" + mutantTableEnd + "\n"),
		"internal/a.go":                     r("// the client <i>s a call (<i> 12); tissues, <I>s\n"),
		"testdata/x.txtar":                  r("# TestSoak_<I>31\n"),
		"internal/tui/model_test.go":        "func TestModel_Draining" + "_I13(t *testing.T) {}\nfunc TestModel_Keys" + "_I13_Golden(t *testing.T) {}\nfunc TestMessage_ID(t *testing.T) {}\nfunc TestR4_I(t *testing.T) {}\n",
	}
	got := issueNameProblems(files)
	want := []string{
		r(`docs/testing.md names a test after an issue number (line 3: "<I>32", line 3: "<i>7"): a clone has no issue tracker; name the test for the behaviour it proves`),
		r(`internal/cmd/consume/soak_test.go names a test after an issue number (line 1: "<I>31"): a clone has no issue tracker; name the test for the behaviour it proves`),
		`internal/tui/model_test.go names a test after an issue number (line 1: "TestModel_Draining` + `_I13", line 2: "TestModel_Keys` + `_I13_Golden"): a clone has no issue tracker; name the test for the behaviour it proves`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
