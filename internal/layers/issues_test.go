package layers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// issueCitation matches a citation of an issue or pull request by number:
// "issue 28", "(issue 13)", "Issue 30:", "issues 29 and 30" (the first
// number), "issue #12", a number on the next comment line ("(issue\n//
// 28)") and a bare "(#28)". Group 1 is an owner/name written just before
// the word issue, group 2 the "#": a citation with both names another
// project's public tracker (aws/aws-sdk-go-v2 issues #1825), which a clone
// can read. Numbers that are not issue references ("HTTP 404", "§10.1",
// "%23") do not match.
var issueCitation = regexp.MustCompile(`(?i)(?:\b([a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*)\s+)?\bissues?(?:\s|//)+(#?)[0-9]+\b|\(#[0-9]+\)`)

// mutantsDir holds the mutant catalogue, whose descriptions may keep the
// history of the rule each mutant breaks.
const mutantsDir = "internal/conformance/mutants/"

// citesIssueToday lists the production Go files that still cite an issue
// number: files other people are editing now, and files whose citation is
// in a string the program outputs or that docs/conformance.md is generated
// from (a ledger row's references, the lint rule explanations), which a
// comments-only change leaves alone. THE LIST ONLY SHRINKS: when you touch
// one of these files, say the behaviour or the reason the code protects,
// or cite docs/requirements.md or an ADR, and remove it here (the test
// fails while a listed file no longer cites one, so the list stays true).
// Never add a file.
var citesIssueToday = []string{
	"internal/broker/rocketmq/rmqtest/hold.go",
	"internal/conformance/ackhold.go",
	"internal/conformance/ceiling.go",
	"internal/conformance/ledger.go",
	"internal/conformance/ordering.go",
	"internal/conformance/oversize.go",
	"internal/conformance/redeliveries.go",
	"internal/lint/rule.go",
}

// checksIssues reports whether path is production Go code the issue check
// reads: a .go file that is not a test and not in the mutant catalogue.
func checksIssues(path string) bool {
	return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") && !strings.HasPrefix(path, mutantsDir)
}

// issueCitations returns each issue citation in text as "line N: match"
// (N from 1), leaving out those of another project's tracker.
func issueCitations(text string) []string {
	var out []string
	for _, m := range issueCitation.FindAllStringSubmatchIndex(text, -1) {
		if m[2] >= 0 && m[5] > m[4] {
			continue // owner/name issue #N: another project's public tracker
		}
		line := 1 + strings.Count(text[:m[0]], "\n")
		out = append(out, fmt.Sprintf("line %d: %q", line, text[m[0]:m[1]]))
	}
	return out
}

// issueProblems returns one line per problem in files (path relative to
// the repository root, with slashes -> content): a production Go file
// (checksIssues) that cites an issue number and is not in allow, a listed
// file that no longer cites one (or is not production Go code), and a
// listed file that does not exist.
func issueProblems(files map[string]string, allow []string) []string {
	var out []string
	for path, text := range files {
		var cites []string
		if checksIssues(path) {
			cites = issueCitations(text)
		}
		listed := slices.Contains(allow, path)
		switch {
		case len(cites) > 0 && !listed:
			out = append(out, fmt.Sprintf("%s cites an issue number (%s): a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR",
				path, strings.Join(cites, ", ")))
		case len(cites) == 0 && listed:
			out = append(out, fmt.Sprintf("%s no longer cites an issue number: remove it from citesIssueToday (the list only shrinks)", path))
		}
	}
	for _, path := range allow {
		if _, ok := files[path]; !ok {
			out = append(out, fmt.Sprintf("%s is listed and does not exist: remove it from citesIssueToday", path))
		}
	}
	slices.Sort(out)
	return out
}

// TestDocs_ProductionCodeCitesNoIssueNumbers reads every production Go
// file of the repository (not tests, not the mutant catalogue) and fails on
// one that cites an issue number, a tracker a clone of the repository does
// not have, other than those listed in citesIssueToday (and on a listed
// file that no longer cites one).
func TestDocs_ProductionCodeCitesNoIssueNumbers(t *testing.T) {
	files, err := readRepository("../..")
	if err != nil {
		t.Fatalf("read the repository: %v", err)
	}
	checked := 0
	for path := range files {
		if checksIssues(path) {
			checked++
		}
	}
	for _, want := range []string{"internal/pump/settle.go", "cmd/brighter/main.go", "internal/broker/sqs/httpclient.go"} {
		if _, ok := files[want]; !ok {
			t.Fatalf("%s not read: the test would check nothing (read %d files)", want, len(files))
		}
	}
	if checked < 200 {
		t.Fatalf("only %d production Go files read: the test would check nothing", checked)
	}
	for _, p := range issueProblems(files, citesIssueToday) {
		t.Error(p)
	}
}

// TestDocs_IssueCheckerFlagsCitationsAndAllowsTheRest feeds the checker
// the citations it must flag (in a comment, across a comment line break,
// with a "#", a bare "(#N)"), the files and numbers it must leave alone
// (tests, the mutant catalogue, another project's tracker, HTTP statuses,
// section signs), a listed file that no longer cites one and a listed file
// that does not exist, so the check cannot pass by checking nothing.
func TestDocs_IssueCheckerFlagsCitationsAndAllowsTheRest(t *testing.T) {
	files := map[string]string{
		"internal/a.go":                  "package a\n\n// Release waits (at most 600 s; issue 13).\n",
		"internal/b.go":                  "// a row (issue\n// 28): later messages\n\t// Issue 30: dlq archive\n",
		"internal/c.go":                  "// see issues #7 and #8, and (#41)\n",
		"internal/d.go":                  "// smithy-go closes the body (aws/aws-sdk-go-v2 issues #1825 and\n// #2737); HTTP 404 and 503; §10.1; %23DLQ; R-4, AC-3, I12-3.\n",
		"internal/e.go":                  "// the client issues a request per message\n",
		"internal/a_test.go":             "// TestX_Issue31 (issue 31)\n",
		mutantsDir + "set_x.go":          "// the survivors of issue 28's audit\n",
		"docs/adr/0001-x.md":             "## 9. Hostile counts (issue 14)\n",
		"internal/listed.go":             "// still (issue 12)\n",
		"internal/stale.go":              "// says the behaviour now\n",
		"internal/upstream_no_hash.go":   "// aws/aws-sdk-go-v2 issue 1825\n",
		"internal/conformance/ledger.go": "\t{rowX, \"R-4, issue 28\", \"a row\"},\n",
	}
	got := issueProblems(files, []string{"internal/listed.go", "internal/stale.go", "internal/gone.go", "internal/conformance/ledger.go"})
	want := []string{
		`internal/a.go cites an issue number (line 3: "issue 13"): a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR`,
		`internal/b.go cites an issue number (line 1: "issue\n// 28", line 3: "Issue 30"): a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR`,
		`internal/c.go cites an issue number (line 1: "issues #7", line 1: "(#41)"): a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR`,
		`internal/upstream_no_hash.go cites an issue number (line 1: "aws/aws-sdk-go-v2 issue 1825"): a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR`,
		"internal/gone.go is listed and does not exist: remove it from citesIssueToday",
		"internal/stale.go no longer cites an issue number: remove it from citesIssueToday (the list only shrinks)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
