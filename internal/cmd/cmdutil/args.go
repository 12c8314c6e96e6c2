package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/redact"
)

// maxArgsShown is how many of the arguments given an argument-count error
// quotes; more are counted ("and 3 more").
const maxArgsShown = 3

// NoArgs is the positional-argument check of a command that takes none: an
// argument is a usage error (exit 2) naming the command and the arguments
// given, then hint when it is not empty ("consume takes no arguments (got
// "orders"): name subscriptions with -s/--subscription"), never cobra's
// bare "unknown command" or "accepts 0 arg(s)". The command is named by
// its path below the root ("completion bash").
func NoArgs(hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("%s takes no arguments (got %s)", commandName(cmd), givenArgs(args))
		if hint != "" {
			msg += ": " + hint
		}
		return UsageErr(fmt.Errorf("%s", msg))
	}
}

// ArgsBetween is the positional-argument check of a command that takes
// from minN to maxN arguments, what says which they are ("the destination,
// a SUBSCRIPTION name or URL"): any other count is a usage error (exit 2)
// that names the command, the count it takes and what, and what was given,
// as "dlq restore takes one argument, the archive FILE: none given" or
// "dlq peek takes at most one argument, the destination ...: got 2 ("a", "b")".
func ArgsBetween(minN, maxN int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= minN && len(args) <= maxN {
			return nil
		}
		got := "none given"
		if len(args) > 0 {
			got = fmt.Sprintf("got %d (%s)", len(args), givenArgs(args))
		}
		return UsageErr(fmt.Errorf("%s takes %s, %s: %s", commandName(cmd), argCount(minN, maxN), what, got))
	}
}

// commandName is cmd's path without the root's name: "dlq peek".
func commandName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// argCount says how many arguments a command takes: "one argument", "at
// most one argument", "one or two arguments", "from 2 to 4 arguments".
func argCount(minN, maxN int) string {
	noun := func(n int) string {
		if n == 1 {
			return "argument"
		}
		return "arguments"
	}
	switch {
	case minN == maxN:
		return numberWord(maxN) + " " + noun(maxN)
	case minN == 0:
		return "at most " + numberWord(maxN) + " " + noun(maxN)
	case maxN == minN+1:
		return numberWord(minN) + " or " + numberWord(maxN) + " arguments"
	}
	return fmt.Sprintf("from %s to %s arguments", numberWord(minN), numberWord(maxN))
}

// numberWord is n in words up to three, else in digits.
func numberWord(n int) string {
	if n >= 0 && n <= 3 {
		return []string{"no", "one", "two", "three"}[n]
	}
	return fmt.Sprint(n)
}

// givenArgs quotes the first maxArgsShown of args (each cut at
// redact.MaxQuoted bytes) and counts the rest.
func givenArgs(args []string) string {
	shown := make([]string, 0, maxArgsShown)
	for i, a := range args {
		if i == maxArgsShown {
			shown = append(shown, fmt.Sprintf("and %d more", len(args)-maxArgsShown))
			break
		}
		shown = append(shown, redact.Quote(a))
	}
	return strings.Join(shown, ", ")
}
