package consume_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/local"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// TestConsumeRefusesWhatLintRefuses: a file consume refuses to start (exit
// 2, before any message moves) is an error of lint in the same words, and
// the other way round: an exec handler whose #! line names a missing
// interpreter (consume's start-up reads it; it used to start and defer
// every message to its dead-letter queue), an http handler header value
// net/http refuses and an exec env entry with no name (consume refused
// both, lint passed them).
func TestConsumeRefusesWhatLintRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "h.sh"), []byte("#!/usr/bin/python9\nprint(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, handler, words string
	}{
		{name: "a missing #! interpreter", handler: "{type: exec, command: ./h.sh}",
			words: `cannot be run: its #! line names interpreter \"/usr/bin/python9\": no such file or directory`},
		{name: "a header value with CR LF", handler: `{type: http, url: "http://127.0.0.1:1/h", headers: {X-A: "a\r\nInjected: 1"}}`,
			words: `header \"X-A\": value is not a valid header value`},
		{name: "an exec env entry with no name", handler: `{type: exec, command: sh, env: {"": x}}`,
			words: `environment variable name \"\" is not valid`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "b.yaml")
			src := "subscriptions:\n  - name: orders\n    transport: memory\n    deadLetterRoutingKey: orders-dlq\n    handler: " + tc.handler + "\n"
			if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stderr := runMemoryConsume(t, cfg)
			if code != cmdutil.ExitUsage {
				t.Fatalf("consume exited %d, want %d; stderr:\n%s", code, cmdutil.ExitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.words) {
				t.Errorf("consume's stderr lacks %q:\n%s", tc.words, stderr)
			}
			// lint: an error finding saying the same.
			fs, f := lint.New(rules.Default()).Source(cfg, []byte(src), func(string) (string, bool) { return "", false })
			if f != nil {
				fs = append(fs, local.Check(context.Background(), mustParse(t, cfg, src))...)
			}
			words := strings.ReplaceAll(tc.words, `\"`, `"`)
			found := false
			for _, x := range fs {
				if x.Severity == lint.SeverityError && strings.Contains(x.Message, words) {
					found = true
				}
			}
			if !found {
				t.Errorf("lint has no error saying %q: %+v", words, fs)
			}
		})
	}
}

func mustParse(t *testing.T, name, src string) *config.File {
	t.Helper()
	f, err := config.Parse(name, []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return f
}
