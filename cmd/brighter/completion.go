package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/config"
)

// defaultConfigPath is the subscriptions file a command reads without -c.
const defaultConfigPath = "brighter.yaml"

// Values of the global flags, in the order help and completion show them.
var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

// completeValues registers a fixed list of values as the completion of each
// named flag of cmd (a persistent flag of the root included).
func completeValues(cmd *cobra.Command, values []string, flags ...string) {
	for _, name := range flags {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}

// subscriptionNames completes subscription names from the subscriptions
// file the command line names with -c/--config (or brighter.yaml), each
// with its transport and channel as the description. A file that cannot be
// read completes nothing: completion never prints an error in the shell.
func subscriptionNames(io *IOStreams) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		path := defaultConfigPath
		if fl := cmd.Flags().Lookup("config"); fl != nil && fl.Changed && fl.Value.Type() == "string" {
			path = fl.Value.String()
		}
		f, err := config.Load(path, io.Getenv)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("subscription names: %v", err), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, 0, len(f.Subscriptions))
		for _, s := range f.Subscriptions {
			out = append(out, cobra.CompletionWithDesc(s.Name, fmt.Sprintf("%s %s", s.Transport, s.ChannelName)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeSubscriptionArg completes the first argument with subscription
// names (a URL is typed by hand) and nothing after it.
func completeSubscriptionArg(io *IOStreams) cobra.CompletionFunc {
	names := subscriptionNames(io)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 || cmd.Flags().Changed("subscription") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}
