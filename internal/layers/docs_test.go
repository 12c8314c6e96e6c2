package layers

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// requirementsDoc is where every requirement id the repository cites is
// defined, one HTML anchor per id (<a id="r-4"></a>).
const requirementsDoc = "docs/requirements.md"

// requirementID matches a cited requirement id: an obligation (R-n), a
// non-functional requirement (NFR-n), an acceptance criterion (AC-n), a
// constraint (C-n) or an assumption (A-n).
var requirementID = regexp.MustCompile(`\b(?:R|NFR|AC|C|A)-[0-9]+\b`)

// requirementAnchor matches the anchor that defines an id in requirementsDoc.
var requirementAnchor = regexp.MustCompile(`<a id="((?:r|nfr|ac|c|a)-[0-9]+)"></a>`)

// outsideNames are the names of the team's documents that live outside the
// repository: a file that names one cites something a clone cannot read.
// They are spelt in pieces so that this file does not cite them itself.
// The design notes are matched as a word (outsideWord).
var outsideNames = []string{
	"../" + "shared",
	"local-" + "brokers",
	"brighter-" + "semantics",
	"GO-" + "MAPPING",
}

// outsideWord matches the design notes by their name as a word, with or
// without ".md" ("the notes' rule", written with their name): spelt in
// pieces, as outsideNames.
var outsideWord = regexp.MustCompile(`\b` + "DES" + "IGN" + `\b`)

// referenceSection is how a comment cites a section of the team's notes on
// .NET Brighter's wire formats and pump, which live outside the repository.
var referenceSection = "reference " + "§"

// referenceCite matches referenceSection also across a comment's line
// break ("reference", a new line, "// ", the sign), in any case.
var referenceCite = regexp.MustCompile("(?i)" + strings.ReplaceAll(regexp.QuoteMeta(referenceSection), " ", `(?:\s|//|#)*`))

// citesOutsideToday lists the files allowed to cite a document outside
// the repository: none. Never add a file.
var citesOutsideToday []string

// skipDirs are the directories the checks never read: dependencies, build
// output and version control.
var skipDirs = []string{".git", "node_modules", "bin", ".cache"}

// citesIDs reports whether requirement ids in path count as citations:
// source, documentation, test scripts, configuration and the Makefile.
func citesIDs(path string) bool {
	switch filepath.Ext(path) {
	case ".go", ".md", ".txtar", ".yaml", ".yml":
		return true
	}
	return filepath.Base(path) == "Makefile"
}

// docProblems returns one line per problem in files (path relative to the
// repository root, with slashes -> content): a requirement id cited in a
// file citesIDs accepts and not defined in requirementsDoc; a file that
// names a document outside the repository and is not in allowOutside, or
// is in it and no longer does; a file that cites a section of the notes on
// .NET Brighter. A missing requirementsDoc is a problem too. A name outside
// is reported by line, not spelt out, so that a report written into the
// repository (the mutant table of docs/conformance.md) cites nothing
// outside itself.
func docProblems(files map[string]string, allowOutside []string) []string {
	var out []string
	defined := map[string]bool{}
	doc, ok := files[requirementsDoc]
	if !ok {
		out = append(out, requirementsDoc+": missing")
	}
	for _, m := range requirementAnchor.FindAllStringSubmatch(doc, -1) {
		defined[m[1]] = true
	}
	undefined := map[string][]string{}
	for path, text := range files {
		if citesIDs(path) {
			for _, id := range requirementID.FindAllString(text, -1) {
				if !defined[strings.ToLower(id)] && !slices.Contains(undefined[id], path) {
					undefined[id] = append(undefined[id], path)
				}
			}
		}
		lines := outsideLines(text)
		listed := slices.Contains(allowOutside, path)
		switch {
		case len(lines) > 0 && !listed:
			out = append(out, fmt.Sprintf("%s cites a document outside the repository (%s): cite %s, docs/emulators.md, docs/wire-format.md, ARCHITECTURE.md or an ADR instead",
				path, strings.Join(lines, ", "), requirementsDoc))
		case len(lines) == 0 && listed:
			out = append(out, fmt.Sprintf("%s no longer cites a document outside the repository: remove it from citesOutsideToday (the list only shrinks)", path))
		}
		if referenceCite.MatchString(text) {
			out = append(out, fmt.Sprintf("%s cites a section of the notes on .NET Brighter, outside the repository: say what Brighter does, or cite docs/wire-format.md, the code or an ADR", path))
		}
	}
	for id, paths := range undefined {
		slices.Sort(paths)
		out = append(out, fmt.Sprintf("%s is cited (%s) and not defined in %s: add <a id=%q></a> with its definition",
			id, strings.Join(paths, ", "), requirementsDoc, strings.ToLower(id)))
	}
	for _, path := range allowOutside {
		if _, ok := files[path]; !ok {
			out = append(out, fmt.Sprintf("%s is listed and does not exist: remove it from the list", path))
		}
	}
	slices.Sort(out)
	return out
}

