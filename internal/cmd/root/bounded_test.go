package root

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/redact"
)

// maxUsageError is the most bytes of stderr a usage error with one huge
// value may take: the message, and the value cut at redact.MaxQuoted bytes
// (twice, where the value is quoted twice, as pflag does).
const maxUsageError = 4096

// TestUsageErrors_HugeCommandLineValuesAreCut: a value of 200 KB
// typed on the command line (a positional argument, a flag value, an
// unknown subcommand or flag, a --config path) ends the run with a usage
// error of a few KB that still shows the value's length, whether brighter
// or cobra/pflag wrote the error; with --log-format json the error is one
// parseable JSON line. brighter's own errors are cut where they are built,
// so they are bounded wherever they go.
func TestUsageErrors_HugeCommandLineValuesAreCut(t *testing.T) {
	t.Parallel() // a directory of its own; overlaps the tests that wait
	dir := t.TempDir()
	cfg := filepath.Join(dir, "brighter.yaml")
	yaml := "subscriptions:\n  - name: orders\n    transport: memory\n    deadLetterRoutingKey: orders-dlq\n" +
		"    handler: {type: builtin, name: ack}\n    memory: {output: " + filepath.Join(dir, "out.jsonl") + "}\n"
	for name, data := range map[string]string{cfg: yaml, filepath.Join(dir, "out.jsonl"): ""} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	huge := strings.Repeat("x", 200_000)
	spaced := strings.Repeat("x ", 100_000)
	length := regexp.MustCompile(`\(200\d\d\d bytes\)`)
	cases := map[string][]string{
		"unknown command":              {huge},
		"unknown command with spaces":  {spaced},
		"unknown dlq subcommand":       {"dlq", huge},
		"unknown help topic":           {"help", huge},
		"unknown flag":                 {"--" + huge},
		"unknown shorthand flag":       {"dlq", "peek", "-" + huge},
		"invalid int flag":             {"dlq", "peek", "orders", "--config", cfg, "--limit", huge},
		"log level":                    {"version", "--log-level", huge},
		"consume --config":             {"consume", "--config", filepath.Join(dir, huge)},
		"consume --subscription":       {"consume", "--config", cfg, "--subscription", huge},
		"send -s":                      {"send", "--config", cfg, "-s", huge, "--body", "{}"},
		"send --header":                {"send", "--config", cfg, "-s", "orders", "--header", huge},
		"send --type":                  {"send", "--config", cfg, "-s", "orders", "--type", huge},
		"dlq peek subscription":        {"dlq", "peek", "--config", cfg, huge},
		"dlq peek subscription spaced": {"dlq", "peek", "--config", cfg, spaced},
		"dlq peek -s and argument":     {"dlq", "peek", "--config", cfg, "orders", "-s", huge},
		"dlq peek URL":                 {"dlq", "peek", "memory://" + huge},
		"dlq peek unknown scheme":      {"dlq", "peek", huge + "://q"},
		"dlq peek --since":             {"dlq", "peek", "--config", cfg, "orders", "--since", huge},
		"dlq peek --grep":              {"dlq", "peek", "--config", cfg, "orders", "--grep", "(" + spaced},
		"dlq peek --reason":            {"dlq", "peek", "--config", cfg, "orders", "--reason", huge},
		"dlq peek --output":            {"dlq", "peek", "--config", cfg, "orders", "-o", huge},
		"dlq replay --to":              {"dlq", "replay", "--config", cfg, "orders", "--to", "sqs://" + huge, "--yes"},
		"dlq replay --group-id":        {"dlq", "replay", "--config", cfg, "orders", "--group-id", huge, "--yes"},
		"lint --explain":               {"lint", "--explain", huge},
	}
	// The errors cobra and pflag build, and a wrapped os error, are cut
	// only where the run's final error is written; brighter's own are cut
	// where they are built.
	builtElsewhere := map[string]bool{"unknown flag": true, "unknown shorthand flag": true, "invalid int flag": true, "consume --config": true}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			if !builtElsewhere[name] {
				var out, errOut bytes.Buffer
				root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Redactor: &redact.Redactor{},
					Getenv: func(string) (string, bool) { return "", false }})
				root.SetArgs(args)
				err := root.ExecuteContext(context.Background())
				if err == nil || len(err.Error()) > maxUsageError || !length.MatchString(err.Error()) {
					t.Fatalf("the command's own error is not cut where it is built: %.600v", err)
				}
			}
			code, _, stderr := runCaptured(t, args...)
			if code == cmdutil.ExitOK {
				t.Fatalf("exit 0 for a 200 KB value")
			}
			if len(stderr) > maxUsageError || !length.MatchString(stderr) {
				t.Fatalf("stderr is %d bytes (want at most %d, with the value's length): %.600s", len(stderr), maxUsageError, stderr)
			}
			code, _, stderr = runCaptured(t, append(args, "--log-format", "json")...)
			if code == cmdutil.ExitOK {
				t.Fatalf("exit 0 for a 200 KB value with --log-format json")
			}
			recs := jsonLines(t, stderr)
			if len(stderr) > maxUsageError || len(recs) != 1 || recs[0]["msg"] != cmdutil.MsgRunFailed {
				t.Fatalf("--log-format json: stderr is %d bytes in %d record(s), want one %q record: %.600s", len(stderr), len(recs), cmdutil.MsgRunFailed, stderr)
			}
			if text, _ := recs[0]["error"].(string); !length.MatchString(text) || strings.Contains(text, huge[:redact.MaxQuoted+1]) {
				t.Fatalf("--log-format json: error is not cut with its length: %.600s", text)
			}
		})
	}
}
