package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// maxAlternatives bounds how many alternatives of one -run element
// runAlternatives spells out; an element with more is checked whole.
const maxAlternatives = 256

// runLevels splits a -run pattern as go test does (testing's splitRegexp):
// at each "|" outside brackets and parentheses into alternatives, and each
// alternative at each "/" outside them into levels (the top-level test, a
// subtest, ...).
func runLevels(s string) [][]string {
	var out [][]string
	var levels []string
	brackets, parens := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			brackets++
		case ']':
			if brackets--; brackets < 0 {
				brackets = 0
			}
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					out = append(out, levels)
					levels = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(out, append(levels, s))
}

// runAlternatives returns the alternatives a -run element names, spelt
// out: "^(TestA|TestB)$" is "^TestA$" and "^TestB$", "^TestX_(A|B)$" is
// "^TestX_A$" and "^TestX_B$" (alternations inside a repetition stay
// whole), so that a name in a list of several that no longer exists is
// found even when the others still match. An element that does not parse,
// or with more than maxAlternatives, is returned whole.
func runAlternatives(elem string) []string {
	re, err := syntax.Parse(elem, syntax.Perl)
	if err != nil {
		return []string{elem}
	}
	alts := spellOut(re)
	if len(alts) == 0 || len(alts) > maxAlternatives {
		return []string{elem}
	}
	out := make([]string, 0, len(alts))
	for _, a := range alts {
		out = append(out, readable(a.String()))
	}
	return out
}

// readable writes back the anchors syntax.Regexp.String spells for Perl's
// one-line mode ("(?-m:\Aname$)" is "^name$"), so that a report reads as
// the pattern was written; the result compiles to the same regexp.
func readable(s string) string {
	if inner, ok := strings.CutPrefix(s, "(?-m:"); ok && strings.HasSuffix(inner, ")") {
		s = strings.TrimSuffix(inner, ")")
	}
	return strings.NewReplacer(`\A`, "^", `\z`, "$").Replace(s)
}

// spellOut returns the alternatives of re (nil when there are more than
// maxAlternatives).
func spellOut(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpAlternate:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			alts := spellOut(s)
			if alts == nil || len(out)+len(alts) > maxAlternatives {
				return nil
			}
			out = append(out, alts...)
		}
		return out
	case syntax.OpCapture:
		var out []*syntax.Regexp
		for _, a := range spellOut(re.Sub[0]) {
			c := *re
			c.Sub = []*syntax.Regexp{a}
			out = append(out, &c)
		}
		return out
	case syntax.OpConcat:
		out := []*syntax.Regexp{{Op: syntax.OpConcat, Flags: re.Flags}}
		for _, s := range re.Sub {
			alts := spellOut(s)
			if alts == nil || len(out)*len(alts) > maxAlternatives {
				return nil
			}
			var next []*syntax.Regexp
			for _, prefix := range out {
				for _, a := range alts {
					c := *prefix
					c.Sub = append(slices.Clip(prefix.Sub), a)
					next = append(next, &c)
				}
			}
			out = next
		}
		return out
	}
	return []*syntax.Regexp{re}
}

