package lint_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/brightergo/brighter/internal/cmd/cmdtest"
	"github.com/brightergo/brighter/internal/lint"
)

// lintHelpFlags returns the flags `brighter lint --help` lists, long
// ("--fail-on") and short ("-o").
func lintHelpFlags(t *testing.T) map[string]bool {
	t.Helper()
	io, out, errOut := cmdtest.FakeIO("", false)
	if code := run(context.Background(), io, []string{"lint", "--help"}); code != 0 {
		t.Fatalf("lint --help: exit %d: %s", code, errOut)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:(-[a-zA-Z]), )?(--[a-z][a-z-]*)`).FindAllStringSubmatch(out.String(), -1) {
		flags[m[2]] = true
		if m[1] != "" {
			flags[m[1]] = true
		}
	}
	if !flags["--fail-on"] || !flags["-o"] {
		t.Fatalf("lint --help lists no --fail-on or -o: the parse is wrong:\n%s", out)
	}
	return flags
}

// flagsIn returns the flags written in a command line or shell script.
func flagsIn(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?:^|[\s(])(--?[a-zA-Z][a-zA-Z-]*)`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestCIDefinitions_ActionRunsLintWithFlagsThatExist parses action.yml (a
// composite action) and checks that its lint step runs `brighter lint`
// with only flags `brighter lint --help` lists, that every input it reads
// is declared, and that the defaults of output and fail-on are values lint
// accepts.
func TestCIDefinitions_ActionRunsLintWithFlagsThatExist(t *testing.T) {
	data, err := os.ReadFile("../../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Name   string `json:"name"`
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				ID  string            `json:"id"`
				Run string            `json:"run"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml does not parse: %v", err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite", action.Runs.Using)
	}
	for _, in := range []string{"config", "infra", "fail-on", "output"} {
		if _, ok := action.Inputs[in]; !ok {
			t.Errorf("action.yml declares no input %q", in)
		}
	}
	if _, err := lint.ParseFormat(action.Inputs["output"].Default); err != nil {
		t.Errorf("the output input's default %q: %v", action.Inputs["output"].Default, err)
	}
	if _, err := lint.ParseSeverity(action.Inputs["fail-on"].Default); err != nil {
		t.Errorf("the fail-on input's default %q: %v", action.Inputs["fail-on"].Default, err)
	}
	help := lintHelpFlags(t)
	var script string
	for _, s := range action.Runs.Steps {
		if s.ID == "lint" {
			script = s.Run
		}
		for name, v := range s.Env {
			for _, m := range regexp.MustCompile(`inputs\.([a-z-]+)`).FindAllStringSubmatch(v, -1) {
				if _, ok := action.Inputs[m[1]]; !ok {
					t.Errorf("env %s reads input %q, which action.yml does not declare", name, m[1])
				}
			}
		}
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q interpolates an expression into its script; pass it through env", s.ID)
		}
	}
	if !strings.Contains(script, "args=(lint ") || !strings.Contains(script, `brighter" "${args[@]}"`) {
		t.Fatalf("the lint step does not run `brighter lint` with its args:\n%s", script)
	}
	flags := flagsIn(script)
	for _, want := range []string{"-o", "--fail-on", "-c", "--infra"} {
		if !slices.Contains(flags, want) {
			t.Errorf("the lint step passes no %s", want)
		}
	}
	for _, f := range flags {
		if f == "-euo" || f == "-n" { // set -euo pipefail, [ -n ... ]
			continue
		}
		if !help[f] {
			t.Errorf("action.yml passes %s, which `brighter lint --help` does not list", f)
		}
	}
}

// TestCIDefinitions_PreCommitHooksRunLint parses .pre-commit-hooks.yaml and
// checks each hook runs `brighter lint` with flags that exist, on the
// subscriptions files it passes.
func TestCIDefinitions_PreCommitHooksRunLint(t *testing.T) {
	data, err := os.ReadFile("../../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		Description   string `json:"description"`
		Entry         string `json:"entry"`
		Language      string `json:"language"`
		Files         string `json:"files"`
		PassFilenames bool   `json:"pass_filenames"`
		RequireSerial bool   `json:"require_serial"`
	}
	if err := yaml.UnmarshalStrict(data, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml does not parse as a list of hooks: %v", err)
	}
	if len(hooks) == 0 {
		t.Fatal(".pre-commit-hooks.yaml declares no hook")
	}
	help := lintHelpFlags(t)
	for _, h := range hooks {
		if h.ID == "" || h.Name == "" || h.Language == "" || !h.PassFilenames {
			t.Errorf("hook %+v lacks an id, name or language, or is not passed the files", h)
		}
		if !strings.HasPrefix(h.Entry, "brighter lint") {
			t.Errorf("hook %s runs %q, not brighter lint", h.ID, h.Entry)
		}
		for _, f := range flagsIn(strings.TrimPrefix(h.Entry, "brighter lint")) {
			if !help[f] {
				t.Errorf("hook %s passes %s, which `brighter lint --help` does not list", h.ID, f)
			}
		}
		files, err := regexp.Compile(h.Files)
		if err != nil {
			t.Errorf("hook %s: files %q: %v", h.ID, h.Files, err)
			continue
		}
		for name, want := range map[string]bool{"brighter.yaml": true, "deploy/brighter-prod.yml": true, "docs/other.yaml": false} {
			if files.MatchString(name) != want {
				t.Errorf("hook %s: files %q matches %s = %v, want %v", h.ID, h.Files, name, !want, want)
			}
		}
	}
}

// TestCIDefinitions_GuideUsesFlagsThatExist checks every `brighter lint`
// command line of docs/guides/ci.md against `brighter lint --help`.
func TestCIDefinitions_GuideUsesFlagsThatExist(t *testing.T) {
	data, err := os.ReadFile("../../../docs/guides/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	help := lintHelpFlags(t)
	lines := regexp.MustCompile(`brighter lint[^\n`+"`"+`]*`).FindAllString(string(data), -1)
	if len(lines) < 5 {
		t.Fatalf("found %d brighter lint command lines in the guide: the parse is wrong", len(lines))
	}
	for _, l := range lines {
		for _, f := range flagsIn(strings.TrimPrefix(l, "brighter lint")) {
			if !help[f] {
				t.Errorf("docs/guides/ci.md: %q passes %s, which `brighter lint --help` does not list", l, f)
			}
		}
	}
}
