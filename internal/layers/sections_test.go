package layers

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A section sign cites a numbered section of a document of the repository,
// so that a reader of a clone can find it. The rule, the simplest that a
// clone can check:
//
//   - The document is the one named just before the sign (only spaces, a
//     line break and a comment's "//" or "#" between): an ADR by number
//     ("ADR 0001", "docs/adr/0001"), or a Markdown file by its path from the
//     repository root or from the citing file's directory
//     ("docs/adr/0001-delivery-count-contract.md"). With no document named,
//     it is the file the sign is in, which must then be a Markdown document
//     that numbers its headings (a Go comment's bare sign names nothing a
//     reader can open).
//   - The section must exist in that document: a numbered heading
//     ("## 9. ...", "### 9.2 ...") or a numbered item at the start of a
//     line ("6. **Failures ...**", an ADR's numbered decisions).
//
// The checks' own sources (internal/layers, checksSections) are not read:
// their fixtures hold the signs they check.

// sectionCite matches a section sign (group 4: the section, as written
// after it) and the document named just before it, if any: group 1 an
// ADR's number after the word ADR, group 2 an ADR's number in a path
// without .md, group 3 a Markdown file's path.
var sectionCite = regexp.MustCompile(`(?:(?:\bADR(?:\s|//|#)+([0-9]{4})\b|\badr/([0-9]{4})\b[A-Za-z0-9-]*(?:\.md)?|((?:\.\./)*\b[A-Za-z0-9_-][A-Za-z0-9_./-]*\.md)\b)(?:\s|//|#)*)?\x{00a7}([0-9A-Za-z.]*)`)

// numberedSection matches a numbered heading (group 1) or a numbered item
// at the start of a line (group 2) of a Markdown document.
var numberedSection = regexp.MustCompile(`(?m)^(?:#{1,6}[ \t]+([0-9]+(?:\.[0-9]+)*)\.?[ \t]|([0-9]+)\.[ \t])`)

// sections returns the numbered sections of a Markdown document and
// whether it numbers any heading.
func sections(text string) (map[string]bool, bool) {
	out := map[string]bool{}
	headings := false
	for _, m := range numberedSection.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			out[m[1]] = true
			headings = true
		} else {
			out[m[2]] = true
		}
	}
	return out, headings
}

// checksSections reports whether the section check reads the file at
// path: every text file but the checks' own sources.
func checksSections(path string) bool { return !strings.HasPrefix(path, "internal/layers/") }

// adrPath returns the path of ADR number n among files ("" when the
// repository has none).
func adrPath(files map[string]string, n string) string {
	for p := range files {
		if strings.HasPrefix(p, "docs/adr/"+n+"-") && strings.HasSuffix(p, ".md") {
			return p
		}
	}
	return ""
}

