package lint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/lint"
)

// TestLintExplain_ARequirementExplainsEveryRuleOfIt: --explain R-n
// explains every rule implementing R-n (R-4 has several), each with its
// title, in listing order; --explain ID explains that rule alone.
func TestLintExplain_ARequirementExplainsEveryRuleOfIt(t *testing.T) {
	byReq := map[string][]lint.Rule{}
	for _, r := range lint.Rules() {
		if r.Requirement != "" {
			byReq[r.Requirement] = append(byReq[r.Requirement], r)
		}
	}
	if len(byReq["R-4"]) < 2 {
		t.Fatalf("R-4 has %d rules; this test wants a requirement of several", len(byReq["R-4"]))
	}
	for req, rules := range byReq {
		for _, arg := range []string{req, strings.ToLower(req)} {
			io, out, errOut := cmdtest.FakeIO("", false)
			if code := run(context.Background(), io, []string{"lint", "--explain", arg}); code != cmdutil.ExitOK {
				t.Fatalf("--explain %s: exit %d\n%s", arg, code, errOut)
			}
			at := -1
			for _, r := range rules {
				title := r.ID + " (" + r.Requirement + "): " + r.Summary
				i := strings.Index(out.String(), title)
				if i <= at {
					t.Errorf("--explain %s does not explain %s after the rules before it:\n%s", arg, r.ID, out)
				}
				at = i
			}
		}
	}
	r := byReq["R-4"][0]
	io, out, _ := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--explain", r.ID}); code != cmdutil.ExitOK {
		t.Fatalf("--explain %s: exit %d", r.ID, code)
	}
	if strings.Count(out.String(), "(R-4)") != 1 {
		t.Errorf("--explain %s explains more than its rule:\n%s", r.ID, out)
	}
}

// TestLintListRules_Output: --list-rules -o json is a JSON array of every
// rule (id, severity, requirement when it has one, summary), in listing
// order; an -o that is no list (sarif, github) is a usage error, exit 2.
func TestLintListRules_Output(t *testing.T) {
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--list-rules", "-o", "json"}); code != cmdutil.ExitOK {
		t.Fatalf("--list-rules -o json: exit %d\n%s", code, errOut)
	}
	var got []struct {
		ID, Severity, Requirement, Summary string
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--list-rules -o json is not a JSON array: %v\n%s", err, out)
	}
	rules := lint.Rules()
	if len(got) != len(rules) {
		t.Fatalf("%d rules listed, want %d", len(got), len(rules))
	}
	for i, r := range rules {
		if g := got[i]; g.ID != r.ID || g.Severity != r.Severity.String() || g.Requirement != r.Requirement || g.Summary != r.Summary {
			t.Errorf("rule %d: %+v, want %s %s %q %q", i, g, r.ID, r.Severity, r.Requirement, r.Summary)
		}
	}
	for _, f := range []string{"sarif", "github"} {
		io, out, errOut := cmdtest.FakeIO("", false)
		if code := run(context.Background(), io, []string{"lint", "--list-rules", "-o", f}); code != cmdutil.ExitUsage || out.Len() != 0 ||
			!strings.Contains(errOut.String(), "--list-rules prints text or json") {
			t.Errorf("--list-rules -o %s: exit %d, want %d, nothing on stdout and why on stderr\nstdout:\n%s\nstderr:\n%s", f, code, cmdutil.ExitUsage, out, errOut)
		}
	}
}

// TestLintDocTagsRequirementsAsListRules: the rules table of
// docs/commands/lint.md tags each rule with the requirement --list-rules
// gives it ("| `id` (R-4)", "| `id` (R-10, `--live`)"), and none where
// it gives none: both follow
// the rule catalogue.
func TestLintDocTagsRequirementsAsListRules(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "commands", "lint.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lint.Rules() {
		if r.ID == lint.RuleConfigInvalid {
			continue // described above the table
		}
		row := ""
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "| `"+r.ID+"`") {
				row = l
				break
			}
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " |")
		tagged := strings.Contains(first, "(R-")
		switch {
		case row == "":
			t.Errorf("docs/commands/lint.md has no row for %s", r.ID)
		case r.Requirement != "" && !strings.Contains(first, "("+r.Requirement+")") && !strings.Contains(first, "("+r.Requirement+", "):
			t.Errorf("docs/commands/lint.md does not tag %s with %s, as --list-rules does: %s", r.ID, r.Requirement, first)
		case r.Requirement == "" && tagged:
			t.Errorf("docs/commands/lint.md tags %s with a requirement --list-rules does not give it: %s", r.ID, first)
		}
	}
}
