package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/local"
)

func outputSub(output string) string {
	return "subscriptions:\n  - name: orders\n    transport: memory\n    handler: {type: builtin, name: ack}\n    memory:\n      output: " + output + "\n"
}

// TestCheck_MemoryOutputConsumeCannotWrite: a memory.output consume could
// not write (its directory missing, a directory itself, a file that may
// not be written) is an error finding at the field's key, as consume
// refuses it at start-up; one it can write (a new file in the file's
// directory, an existing file) is not, and lint leaves no file behind.
func TestCheck_MemoryOutputConsumeCannotWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		output   string
		files    map[string]string
		contains string // "" for no finding
	}{
		{name: "a missing directory", output: "no-such-dir/left.jsonl", contains: "no-such-dir does not exist"},
		{name: "an absolute path in a missing directory", output: "/nonexistent/dir/out.jsonl", contains: `memory.output "/nonexistent/dir/out.jsonl": its directory /nonexistent/dir does not exist`},
		{name: "a directory", output: ".", contains: "is a directory, not a file"},
		{name: "under a file", output: "in.jsonl/left.jsonl", files: map[string]string{"in.jsonl": record}, contains: "is not a directory"},
		{name: "a new file beside the subscriptions file", output: "left.jsonl"},
		{name: "an existing file", output: "left.jsonl", files: map[string]string{"left.jsonl": record}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := parse(t, outputSub(tc.output), tc.files)
			fs := local.Check(context.Background(), f)
			if tc.contains == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %+v, want none", fs)
				}
				entries, err := os.ReadDir(filepath.Dir(f.Path))
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) != len(tc.files) {
					t.Errorf("lint left %d files in the directory, want the %d there before", len(entries), len(tc.files))
				}
				return
			}
			if len(fs) != 1 || fs[0].RuleID != lint.RuleMemoryOutputUnwritable || fs[0].Severity != lint.SeverityError {
				t.Fatalf("findings %+v, want one error of %s", fs, lint.RuleMemoryOutputUnwritable)
			}
			if fs[0].Pos.Line != 6 || fs[0].Pos.Column != 7 || !strings.Contains(fs[0].Message, tc.contains) || !strings.Contains(fs[0].Message, "consume refuses") {
				t.Errorf("finding at %s: %q; want b.yaml:6:7 saying %q and that consume refuses it", fs[0].Pos, fs[0].Message, tc.contains)
			}
		})
	}
	if os.Geteuid() != 0 {
		t.Run("a read-only directory", func(t *testing.T) {
			f := parse(t, outputSub("ro/left.jsonl"), nil)
			ro := filepath.Join(filepath.Dir(f.Path), "ro")
			if err := os.Mkdir(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			fs := local.Check(context.Background(), f)
			if len(fs) != 1 || !strings.Contains(fs[0].Message, "no file can be created in") || !strings.Contains(fs[0].Message, "permission denied") {
				t.Fatalf("findings %+v, want one saying no file can be created (permission denied)", fs)
			}
		})
	}
}