// outsideLines returns the numbers (from 1) of the lines of text that name
// a document outside the repository (outsideNames), as text.
func outsideLines(text string) []string {
	var out []string
	for i, line := range strings.Split(text, "\n") {
		if outsideWord.MatchString(line) {
			out = append(out, "line "+strconv.Itoa(i+1))
			continue
		}
		for _, n := range outsideNames {
			if strings.Contains(line, n) {
				out = append(out, "line "+strconv.Itoa(i+1))
				break
			}
		}
	}
	return out
}

// mustReadRepository is readRepository of the repository's root, failing
// t if it cannot be read.
func mustReadRepository(t *testing.T) map[string]string {
	t.Helper()
	files, err := readRepository("../..")
	if err != nil {
		t.Fatalf("read the repository: %v", err)
	}
	return files
}

// readRepository returns every text file of the repository at root (path
// with slashes -> content), skipping skipDirs and binary files (a NUL byte).
func readRepository(root string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if slices.Contains(skipDirs, d.Name()) && p != root {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git is a file
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("relative path of %s: %w", p, err)
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return files, err
}

// TestDocs_RepositoryCarriesItsOwnDesign reads every text file of the
// repository and fails on a requirement id cited and not defined in
// docs/requirements.md, and on a citation of a document outside the
// repository other than those listed in citesOutsideToday (and on a
// listed file that no longer cites one), and on any citation of a section
// of the notes on .NET Brighter (docs/wire-format.md says the wire format).
func TestDocs_RepositoryCarriesItsOwnDesign(t *testing.T) {
	files := mustReadRepository(t)
	cited := 0
	for path, text := range files {
		if citesIDs(path) {
			cited += len(requirementID.FindAllString(text, -1))
		}
	}
	for _, want := range []string{"internal/pump/settle.go", "README.md", "Makefile", "docs/adr/0001-delivery-count-contract.md"} {
		if _, ok := files[want]; !ok {
			t.Fatalf("%s not read: the test would check nothing (read %d files)", want, len(files))
		}
	}
	if cited < 500 {
		t.Fatalf("only %d requirement ids cited in %d files: the test would check nothing", cited, len(files))
	}
	for _, p := range docProblems(files, citesOutsideToday) {
		t.Error(p)
	}
}

// TestDocs_CheckerFlagsUndefinedIDsAndOutsideCitations feeds the checker
// the cases it must flag (an id defined nowhere, an unlisted file citing
// outside, a listed file that no longer does, a reference section in a Go
// file and in a document) and the ones it must allow, so the documentation
// test cannot pass by checking nothing.
func TestDocs_CheckerFlagsUndefinedIDsAndOutsideCitations(t *testing.T) {
	files := map[string]string{
		requirementsDoc:      `<a id="r-4"></a>**R-4.** The budget. <a id="ac-3"></a>**AC-3.** Three deliveries.`,
		"internal/pump/x.go": "// budget (R-4, AC-3, R-" + "99, NFR-1)",
		"docs/a.md":          "# A\n\nas " + "DES" + "IGN" + ".md says\n\nand " + "../" + "shared too",
		"internal/old.go":    "// was (see " + "local-" + "brokers.md §2c)",
		"internal/stale.go":  "// nothing outside any more",
		"internal/ref.go":    "// " + referenceSection + "8",
		"docs/ref.md":        referenceSection + "3",
		"compose/x.json":     "R-" + "77 is not a citation in JSON",
		"Makefile":           "# C-12",
		"testdata/s.txtar":   "# AC-3 and R-4",
		"internal/sqsafe.go": "// SNS->SQS, I" + "12-3, FR-23: not requirement ids",
	}
	got := docProblems(files, []string{"internal/old.go", "internal/stale.go", "internal/gone.go"})
	want := []string{
		"C-12 is cited (Makefile) and not defined in docs/requirements.md: add <a id=\"c-12\"></a> with its definition",
		"NFR-1 is cited (internal/pump/x.go) and not defined in docs/requirements.md: add <a id=\"nfr-1\"></a> with its definition",
		"R-" + "99 is cited (internal/pump/x.go) and not defined in docs/requirements.md: add <a id=\"r-" + "99\"></a> with its definition",
		"docs/a.md cites a document outside the repository (line 3, line 5): cite docs/requirements.md, docs/emulators.md, docs/wire-format.md, ARCHITECTURE.md or an ADR instead",
		"docs/ref.md cites a section of the notes on .NET Brighter, outside the repository: say what Brighter does, or cite docs/wire-format.md, the code or an ADR",
		"internal/gone.go is listed and does not exist: remove it from the list",
		"internal/ref.go cites a section of the notes on .NET Brighter, outside the repository: say what Brighter does, or cite docs/wire-format.md, the code or an ADR",
		"internal/stale.go no longer cites a document outside the repository: remove it from citesOutsideToday (the list only shrinks)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := docProblems(map[string]string{"README.md": "R-1"}, nil); !slices.Contains(got, requirementsDoc+": missing") {
		t.Errorf("a missing %s is not reported: %v", requirementsDoc, got)
	}
}

// TestDocs_CheckerFlagsTheNotesByWordAndAReferenceAcrossLines feeds the
// checker the design notes named as a bare word, a reference to a section
// of the notes on .NET Brighter split across a comment's line break and
// across a Markdown line, and the words it must leave alone.
func TestDocs_CheckerFlagsTheNotesByWordAndAReferenceAcrossLines(t *testing.T) {
	design := "DES" + "IGN"
	files := map[string]string{
		requirementsDoc:       `<a id="r-4"></a>**R-4.** The budget.`,
		"docs/adr/0001-x.md":  "# ADR\n\n3. never the message (" + design + "'s rule for optional caches)\n",
		"internal/refwrap.go": "package p\n\n// leaves the rest on the broker (reference\n// " + strings.TrimPrefix(referenceSection, "reference ") + "8.5).\n",
		"docs/ref.md":         "as the\nReference\n" + strings.TrimPrefix(referenceSection, "reference ") + "3 says\n",
		"internal/words.go":   "// " + design + "ATED and UN" + design + "ED are words; a reference, then the sign: " + strings.TrimPrefix(referenceSection, "reference ") + "9\n",
	}
	got := docProblems(files, nil)
	want := []string{
		"docs/adr/0001-x.md cites a document outside the repository (line 3): cite docs/requirements.md, docs/emulators.md, docs/wire-format.md, ARCHITECTURE.md or an ADR instead",
		"docs/ref.md cites a section of the notes on .NET Brighter, outside the repository: say what Brighter does, or cite docs/wire-format.md, the code or an ADR",
		"internal/refwrap.go cites a section of the notes on .NET Brighter, outside the repository: say what Brighter does, or cite docs/wire-format.md, the code or an ADR",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