// testNames returns the names of the functions go test -run selects in
// the package at dir (a directory relative to the repository root): the
// tests, fuzz targets and examples of its _test.go files, of any build
// tag.
func testNames(root, dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	if err != nil {
		return nil, fmt.Errorf("list the tests of %s: %w", dir, err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && isTestName(fn.Name.Name) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
}

// isTestName reports whether go test runs a function of this name with
// -run: Test, Fuzz or Example, then nothing or a rune that is not a lower
// case letter (testing's isTest), except TestMain.
func isTestName(name string) bool {
	if name == "TestMain" {
		return false
	}
	for _, prefix := range []string{"Test", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			r, _ := utf8.DecodeRuneInString(rest)
			return rest == "" || !unicode.IsLower(r)
		}
	}
	return false
}

// runProblems returns one line per way m's -run pattern names no test of
// tests (package -> its test names): a top-level alternative (spelt out
// by runAlternatives) that matches no test of any of m's packages, and a
// package of m in which no test matches the pattern's top level.
func runProblems(m mutant, tests map[string][]string) []string {
	var out []string
	var tops []*regexp.Regexp
	for _, levels := range runLevels(m.Run) {
		whole, err := regexp.Compile(levels[0])
		if err != nil {
			return []string{fmt.Sprintf("mutant %s: -run %q: %v", m.Name, m.Run, err)}
		}
		tops = append(tops, whole)
		for _, alt := range runAlternatives(levels[0]) {
			re, err := regexp.Compile(alt)
			if err != nil {
				out = append(out, fmt.Sprintf("mutant %s: -run %q: alternative %q: %v", m.Name, m.Run, alt, err))
				continue
			}
			if !slices.ContainsFunc(m.pkgs(), func(p string) bool { return slices.ContainsFunc(tests[p], re.MatchString) }) {
				out = append(out, fmt.Sprintf("mutant %s: -run %q: %q matches no test of %s (renamed? update Run)", m.Name, m.Run, alt, strings.Join(m.pkgs(), " ")))
			}
		}
	}
	for _, p := range m.pkgs() {
		if !slices.ContainsFunc(tests[p], func(name string) bool {
			return slices.ContainsFunc(tops, func(re *regexp.Regexp) bool { return re.MatchString(name) })
		}) {
			out = append(out, fmt.Sprintf("mutant %s: -run %q selects no test of package %s: drop it from Pkg, or name its test", m.Name, m.Run, p))
		}
	}
	return out
}

// TestCatalogue_RunPatternsNameExistingTests checks every mutant's -run
// pattern against the test functions of its packages (read with
// go/parser, without building anything): each top-level alternative names
// at least one existing test, and each package has a test the pattern
// selects. A renamed test otherwise leaves a mutant that kills nothing, or
// is killed by the other tests of its pattern alone. Subtest levels
// (conformance cells, script names) exist only at run time and are not
// checked here; a run that selects no test at all is reported "stale" by
// the command.
func TestCatalogue_RunPatternsNameExistingTests(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tests := map[string][]string{}
	for _, m := range catalogue() {
		for _, p := range m.pkgs() {
			if _, ok := tests[p]; ok {
				continue
			}
			names, err := testNames(root, p)
			if err != nil {
				t.Fatal(err)
			}
			tests[p] = names
		}
	}
	if n := len(tests[conformancePkg]); n < 3 {
		t.Fatalf("%d tests read in %s: the check would check nothing", n, conformancePkg)
	}
	for _, m := range catalogue() {
		for _, p := range runProblems(m, tests) {
			t.Error(p)
		}
	}
}

// TestRunProblems_FlagsARenamedTestAmongOthers feeds runProblems the
// patterns it must accept and the stale ones it must flag, so that the
// check cannot pass by checking nothing.
func TestRunProblems_FlagsARenamedTestAmongOthers(t *testing.T) {
	tests := map[string][]string{
		"./a":          {"TestWriteJSON_New", "TestOther"},
		"./b":          {"TestFormats_Golden"},
		conformancePkg: {"TestSQSConformance"},
	}
	for _, tc := range []struct {
		m    mutant
		want []string
	}{
		{mutant{Name: "ok", Pkg: "./a ./b", Run: "^(TestWriteJSON_New|TestFormats_Golden)$"}, nil},
		{mutant{Name: "cells", Run: "TestSQSConformance/SqsStandard/reactor/^(AC3|AC4)$"}, nil},
		{mutant{Name: "alt-levels", Pkg: "./a ./b", Run: "^TestOther$/x|^TestFormats_Golden$/y"}, nil},
		{mutant{Name: "inner", Pkg: "./a", Run: "^Test(WriteJSON_New|Other)$"}, nil},
		{mutant{Name: "renamed", Pkg: "./a ./b", Run: "^(TestWriteJSON_Old|TestFormats_Golden)$"}, []string{
			`mutant renamed: -run "^(TestWriteJSON_Old|TestFormats_Golden)$": "^(TestWriteJSON_Old)$" matches no test of ./a ./b (renamed? update Run)`,
			`mutant renamed: -run "^(TestWriteJSON_Old|TestFormats_Golden)$" selects no test of package ./a: drop it from Pkg, or name its test`,
		}},
		{mutant{Name: "inner-renamed", Pkg: "./a", Run: "^TestWriteJSON_(New|Old)$"}, []string{
			`mutant inner-renamed: -run "^TestWriteJSON_(New|Old)$": "^TestWriteJSON_(Old)$" matches no test of ./a (renamed? update Run)`,
		}},
		{mutant{Name: "gone", Pkg: "./b", Run: "^TestGone$/^sub$"}, []string{
			`mutant gone: -run "^TestGone$/^sub$": "^TestGone$" matches no test of ./b (renamed? update Run)`,
			`mutant gone: -run "^TestGone$/^sub$" selects no test of package ./b: drop it from Pkg, or name its test`,
		}},
	} {
		if got := runProblems(tc.m, tests); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.m.Name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
