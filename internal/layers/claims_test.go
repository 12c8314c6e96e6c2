package layers

import (
	"fmt"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The one truth about what a package may import is the layers table
// (ARCHITECTURE.md#layers, checked by layers_test.go). A package comment
// points to it, and states what it imports only as claims this file
// checks against the code, each claim a paragraph of its own:
//
//	Imports: internal/broker, internal/message
//	Must not import: internal/pump, cmd/..., github.com/spf13/cobra
//	Imported by: none
//
// Imports is every package of this module the package's non-test code
// imports directly, no more and no fewer ("none": no package of the
// module). Must not import names packages that must not be among its
// dependencies (transitively, non-test code). Imported by is every
// package of the module whose non-test code imports it ("none": only
// tests do). An entry is a path relative to the module (internal/pump), a
// subtree (cmd/... is cmd and every package under it) or, in Must not
// import, a full import path outside the module (github.com/spf13/cobra).
// A claim may wrap over several lines of its paragraph; entries are
// separated by commas and the paragraph may end in a full stop.
const (
	claimImports    = "Imports:"
	claimMustNot    = "Must not import:"
	claimImportedBy = "Imported by:"
	// layersPointer is what every package comment cites: the table.
	layersPointer = "ARCHITECTURE.md#layers"
)

// ruleOwner is the package whose comment states the claim form itself: its
// prose speaks of imports by necessity.
const ruleOwner = "internal/layers"

// importWord finds import rules stated in prose, which nothing checks.
var importWord = regexp.MustCompile(`(?i)\bimport(s|ed|ing)?\b`)

// pkgFacts is what the checker knows of one package of the module (paths
// relative to the module, full import paths outside it).
type pkgFacts struct {
	// Doc is the package comment, as go/ast's CommentGroup.Text gives it.
	Doc string
	// Imports are the module's packages its non-test code imports directly.
	Imports []string
	// Deps are every package its non-test code depends on, transitively,
	// in and outside the module.
	Deps []string
}

// claim is one claim paragraph of a package comment.
type claim struct {
	kind    string   // claimImports, claimMustNot or claimImportedBy
	entries []string // empty for "none"
}

// parseDoc splits doc into its claims and the prose paragraphs that speak
// of imports without being a claim. A code block (an indented paragraph) is
// neither.
func parseDoc(doc string) (claims []claim, prose []string) {
	for _, para := range strings.Split(doc, "\n\n") {
		para = strings.TrimLeft(para, "\n")
		if strings.HasPrefix(para, " ") || strings.HasPrefix(para, "\t") {
			continue
		}
		text := strings.Join(strings.Fields(para), " ")
		kind := ""
		for _, k := range []string{claimImports, claimMustNot, claimImportedBy} {
			if strings.HasPrefix(text, k) {
				kind = k
			}
		}
		if kind == "" {
			if importWord.MatchString(text) {
				prose = append(prose, text)
			}
			continue
		}
		c := claim{kind: kind}
		rest := strings.TrimSpace(strings.TrimPrefix(text, kind))
		if !strings.HasSuffix(rest, "/...") {
			rest = strings.TrimSuffix(rest, ".") // a full stop, not a subtree's dots
		}
		if rest != "none" {
			for _, e := range strings.Split(rest, ",") {
				c.entries = append(c.entries, strings.TrimSpace(e))
			}
		}
		claims = append(claims, c)
	}
	return claims, prose
}

// inModule reports whether a claim's entry names the module's packages (a
// path relative to it) rather than a full import path: its first element
// has no dot.
func inModule(entry string) bool {
	first, _, _ := strings.Cut(entry, "/")
	return !strings.Contains(first, ".")
}

// matches reports whether path is entry, or under it when entry is a
// subtree (ends in /...).
func matches(entry, path string) bool {
	if root, ok := strings.CutSuffix(entry, "/..."); ok {
		return path == root || strings.HasPrefix(path, root+"/")
	}
	return path == entry
}

// claimProblems returns one line per package of pkgs (path relative to the
// module -> facts) whose comment is missing, does not point to the layers
// table, speaks of imports in prose, or makes a claim the code
// contradicts, and per claim entry that names no package of the module.
func claimProblems(pkgs map[string]pkgFacts) []string {
	var out []string
	importers := map[string][]string{}
	for from, f := range pkgs {
		for _, to := range f.Imports {
			importers[to] = append(importers[to], from)
		}
	}
	known := func(entry string) bool {
		for p := range pkgs {
			if matches(entry, p) {
				return true
			}
		}
		return false
	}
	for path, f := range pkgs {
		if strings.TrimSpace(f.Doc) == "" {
			out = append(out, fmt.Sprintf("%s: no package comment (say what the package is for, and point to %s)", path, layersPointer))
			continue
		}
		if !strings.Contains(f.Doc, layersPointer) {
			out = append(out, fmt.Sprintf("%s: the package comment does not point to the layers table (%s)", path, layersPointer))
		}
		claims, prose := parseDoc(f.Doc)
		for _, p := range prose {
			if path == ruleOwner {
				break
			}
			out = append(out, fmt.Sprintf("%s: the package comment speaks of imports in prose, which nothing checks (%q): point to %s, or state it as an %q, %q or %q paragraph",
				path, p, layersPointer, claimImports, claimMustNot, claimImportedBy))
		}
		for _, c := range claims {
			for _, e := range c.entries {
				switch {
				case e == "":
					out = append(out, fmt.Sprintf("%s: %s has an empty entry", path, c.kind))
				case c.kind != claimMustNot && !inModule(e):
					out = append(out, fmt.Sprintf("%s: %s %s: only the module's packages are listed there", path, c.kind, e))
				case inModule(e) && !known(e):
					out = append(out, fmt.Sprintf("%s: %s %s: no package of the module is that", path, c.kind, e))
				}
			}
			switch c.kind {
			case claimImports:
				out = append(out, setProblems(path, c, f.Imports, "it imports %s too", "it does not import %s")...)
			case claimImportedBy:
				out = append(out, setProblems(path, c, importers[path], "%s imports it too", "%s does not import it")...)
			case claimMustNot:
				for _, e := range c.entries {
					for _, d := range f.Deps {
						if matches(e, d) {
							out = append(out, fmt.Sprintf("%s: the comment says %s %s, and it depends on %s", path, c.kind, e, d))
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// setProblems compares a claim that lists a whole set (Imports, Imported
// by) with the set the code has: extra and missing are the formats (one
// %s, the package) of a package the claim leaves out and of one it names
// wrongly.
func setProblems(path string, c claim, actual []string, extra, missing string) []string {
	var out []string
	said := fmt.Sprintf("%s: the comment says %s %s, and ", path, c.kind, listOrNone(c.entries))
	for _, a := range actual {
		if !slices.ContainsFunc(c.entries, func(e string) bool { return matches(e, a) }) {
			out = append(out, said+fmt.Sprintf(extra, a))
		}
	}
	for _, e := range c.entries {
		if !slices.ContainsFunc(actual, func(a string) bool { return matches(e, a) }) {
			out = append(out, said+fmt.Sprintf(missing, e))
		}
	}
	return out
}

func listOrNone(entries []string) string {
	if len(entries) == 0 {
		return "none"
	}
	return strings.Join(entries, ", ")
}

// loadFacts loads every package of the module at root (without tests) with
// its package comment, its direct imports of the module and all its
// dependencies.
func loadFacts(root string) (map[string]pkgFacts, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps, Dir: root}, "./...")
	if err != nil {
		return nil, fmt.Errorf("load the module's packages: %w", err)
	}
	rel := func(path string) string {
		if r, ok := strings.CutPrefix(path, module); ok {
			return r
		}
		return path
	}
	facts := map[string]pkgFacts{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			return nil, fmt.Errorf("load %s: %v", p.PkgPath, e)
		}
		from, ok := strings.CutPrefix(p.PkgPath, module)
		if !ok {
			continue
		}
		var f pkgFacts
		fset := token.NewFileSet()
		for _, name := range p.GoFiles {
			file, err := parser.ParseFile(fset, name, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("parse %s: %w", name, err)
			}
			if file.Doc != nil {
				f.Doc += file.Doc.Text() + "\n"
			}
		}
		for path := range p.Imports {
			if to, ok := strings.CutPrefix(path, module); ok {
				f.Imports = append(f.Imports, to)
			}
		}
		seen := map[string]bool{}
		var walk func(q *packages.Package)
		walk = func(q *packages.Package) {
			for path, d := range q.Imports {
				if !seen[path] {
					seen[path] = true
					f.Deps = append(f.Deps, rel(path))
					walk(d)
				}
			}
		}
		walk(p)
		slices.Sort(f.Imports)
		slices.Sort(f.Deps)
		facts[from] = f
	}
	return facts, nil
}

// TestPackageDocs_ImportClaimsMatchTheCode loads every package of the
// module and fails on a package comment that does not point to the layers
// table, speaks of imports in prose, or claims imports (Imports, Must not
// import, Imported by) that the code contradicts.
func TestPackageDocs_ImportClaimsMatchTheCode(t *testing.T) {
	facts, err := loadFacts("../..")
	if err != nil {
		t.Fatal(err)
	}
	claimed := 0
	for _, f := range facts {
		c, _ := parseDoc(f.Doc)
		claimed += len(c)
	}
	for _, want := range []string{"internal/pump", "internal/broker", "internal/message", "cmd/brighter", "internal/cmd/root"} {
		if _, ok := facts[want]; !ok {
			t.Fatalf("package %s not loaded: the test would check nothing (loaded %d)", want, len(facts))
		}
	}
	if claimed < 30 {
		t.Fatalf("only %d import claims in %d package comments: the test would check nothing", claimed, len(facts))
	}
	for _, p := range claimProblems(facts) {
		t.Error(p)
	}
}

// TestPackageDocs_CheckerFlagsContradictedClaims feeds the checker the
// comments it must flag (an Imports list short of the code, one naming a
// package not imported, a forbidden transitive dependency, a wrong
// Imported by, prose about imports, a missing pointer to the table, a
// missing comment, an entry naming no package) and the ones it must allow,
// so the claims test cannot pass by checking nothing.
func TestPackageDocs_CheckerFlagsContradictedClaims(t *testing.T) {
	const ptr = "Its layer: " + layersPointer + ".\n\n"
	got := claimProblems(map[string]pkgFacts{
		"internal/message": {Doc: "Package message.\n\n" + ptr + "Imports: none\n\nImported by: internal/pump, internal/broker"},
		"internal/broker": {Doc: "Package broker.\n\n" + ptr + "Imports: internal/message.\n\nMust not import: internal/pump,\ninternal/broker/...",
			Imports: []string{"internal/message"}, Deps: []string{"fmt", "internal/message"}},
		"internal/pump": {Doc: "Package pump.\n\n" + ptr + "Imports: internal/broker, internal/message\n\nMust not import: internal/broker/sqs, cmd/..., github.com/spf13/cobra",
			Imports: []string{"internal/broker", "internal/broker/limits"},
			Deps:    []string{"github.com/spf13/cobra", "internal/broker", "internal/broker/limits", "internal/message"}},
		"internal/broker/limits": {Doc: "Package limits.\n\nThe pump imports it only.", Imports: nil},
		"internal/broker/sqs":    {Doc: "Package sqs.\n\n" + ptr + "Must not import: internal/nothing, net/http, github.com/x/y"},
		"cmd/brighter":           {Doc: "", Imports: []string{"internal/pump"}},
	})
	want := []string{
		"cmd/brighter: no package comment (say what the package is for, and point to ARCHITECTURE.md#layers)",
		"internal/broker/limits: the package comment does not point to the layers table (ARCHITECTURE.md#layers)",
		`internal/broker/limits: the package comment speaks of imports in prose, which nothing checks ("The pump imports it only."): point to ARCHITECTURE.md#layers, or state it as an "Imports:", "Must not import:" or "Imported by:" paragraph`,
		"internal/broker/sqs: Must not import: internal/nothing: no package of the module is that",
		"internal/broker/sqs: Must not import: net/http: no package of the module is that",
		"internal/message: the comment says Imported by: internal/pump, internal/broker, and internal/pump does not import it",
		"internal/pump: the comment says Imports: internal/broker, internal/message, and it imports internal/broker/limits too",
		"internal/pump: the comment says Imports: internal/broker, internal/message, and it does not import internal/message",
		"internal/pump: the comment says Must not import: github.com/spf13/cobra, and it depends on github.com/spf13/cobra",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
