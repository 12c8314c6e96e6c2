package layers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// issueCitation matches a citation of an issue or pull request by number
// (N stands for the number here, so that this comment cites none): "issue
// N", "(issue N)", "Issue N:", "issues N and M" (the first number), "issue
// #N", a number on the next comment line ("(issue\n// N)") and a bare
// "(#N)". Group 1 is an owner/name written just before
// the word issue, group 2 the "#": a citation with both names another
// project's public tracker (aws/aws-sdk-go-v2 issues #1825), which a clone
// can read. Numbers that are not issue references ("HTTP 404", "§10.1",
// "%23") do not match. A conformance row id made of an issue number (a
// capital I, the number, then "-" and a row number, "/" and a name, or
// "_" and a name as in a subtest's name) is a citation too: it names the
// issue and nothing a clone can look up; a row is named by its requirement
// and what it checks ("R-4/ack-hold").
var issueCitation = regexp.MustCompile(`(?i)(?:\b([a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*)\s+)?\bissues?(?:\s|//)+(#?)[0-9]+\b|\(#[0-9]+\)|(?-i:\bI[0-9]+(?:-[0-9]+|/[a-z]+(?:-[a-z]+)*|_[a-z]+)\b)`)

// mutantsDir holds the mutant catalogue, whose descriptions may keep the
// history of the rule each mutant breaks.
const mutantsDir = "internal/conformance/mutants/"

// citesIssueToday lists the Go files allowed to cite an issue number:
// none. It stays so that the check's plumbing, and its unit test, keep
// the shape an allow-list would need; never add a file.
var citesIssueToday []string

// conformanceDoc is the conformance ledger; mutantTableBegin and
// mutantTableEnd mark its mutant table (written by
// internal/conformance/mutants), whose rows quote the output of the test
// that killed each mutant: a mutant of this check is killed by a report
// that quotes the citation it added.
const (
	conformanceDoc   = "docs/conformance.md"
	mutantTableBegin = "<!-- mutants:begin -->"
	mutantTableEnd   = "<!-- mutants:end -->"
)

// checksIssues reports whether path is a file the issue check reads: Go
// code (a .go file, test or not, outside the mutant catalogue) or a
// Markdown document (a .md file: README.md, ARCHITECTURE.md,
// CONTRIBUTING.md, docs/...).
func checksIssues(path string) bool {
	switch {
	case strings.HasSuffix(path, ".md"):
		return true
	case strings.HasSuffix(path, ".go"):
		return !strings.HasPrefix(path, mutantsDir)
	}
	return false
}

