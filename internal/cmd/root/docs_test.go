package root

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Markers around the generated --help reference of a command page.
const (
	helpBegin = "<!-- help:begin (generated from --help by TestCommandDocsMatchHelp; BRIGHTER_UPDATE_DOCS=1 rewrites it) -->"
	helpEnd   = "<!-- help:end -->"
)

// TestCommandDocsMatchHelp: every command has a page in docs/commands, and
// each page ends with its command's --help (and its subcommands'), exactly
// as the binary prints it, so the pages cannot drift from the flags. Run
// with BRIGHTER_UPDATE_DOCS=1 to rewrite the generated sections after
// changing a command.
func TestCommandDocsMatchHelp(t *testing.T) {
	update := os.Getenv("BRIGHTER_UPDATE_DOCS") == "1"
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard, Getenv: os.LookupEnv})
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		page := filepath.Join("..", "..", "..", "docs", "commands", c.Name()+".md")
		data, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("brighter %s has no page: %v", c.Name(), err)
			continue
		}
		var want strings.Builder
		want.WriteString(helpBegin + "\n\n## Reference (`--help`)\n")
		for _, path := range commandPaths(c) {
			want.WriteString("\n```text\n$ brighter " + strings.Join(path, " ") + " --help\n")
			want.WriteString(helpOf(t, path))
			want.WriteString("```\n")
		}
		want.WriteString("\n" + helpEnd + "\n")
		text := string(data)
		checkFlagsExist(t, page, text, root)
		got := ""
		if i, j := strings.Index(text, helpBegin), strings.Index(text, helpEnd); i >= 0 && j > i {
			got = text[i : j+len(helpEnd)+1]
		}
		if got == want.String() {
			continue
		}
		if update {
			if got != "" {
				text = strings.Replace(text, got, want.String(), 1)
			} else {
				text = strings.TrimRight(text, "\n") + "\n\n" + want.String()
			}
			if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", page)
			continue
		}
		t.Errorf("%s does not end with the --help of brighter %s: run BRIGHTER_UPDATE_DOCS=1 go test -run TestCommandDocsMatchHelp ./cmd/brighter and read the diff", page, c.Name())
	}
}

// flagMention is a --flag written in a page's prose.
var flagMention = regexp.MustCompile(`(?:^|[\s\x60(\[|])--([a-z][a-z0-9-]+)`)

// checkFlagsExist fails on a --flag the prose of page mentions that no
// command has (a renamed or removed flag).
func checkFlagsExist(t *testing.T, page, text string, root *cobra.Command) {
	t.Helper()
	known := map[string]bool{"help": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if i := strings.Index(text, helpBegin); i >= 0 {
		text = text[:i]
	}
	for _, m := range flagMention.FindAllStringSubmatch(text, -1) {
		if !known[m[1]] {
			t.Errorf("%s mentions --%s, which no brighter command has", page, m[1])
		}
	}
}

// commandPaths lists c and its runnable subcommands as argument paths.
func commandPaths(c *cobra.Command) [][]string {
	out := [][]string{{c.Name()}}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, []string{c.Name(), sub.Name()})
		}
	}
	return out
}

// helpOf is what `brighter PATH... --help` prints.
func helpOf(t *testing.T, path []string) string {
	t.Helper()
	var out bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Getenv: os.LookupEnv}
	if code := run(t.Context(), streams, append(path, "--help")); code != 0 {
		t.Fatalf("brighter %s --help exited %d: %s", strings.Join(path, " "), code, out.String())
	}
	return out.String()
}
