package cmdutil

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// TestArgs_SayWhatTheArgumentsAre: a wrong count of positional arguments
// is a usage error (exit 2) naming the command by its path, what it takes
// and what was given; a right count passes.
func TestArgs_SayWhatTheArgumentsAre(t *testing.T) {
	root := &cobra.Command{Use: "brighter"}
	dlq := &cobra.Command{Use: "dlq"}
	leaf := &cobra.Command{Use: "restore"}
	root.AddCommand(dlq)
	dlq.AddCommand(leaf)
	for _, tc := range []struct {
		check cobra.PositionalArgs
		args  []string
		want  string // "" = accepted
	}{
		{NoArgs(""), nil, ""},
		{NoArgs(""), []string{"x"}, `dlq restore takes no arguments (got "x")`},
		{NoArgs("name it with -s"), []string{"x", "y"}, `dlq restore takes no arguments (got "x", "y"): name it with -s`},
		{ArgsBetween(1, 1, "the archive FILE"), []string{"f"}, ""},
		{ArgsBetween(1, 1, "the archive FILE"), nil, "dlq restore takes one argument, the archive FILE: none given"},
		{ArgsBetween(0, 1, "the destination"), nil, ""},
		{ArgsBetween(0, 1, "the destination"), []string{"a", "b"}, `dlq restore takes at most one argument, the destination: got 2 ("a", "b")`},
		{ArgsBetween(1, 2, "the ID and the destination"), []string{"a", "b", "c", "d", "e"}, `dlq restore takes one or two arguments, the ID and the destination: got 5 ("a", "b", "c", and 2 more)`},
		{ArgsBetween(2, 5, "the things"), []string{"a"}, `dlq restore takes from two to 5 arguments, the things: got 1 ("a")`},
	} {
		err := tc.check(leaf, tc.args)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v, want accepted", tc.args, err)
			}
			continue
		}
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitUsage || err.Error() != tc.want {
			t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}
