package root

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brightergo/brighter/internal/cmd/factory"
)

// TestCommandsAreNamedAsTheirCommands: each entry of commands makes the
// command of its name, and the whole tree has no other command under the
// root but cobra's help and completion: a command line that names one
// first builds that command.
func TestCommandsAreNamedAsTheirCommands(t *testing.T) {
	io := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: os.LookupEnv}
	want := map[string]bool{"help": true, "completion": true}
	for _, c := range commands {
		if got := c.make(factory.New(io, "", "")).Name(); got != c.name {
			t.Errorf("commands entry %q makes the command %q", c.name, got)
		}
		want[c.name] = true
	}
	for _, c := range newRootCmd(io).Commands() {
		if !want[c.Name()] {
			t.Errorf("the root has %q, which commands does not list", c.Name())
		}
		delete(want, c.Name())
	}
	if len(want) > 0 {
		t.Errorf("commands lists %v, which the root does not have", want)
	}
}

// logTime matches the time of a log record, text or JSON.
var logTime = regexp.MustCompile(`"time":"[^"]*"|time=\S+`)

// TestACommandBuiltAloneRunsAsInTheWholeTree: a command line that names a
// command first runs on a root with that command alone (Run), and says
// exactly what it says on the whole tree: the same exit code, stdout and
// stderr for each command's help, an unknown flag, stray arguments, a
// global flag after it, a missing subcommand or file.
func TestACommandBuiltAloneRunsAsInTheWholeTree(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	missing := filepath.Join(dir, "missing.yaml")
	lines := [][]string{{"dlq"}, {"dlq", "peek", "--help"}, {"dlq", "no-such"}, {"dlq", "stats", "--config", missing, "-s", "orders"},
		{"consume", "--config", missing}, {"consume", "--config", missing, "--log-format", "json"}, {"lint", missing}, {"send", "--config", missing, "-s", "x", "--body", "{}"},
		{"schema"}, {"version"}}
	for _, c := range commands {
		lines = append(lines, []string{c.name, "--help"}, []string{c.name, "--no-such-flag"}, []string{c.name, "stray1", "stray2", "stray3", "stray4", "stray5"},
			[]string{c.name, "--log-level", "nonsense"})
	}
	run := func(args []string, alone bool) (int, string, string) {
		var out, errOut bytes.Buffer
		io := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) (string, bool) { return "", false }}
		f := factory.New(io, "", "")
		if alone {
			return Run(context.Background(), f, args), out.String(), errOut.String()
		}
		return runTree(context.Background(), f, args, ""), out.String(), errOut.String()
	}
	for _, args := range lines {
		if namedFirst(args) == "" {
			t.Fatalf("%v: names no command first", args)
		}
		wc, wout, werr := run(args, false)
		ac, aout, aerr := run(args, true)
		// A log record's time is the one thing that may differ.
		wout, werr = logTime.ReplaceAllString(wout, "TIME"), logTime.ReplaceAllString(werr, "TIME")
		aout, aerr = logTime.ReplaceAllString(aout, "TIME"), logTime.ReplaceAllString(aerr, "TIME")
		if wc != ac || wout != aout || werr != aerr {
			t.Errorf("brighter %s: alone exit %d\nstdout: %s\nstderr: %s\nwhole tree exit %d\nstdout: %s\nstderr: %s",
				strings.Join(args, " "), ac, aout, aerr, wc, wout, werr)
		}
	}
}