// sectionProblems returns one line per file of files (path relative to the
// repository root, with slashes -> content) that the check reads
// (checksSections) and whose section signs do not
// resolve to a section of a document of the repository, each sign by line
// and section number (the sign, and a document the repository lacks, are
// not spelt out, so that a report written into the repository cites
// nothing).
func sectionProblems(files map[string]string) []string {
	var out []string
	for p, text := range files {
		if !checksSections(p) {
			continue
		}
		var bad []string
		for _, m := range sectionCite.FindAllStringSubmatchIndex(text, -1) {
			group := func(i int) string {
				if m[2*i] < 0 {
					return ""
				}
				return text[m[2*i]:m[2*i+1]]
			}
			section := strings.TrimRight(group(4), ".")
			line := 1 + strings.Count(text[:m[8]], "\n")
			doc := ""
			switch {
			case group(1) != "":
				doc = adrPath(files, group(1))
			case group(2) != "":
				doc = adrPath(files, group(2))
			case group(3) != "":
				for _, c := range []string{group(3), path.Join(path.Dir(p), group(3))} {
					if _, ok := files[c]; ok {
						doc = c
						break
					}
				}
			default:
				doc = p
			}
			what := fmt.Sprintf("line %d: section %q", line, section)
			switch {
			case doc == "":
				bad = append(bad, what+" of a document the repository does not have")
				continue
			case !strings.HasSuffix(doc, ".md"):
				bad = append(bad, what+" names no document")
				continue
			}
			secs, headings := sections(files[doc])
			switch {
			case doc == p && group(3) == "" && !headings:
				bad = append(bad, what+" names no document ("+p+" numbers no headings)")
			case !secs[section]:
				bad = append(bad, what+" is not a numbered heading or item of "+doc)
			}
		}
		if len(bad) > 0 {
			out = append(out, fmt.Sprintf("%s cites sections a clone cannot find (%s): say what the section says, or cite a numbered heading or decision of a repository document, named just before the sign (ADR 0001 \u00a79)",
				p, strings.Join(bad, ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// TestDocs_SectionSignsNameRepositorySections reads every text file of the
// repository and fails on a section sign that does not name a numbered
// section of a document the repository has (the rule above): a section of
// a document outside the repository, or of an ADR that has no such
// section, leaves a reader of a clone nothing to read.
func TestDocs_SectionSignsNameRepositorySections(t *testing.T) {
	files := mustReadRepository(t)
	signs := 0
	for _, text := range files {
		signs += len(sectionCite.FindAllStringIndex(text, -1))
	}
	if signs < 40 {
		t.Fatalf("only %d section signs in %d files: the test would check nothing", signs, len(files))
	}
	for _, p := range sectionProblems(files) {
		t.Error(p)
	}
}

// TestDocs_SectionCheckerFlagsSectionsAClonelacks feeds the checker the
// signs it must accept (an ADR's heading and decision by number, by path
// with and without .md, across a comment's line break, a document's own
// numbered heading, a path relative to the citing file) and those it must
// flag (a Go comment's bare sign, a section an ADR lacks, an ADR or a
// document the repository does not have, a document citing itself without
// numbered headings, a section with a letter), and leaves the checks' own
// sources alone.
func TestDocs_SectionCheckerFlagsSectionsAClonelacks(t *testing.T) {
	r := strings.NewReplacer("<s>", "\u00a7").Replace
	files := map[string]string{
		"docs/adr/0001-count.md":    r("# ADR 0001\n\n## 9. Hostile\n\n### 9.2 Routed\n\n## 10. Exhausted\n\nas <s>9.2 says; see [<s>10](#10-exhausted).\n"),
		"docs/adr/0005-leases.md":   r("# ADR 0005\n\n## Decisions\n\n1. **Keep.**\n6. **Stale.** as in Brighter, <s>4.3.\n"),
		"docs/commands/consume.md":  r("[ADR 0001 <s>10](../adr/0001-count.md) and ADR\n  0001 <s>9.2; ../adr/0001-count.md <s>9, ../../docs/adr/0005-leases.md <s>1 and <s>3\n"),
		"internal/a.go":             r("// (ADR 0001 <s>9) and (docs/adr/0001 <s>10.) and (docs/adr/0001-count.md\n// <s>9.2), ADR 0005 <s>6\n"),
		"internal/b.go":             r("// Defaults of the DeadLetterPolicy (<s>9.3).\n// leaves the rest (ADR 0001 <s>8.5)\n"),
		"internal/c.go":             r("// (ADR 0009 <s>1), (notes.md <s>2c), (ADR 0001 <s>2c), ADR 0005 <s>1.4\n"),
		"testdata/x.sarif":          r(`{"text": "judged on its own deliveries, ADR 0001 <s>9), nor\n"}`),
		"internal/layers/x_test.go": r("// a fixture: (<s>9.3), reference <s>8\n"),
	}
	got := sectionProblems(files)
	const advice = ": say what the section says, or cite a numbered heading or decision of a repository document, named just before the sign (ADR 0001 \u00a79)"
	want := []string{
		`docs/adr/0005-leases.md cites sections a clone cannot find (line 6: section "4.3" names no document (docs/adr/0005-leases.md numbers no headings))` + advice,
		`docs/commands/consume.md cites sections a clone cannot find (line 2: section "3" names no document (docs/commands/consume.md numbers no headings))` + advice,
		`internal/b.go cites sections a clone cannot find (line 1: section "9.3" names no document, line 2: section "8.5" is not a numbered heading or item of docs/adr/0001-count.md)` + advice,
		`internal/c.go cites sections a clone cannot find (line 1: section "1" of a document the repository does not have, line 1: section "2c" of a document the repository does not have, line 1: section "2c" is not a numbered heading or item of docs/adr/0001-count.md, line 1: section "1.4" is not a numbered heading or item of docs/adr/0005-leases.md)` + advice,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
