package root

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runCaptured runs the CLI in-process with empty stdin and returns the exit
// code, stdout and stderr.
func runCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) (string, bool) { return "", false }}
	code := run(context.Background(), io, args)
	return code, out.String(), errOut.String()
}

// typo returns name with its last letter changed: one edit away, so cobra
// suggests name for it.
func typo(name string) string {
	last := name[len(name)-1]
	repl := byte('x')
	if last == 'x' {
		repl = 'q'
	}
	return name[:len(name)-1] + string(repl)
}

// TestCommandTreeRefusesUnknownSubcommandsAndArguments walks the
// whole command tree (cobra's help and completion commands included) and
// checks that a mistake on any command exits 2 with a message, never prints
// help and succeeds:
//   - a parent refuses an unknown subcommand, and a typo'd one with a
//     suggestion of the right name;
//   - a parent other than the root run alone exits 2, naming its
//     subcommands (the root alone prints help and succeeds);
//   - every command refuses an unknown flag and five stray arguments,
//     a command that takes no files saying what its arguments are.
func TestCommandTreeRefusesUnknownSubcommandsAndArguments(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // stray arguments name files that do not exist here
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: os.LookupEnv})
	var seen int
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if strings.HasPrefix(c.Name(), "__") { // cobra's hidden completion requests
			return
		}
		seen++
		name := strings.Join(append([]string{"brighter"}, path...), " ")
		expectUsage := func(args []string, wantStderr ...string) { // each want: alternatives split by |
			t.Helper()
			code, out, errOut := runCaptured(t, args...)
			if code != cmdutil.ExitUsage {
				t.Errorf("brighter %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, cmdutil.ExitUsage, out, errOut)
				return
			}
			for _, w := range wantStderr {
				if !slices.ContainsFunc(strings.Split(w, "|"), func(alt string) bool { return strings.Contains(errOut, alt) }) {
					t.Errorf("brighter %s: stderr does not say %q:\n%s", strings.Join(args, " "), w, errOut)
				}
			}
		}
		with := func(extra ...string) []string { return append(append([]string{}, path...), extra...) }

		expectUsage(with("--no-such-flag"), "unknown flag: --no-such-flag")
		expectUsage(with("stray1", "stray2", "stray3", "stray4", "stray5"), "stray1|received 5")
		// A command's argument-count error says what its arguments are
		// (cmdutil.NoArgs, cmdutil.ArgsBetween), never cobra's bare
		// "accepts at most 1 arg(s), received 5"; lint takes files, help
		// topics and a parent subcommands.
		if !c.HasSubCommands() && c.Name() != "lint" && c.Name() != "help" {
			expectUsage(with("stray1", "stray2", "stray3", "stray4", "stray5"), strings.TrimPrefix(name, "brighter ")+" takes ", `"stray1", "stray2", "stray3", and 2 more`)
		}
		if c.HasAvailableSubCommands() {
			expectUsage(with("no-such-command"), `unknown command "no-such-command" for "`+name+`"`)
			for _, s := range c.Commands() {
				if !s.IsAvailableCommand() || len(s.Name()) < 4 {
					continue
				}
				expectUsage(with(typo(s.Name())), "did you mean "+s.Name())
			}
			if len(path) > 0 {
				expectUsage(path, name+" needs a subcommand")
			} else if code, out, _ := runCaptured(t); code != cmdutil.ExitOK || !strings.Contains(out, "Usage:") {
				t.Errorf("brighter alone: exit %d, want 0 with the help\n%s", code, out)
			}
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(root, nil)
	// brighter, 9 commands, help, completion's 4 shells, dlq's 3.
	if seen < 17 {
		t.Errorf("walked %d commands, want at least 17: the walk missed part of the tree", seen)
	}

	// help refuses a topic that is no command, with the suggestion.
	code, _, errOut := runCaptured(t, "help", "dlq", "peak")
	if code != cmdutil.ExitUsage || !strings.Contains(errOut, "did you mean peek") {
		t.Errorf("brighter help dlq peak: exit %d, stderr %s", code, errOut)
	}
	// The three cases, literally.
	for _, args := range [][]string{{"dlq", "peak", "orders"}, {"dlq"}, {"completion", "tcsh"}} {
		if code, _, _ := runCaptured(t, args...); code != cmdutil.ExitUsage {
			t.Errorf("brighter %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}

// TestCommandTreeExclusiveFlagsSayWhichAndWhy walks the whole
// command tree and gives, on every command with a group of mutually
// exclusive flags (cobra's MarkFlagsMutuallyExclusive), two flags of the
// group: the run exits 2 with brighter's message naming the flags given,
// never cobra's raw "if any flags in the group [...] are set none of the
// others can be" (as `dlq peek --native --invalid` once did).
func TestCommandTreeExclusiveFlagsSayWhichAndWhy(t *testing.T) {
	t.Chdir(t.TempDir())
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: os.LookupEnv})
	const cobraExclusive = "cobra_annotation_mutually_exclusive" // cobra's (unexported) annotation key
	var tried int
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		groups := map[string]bool{}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			for _, g := range f.Annotations[cobraExclusive] {
				groups[g] = true
			}
		})
		for g := range groups {
			names := strings.Fields(g)
			args := slices.Clone(path)
			for c.ValidateArgs(args[len(path):]) != nil && len(args) < len(path)+3 {
				args = append(args, "orders") // the fewest arguments the command takes
			}
			for _, n := range names[len(names)-2:] {
				if c.Flags().Lookup(n).Value.Type() == "bool" {
					args = append(args, "--"+n)
				} else {
					args = append(args, "--"+n+"=x")
				}
			}
			tried++
			code, _, errOut := runCaptured(t, args...)
			want := "brighter: --" + names[len(names)-2] + " and --" + names[len(names)-1] + " are mutually exclusive: give one of --" + strings.Join(names, ", --") + "\n"
			if code != cmdutil.ExitUsage || errOut != want {
				t.Errorf("brighter %s: exit %d, stderr %q; want exit %d, stderr %q", strings.Join(args, " "), code, errOut, cmdutil.ExitUsage, want)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(root, nil)
	if tried == 0 {
		t.Fatal("no command has a group of mutually exclusive flags: the walk saw nothing")
	}
}
