package root

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/export"
)

// TestOutputFlag_TextIsEveryCommandsDefault walks the command tree: every
// command with -o/--output defaults to text and its help lists text first,
// so no command has a default of its own (dlq peek and stats had table).
func TestOutputFlag_TextIsEveryCommandsDefault(t *testing.T) {
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard, Getenv: os.LookupEnv})
	var withOutput []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("output"); f != nil {
			withOutput = append(withOutput, c.CommandPath())
			if f.Shorthand != "o" || f.DefValue != export.Default || !strings.HasPrefix(f.Usage, "output format: text, ") {
				t.Errorf("%s: -%s/--output defaults to %q with help %q; want -o, default text, help listing text first", c.CommandPath(), f.Shorthand, f.DefValue, f.Usage)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, want := range []string{"brighter dlq peek", "brighter dlq stats", "brighter dlq replay", "brighter dlq archive", "brighter lint", "brighter version"} {
		if !strings.Contains(strings.Join(withOutput, "\n")+"\n", want+"\n") {
			t.Errorf("%s has no -o/--output (found on %v): the test would miss it", want, withOutput)
		}
	}
}
