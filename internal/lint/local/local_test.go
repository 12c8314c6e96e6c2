package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/local"
)

// parse writes files (name -> content; a name ending in * is made
// executable, the * dropped) into a new directory, then parses yaml as
// that directory's b.yaml, so its relative paths are relative there.
func parse(t *testing.T, yaml string, files map[string]string) *config.File {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	f, err := config.Parse(filepath.Join(dir, "b.yaml"), []byte(yaml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func execSub(command string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler:\n      type: exec\n      command: " + command + "\n"
}

func seedSub(seed string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory:\n      seed: " + seed + "\n"
}

const record = `{"id":"m1","topic":"orders","messageType":"MT_EVENT","body":"hello"}` + "\n"

// TestCheck_WhatConsumeRefusesToStart: an exec handler's command that
// cannot be run and a seed file that is missing or does not load are
// errors at the field's key; what consume would start with is not, a
// relative path being taken from the subscriptions file's directory.
func TestCheck_WhatConsumeRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		yaml     string
		files    map[string]string
		rule     string // "" for no finding
		contains []string
		line     int
	}{
		{name: "a missing command", yaml: execSub("./nosuch.sh"), rule: lint.RuleHandlerCommandNotFound,
			contains: []string{`handler.command "`, `nosuch.sh" cannot be run: no such file or directory;`, "no such file or directory"}, line: 6},
		{name: "a command that is not executable", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh": "#!/bin/sh\n"},
			rule: lint.RuleHandlerCommandNotFound, contains: []string{"permission denied"}, line: 6},
		{name: "a bare name not on PATH", yaml: execSub("brighter-no-such-handler"), rule: lint.RuleHandlerCommandNotFound,
			contains: []string{`"brighter-no-such-handler" cannot be run: no executable file of that name on PATH`}, line: 6},
		{name: "an executable beside the file", yaml: execSub("./handle.sh"), files: map[string]string{"handle.sh*": "#!/bin/sh\n"}},
		{name: "a bare name on PATH", yaml: execSub("sh")},
		{name: "a missing seed", yaml: seedSub("nosuch.jsonl"), rule: lint.RuleMemorySeedInvalid,
			contains: []string{"nosuch.jsonl", "no such file or directory"}, line: 6},
		{name: "a seed that does not parse", yaml: seedSub("in.jsonl"), files: map[string]string{"in.jsonl": record + "{not json\n"},
			rule: lint.RuleMemorySeedInvalid, contains: []string{"line 2"}, line: 6},
		{name: "a seed that is a directory", yaml: seedSub("."), rule: lint.RuleMemorySeedInvalid, contains: []string{"is a directory"}, line: 6},
		{name: "a seed that loads", yaml: seedSub("in.jsonl"), files: map[string]string{"in.jsonl": record + "\n" + record}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := local.Check(context.Background(), parse(t, tc.yaml, tc.files))
			if tc.rule == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %+v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].RuleID != tc.rule {
				t.Fatalf("findings %+v, want one of %s", fs, tc.rule)
			}
			f := fs[0]
			// A missing command is a warning (lint may run where the
			// command is not installed yet); a bad seed file an error.
			want := lint.SeverityError
			if tc.rule == lint.RuleHandlerCommandNotFound {
				want = lint.SeverityWarning
			}
			if r, _ := lint.Lookup(tc.rule); f.Severity != want || r.Severity != want {
				t.Errorf("severity %s (rule %s), want %s", f.Severity, r.Severity, want)
			}
			if f.Pos.Line != tc.line || f.Pos.Column != 7 || !strings.HasSuffix(f.Pos.File, "b.yaml") {
				t.Errorf("position %s, want b.yaml:%d:7", f.Pos, tc.line)
			}
			for _, s := range tc.contains {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message %q does not say %q", f.Message, s)
				}
			}
		})
	}
}