// issueText returns the part of the file at path the issue check reads:
// all of text, except the mutant table of docs/conformance.md, whose lines
// are emptied (so the line numbers of the rest hold). Without both markers,
// in order, the whole of conformance.md is read.
func issueText(path, text string) string {
	if path != conformanceDoc {
		return text
	}
	i := strings.Index(text, mutantTableBegin)
	j := strings.Index(text, mutantTableEnd)
	if i < 0 || j < i {
		return text
	}
	table := strings.Repeat("\n", strings.Count(text[i:j], "\n"))
	return text[:i] + table + text[j:]
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
// the repository root, with slashes -> content): a file the check reads
// (checksIssues, issueText) that cites an issue number and is not in allow,
// a listed file that no longer cites one (or is not checked), and a listed
// file that does not exist.
func issueProblems(files map[string]string, allow []string) []string {
	var out []string
	for path, text := range files {
		var cites []string
		if checksIssues(path) {
			cites = issueCitations(issueText(path, text))
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

// TestDocs_GoCodeCitesNoIssueNumbers reads every Go file of the repository,
// tests included (not the mutant catalogue, whose descriptions may keep the
// history of a rule), and fails on one that cites an issue number, a
// tracker a clone of the repository does not have, other than those listed
// in citesIssueToday (and on a listed file that no longer cites one).
func TestDocs_GoCodeCitesNoIssueNumbers(t *testing.T) {
	files := repositoryFiles(t, ".go", 400, "internal/pump/settle.go", "internal/pump/budget_test.go", "internal/broker/sqs/httpclient.go")
	for _, p := range issueProblems(files, citesIssueToday) {
		t.Error(p)
	}
}

// TestDocs_MarkdownCitesNoIssueNumbers reads every Markdown document of the
// repository (README.md, ARCHITECTURE.md, CONTRIBUTING.md, docs/..., and
// docs/conformance.md without its mutant table, whose rows quote the
// output that killed each mutant) and fails on one that cites an issue
// number. No document is allowed one: a reader of a clone has no issue
// tracker, so a document says the behaviour, the reason or the target, or
// cites docs/requirements.md, an ADR or another document of the repository.
func TestDocs_MarkdownCitesNoIssueNumbers(t *testing.T) {
	files := repositoryFiles(t, ".md", 25, "README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", conformanceDoc, "docs/adr/0005-leases.md", "docs/performance.md")
	if !strings.Contains(files[conformanceDoc], mutantTableBegin) || !strings.Contains(files[conformanceDoc], mutantTableEnd) {
		t.Fatalf("%s has no %s ... %s table: issueText's markers are out of date", conformanceDoc, mutantTableBegin, mutantTableEnd)
	}
	for _, p := range issueProblems(files, nil) {
		t.Error(p)
	}
}

// repositoryFiles returns the files of the repository whose names end in
// ext (every one for "") and that the issue check reads (path relative to the root, with
// slashes -> content); it fails t when fewer than least are read or one of
// want is missing, so that the check cannot pass by reading nothing.
func repositoryFiles(t *testing.T, ext string, least int, want ...string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for path, text := range mustReadRepository(t) {
		if strings.HasSuffix(path, ext) && checksIssues(path) {
			files[path] = text
		}
	}
	for _, w := range want {
		if _, ok := files[w]; !ok {
			t.Fatalf("%s not read: the test would check nothing (read %d %s files)", w, len(files), ext)
		}
	}
	if len(files) < least {
		t.Fatalf("only %d %s files read: the test would check nothing", len(files), ext)
	}
	return files
}

// TestDocs_IssueCheckerFlagsCitationsAndAllowsTheRest feeds the checker
// the citations it must flag (in a comment, across a comment line break,
// with a "#", a bare "(#N)", in a test file, in a Markdown heading, a
// conformance row id made of an issue number, written <row> here), the
// files and numbers it must leave alone (the mutant catalogue, a test
// script, another project's tracker, HTTP statuses, section signs), a
// listed file that no longer cites one and a
// listed file that does not exist, so the check cannot pass by checking
// nothing. The citations are written with <i> for the word issue, so that
// this file does not cite an issue itself.
func TestDocs_IssueCheckerFlagsCitationsAndAllowsTheRest(t *testing.T) {
	cite := strings.NewReplacer("<i>", "issue", "<I>", "Issue", "<#", "(#", "<row>", "I"+"28").Replace
	files := map[string]string{
		"internal/a.go":                  cite("package a\n\n// Release waits (at most 600 s; <i> 13).\n"),
		"internal/b.go":                  cite("// a row (<i>\n// 28): later messages\n\t// <I> 30: dlq archive\n"),
		"internal/c.go":                  cite("// see <i>s #7 and #8, and <#41)\n"),
		"internal/d.go":                  cite("// smithy-go closes the body (aws/aws-sdk-go-v2 <i>s #1825 and\n// #2737); HTTP 404 and 503; §10.1; %23DLQ; R-4, AC-3, R-4/ack-hold, I/O.\n"),
		"internal/f.go":                  cite("\t{\"<row>-1\", \"R-4\", \"a row\"},\n\tg.Run(t, \"<row>/ack-hold\", f, v, nil) // -run <row>_ackhold\n"),
		"internal/e.go":                  "// the client issues a request per message\n",
		"internal/a_test.go":             cite("// TestX_<I>31 (<i> 31)\n"),
		mutantsDir + "set_x.go":          cite("// the survivors of <i> 28's audit\n"),
		"docs/adr/0001-x.md":             cite("## 9. Hostile counts (<i> 14)\n"),
		"testdata/scripts/x.txtar":       cite("# a host that never answers (<i> 13)\n"),
		"internal/listed.go":             cite("// still (<i> 12)\n"),
		"internal/stale.go":              "// says the behaviour now\n",
		"internal/upstream_no_hash.go":   cite("// aws/aws-sdk-go-v2 <i> 1825\n"),
		"internal/conformance/ledger.go": cite("\t{rowX, \"R-4, <i> 28\", \"a row\"},\n"),
	}
	got := issueProblems(files, []string{"internal/listed.go", "internal/stale.go", "internal/gone.go", "internal/conformance/ledger.go"})
	const advice = ": a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR"
	want := []string{
		cite(`docs/adr/0001-x.md cites an issue number (line 1: "<i> 14")` + advice),
		cite(`internal/a.go cites an issue number (line 3: "<i> 13")` + advice),
		cite(`internal/b.go cites an issue number (line 1: "<i>\n// 28", line 3: "<I> 30")` + advice),
		cite(`internal/c.go cites an issue number (line 1: "<i>s #7", line 1: "<#41)")` + advice),
		cite(`internal/a_test.go cites an issue number (line 1: "<i> 31")` + advice),
		cite(`internal/f.go cites an issue number (line 1: "<row>-1", line 2: "<row>/ack-hold", line 2: "<row>_ackhold")` + advice),
		cite(`internal/upstream_no_hash.go cites an issue number (line 1: "aws/aws-sdk-go-v2 <i> 1825")` + advice),
		"internal/gone.go is listed and does not exist: remove it from citesIssueToday",
		"internal/stale.go no longer cites an issue number: remove it from citesIssueToday (the list only shrinks)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDocs_IssueCheckerReadsMarkdown feeds the checker Markdown: citations
// in a heading, a status line, prose broken across lines and a table row
// are flagged with their line numbers; docs/conformance.md is flagged
// outside its mutant table and not inside it (the line numbers after the
// table still hold), and read whole when its markers are missing; a
// conformance row id made of an issue number is flagged; another project's
// tracker, an anchor link, a conformance row id named for its requirement
// and the verb "issues" are left alone. The citations are written with <i> for the word
// issue, so that this file does not cite an issue itself.
func TestDocs_IssueCheckerReadsMarkdown(t *testing.T) {
	cite := strings.NewReplacer("<i>", "issue", "<I>", "Issue", "<row>", "I"+"12").Replace
	table := cite(mutantTableBegin + "\n| docs-x | a doc cites <i> 29 | killed |\n" + mutantTableEnd + "\n")
	files := map[string]string{
		"README.md":         cite("# brighter\n\n## Leases (<i> 12)\n"),
		"docs/adr/0009.md":  cite("# ADR\n\nStatus: accepted (<i> 12; ceilings: <i> 28)\n"),
		"docs/prose.md":     cite("the deadline (<i>\n31) of each\n| rule | warning | refused (<i> 28) |\n"),
		conformanceDoc:      cite("# Ledger\n\n| R-4/lease-overrun | (<i> 5) |\n") + table + cite("after the table (<I> 7)\n"),
		"docs/missing.md":   "nothing cited\n",
		"docs/clean.md":     cite("SDK bug (aws/aws-sdk-go-v2 <i>s #1825); see [§10](#10-exhausted); rows R-4/lease-overrun and AC-3; the client issues a call per message\n"),
		"docs/rows.md":      cite("the rows <row>-1 and\n<row>/lease-overrun\n"),
		"docs/adr/other.md": cite("## 9. Hostile counts\n"),
	}
	got := issueProblems(files, nil)
	const advice = ": a clone has no issue tracker; say the behaviour or the reason it protects, or cite docs/requirements.md or an ADR"
	want := []string{
		cite(`README.md cites an issue number (line 3: "<i> 12")` + advice),
		cite(`docs/adr/0009.md cites an issue number (line 3: "<i> 12", line 3: "<i> 28")` + advice),
		cite(`docs/prose.md cites an issue number (line 1: "<i>\n31", line 3: "<i> 28")` + advice),
		cite(conformanceDoc + ` cites an issue number (line 3: "<i> 5", line 7: "<I> 7")` + advice),
		cite(`docs/rows.md cites an issue number (line 1: "<row>-1", line 2: "<row>/lease-overrun")` + advice),
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	whole := map[string]string{conformanceDoc: cite("# Ledger\n| docs-x | a doc cites <i> 29 | killed |\n")}
	if got := issueProblems(whole, nil); len(got) != 1 || !strings.Contains(got[0], cite(`line 2: "<i> 29"`)) {
		t.Errorf("conformance.md without its mutant table markers: got %q, want its whole text read", got)
	}
}
