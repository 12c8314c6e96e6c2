package root

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// vocabulary is the CLI's one meaning per flag name: the shorthand each of
// these long names must have, wherever it appears.
var vocabulary = map[string]string{
	"config":       "c",
	"output":       "o",
	"subscription": "s",
}

// synonyms are names that would say the same thing another way; none may be
// declared (apart from a hidden, deprecated alias kept for old scripts).
var synonyms = map[string]string{
	"config-file":   "config",
	"cfg":           "config",
	"format":        "output",
	"out":           "output",
	"sub":           "subscription",
	"subscriptions": "subscription",
}

// readsConfig lists the commands that read a subscriptions file; each must
// take -c/--config. printsReport lists the commands that print a report;
// each must take -o/--output. choosesSubscription lists the commands that
// act on one subscription (or a chosen few); each must take
// -s/--subscription.
var (
	readsConfig         = []string{"brighter consume", "brighter send", "brighter lint", "brighter dlq peek", "brighter dlq stats", "brighter dlq replay"}
	printsReport        = []string{"brighter lint", "brighter dlq peek", "brighter dlq stats", "brighter version"}
	choosesSubscription = []string{"brighter consume", "brighter send", "brighter dlq peek", "brighter dlq stats", "brighter dlq replay"}
)

// enumerated are the flags whose values are a known list (or the names of
// the file's subscriptions): each completes them in the shell.
var enumerated = []string{"output", "format", "log-level", "log-format", "fail-on", "explain", "type", "pump", "mode", "reason", "subscription"}

// TestFlagVocabulary_EveryCommandFollowsIt walks the command tree and fails on
// a flag that breaks the vocabulary: a long name with another shorthand, a
// shorthand used for another name, a synonym, a command of the lists above
// without its flag, an --output whose help does not list its values, an
// enumerated flag whose values do not complete, or a command taking arguments
// without examples.
func TestFlagVocabulary_EveryCommandFollowsIt(t *testing.T) {
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard, Getenv: os.LookupEnv})
	cmds := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cmds[c.CommandPath()] = c
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	shortOwner := map[string]string{}
	for long, short := range vocabulary {
		shortOwner[short] = long
	}
	for path, c := range cmds {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if want, ok := vocabulary[f.Name]; ok && f.Shorthand != want {
				t.Errorf("%s --%s: shorthand %q, want -%s", path, f.Name, f.Shorthand, want)
			}
			if owner, ok := shortOwner[f.Shorthand]; ok && owner != f.Name {
				t.Errorf("%s --%s: shorthand -%s means --%s everywhere else", path, f.Name, f.Shorthand, owner)
			}
			if want, ok := synonyms[f.Name]; ok && !f.Hidden {
				t.Errorf("%s --%s: say --%s (a kept alias must be hidden and deprecated)", path, f.Name, want)
			}
			if f.Name == "output" && !strings.Contains(f.Usage, ", ") && !strings.Contains(f.Usage, " or ") {
				t.Errorf("%s --output: its help %q does not list its values", path, f.Usage)
			}
		})
		for _, name := range enumerated {
			if c.Flag(name) == nil {
				continue
			}
			if _, ok := c.GetFlagCompletionFunc(name); !ok {
				t.Errorf("%s --%s: its values do not complete", path, name)
			}
		}
		// A command without an Args check takes any arguments.
		takesArgs := c.Args == nil || c.Args(c, []string{"x"}) == nil
		if c.Runnable() && takesArgs && c.Example == "" {
			t.Errorf("%s takes arguments but shows no examples", path)
		}
	}
	need := func(list []string, flag string) {
		for _, path := range list {
			c, ok := cmds[path]
			if !ok {
				t.Errorf("%s: no such command", path)
				continue
			}
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", path, flag)
			}
		}
	}
	need(readsConfig, "config")
	need(printsReport, "output")
	need(choosesSubscription, "subscription")
	// Every command that reads a subscriptions file is in the list, so a new
	// one cannot slip by: a command with --subscription reads the file.
	for path, c := range cmds {
		if c.Flags().Lookup("subscription") != nil && c.Flags().Lookup("config") == nil {
			t.Errorf("%s chooses a subscription but takes no --config", path)
		}
	}
}
