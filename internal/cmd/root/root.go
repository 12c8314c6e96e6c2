package root

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/consume"
	"github.com/brightergo/brighter/internal/cmd/demo"
	"github.com/brightergo/brighter/internal/cmd/dlq"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/cmd/lint"
	"github.com/brightergo/brighter/internal/cmd/schema"
	"github.com/brightergo/brighter/internal/cmd/send"
	"github.com/brightergo/brighter/internal/cmd/version"
	"github.com/brightergo/brighter/internal/cmd/watch"
	"github.com/brightergo/brighter/internal/redact"
)

// commands are the commands under the root, in the order they are added,
// each with the name its command has (TestCommandsAreNamedAsTheirCommands).
var commands = []struct {
	name string
	make func(*factory.Factory) *cobra.Command
}{
	{"consume", func(f *factory.Factory) *cobra.Command { return consume.NewCmdConsume(f, nil) }},
	{"send", func(f *factory.Factory) *cobra.Command { return send.NewCmdSend(f, nil) }},
	{"version", func(f *factory.Factory) *cobra.Command { return version.NewCmdVersion(f, nil) }},
	{"schema", func(f *factory.Factory) *cobra.Command { return schema.NewCmdSchema(f, nil) }},
	{"watch", func(f *factory.Factory) *cobra.Command { return watch.NewCmdWatch(f, nil) }},
	{"dlq", dlq.NewCmdDLQ},
	{"lint", func(f *factory.Factory) *cobra.Command { return lint.NewCmdLint(f, nil) }},
	{"demo", func(f *factory.Factory) *cobra.Command { return demo.NewCmdDemo(f, nil) }},
}

// NewCmdRoot returns the root command, brighter, with every command of
// the tree added, each given f: the log flags are f's, and f.IOStreams are
// the tree's streams.
func NewCmdRoot(f *factory.Factory) *cobra.Command { return newCmdRoot(f, "") }

// newCmdRoot is NewCmdRoot with only the command named only under the root
// (every command when only is ""): the root's flags, help and completion
// commands are the same.
func newCmdRoot(f *factory.Factory, only string) *cobra.Command {
	io, g := f.IOStreams, f
	root := &cobra.Command{
		Use:   "brighter",
		Short: "Run message consumers whose redelivery budget runs down, on SQS/SNS, Pub/Sub and RocketMQ",
		Long: `brighter runs message consumers on AWS SQS/SNS, Google Cloud Pub/Sub and RocketMQ 5.

A poison message is delivered at most requeueCount times, then routed to the
dead-letter queue with the rejection reason written on it, in the wire format
of Brighter (the .NET library).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.PersistentFlags().StringVar(&g.LogFormat, "log-format", "text", "log format: "+strings.Join(cmdutil.LogFormats, ", "))
	root.PersistentFlags().StringVar(&g.LogLevel, "log-level", "info", "log level: "+strings.Join(cmdutil.LogLevels, ", "))
	cmdutil.CompleteValues(root, cmdutil.LogFormats, "log-format")
	cmdutil.CompleteValues(root, cmdutil.LogLevels, "log-level")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	// Check the global flags for every command, including those that log
	// nothing (a typo in --log-format must not pass silently).
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := cmdutil.CheckExclusiveFlags(c); err != nil {
			return err
		}
		_, err := g.Logger()
		return err
	}

	for _, c := range commands {
		if only == "" || c.name == only {
			root.AddCommand(c.make(f))
		}
	}
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command of the tree that has
// subcommands (dlq, completion, the root) refuse what is not one of them
// with a usage error (exit 2) and cobra's "Did you mean this?" suggestion,
// and a non-root parent run alone print its help and exit 2: a script that
// typos a subcommand must not succeed. `help TOPIC` refuses an
// unknown topic the same way. cobra adds its help and completion commands
// on Execute; they are added here first so the walk reaches them.
func refuseUnknownSubcommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2
		if p := c.Parent(); p != nil && p.Name() == "completion" && p.Parent() == root {
			// cobra's completion bash|zsh|fish|powershell take no
			// argument: say so as brighter's own commands do.
			c.Args = cmdutil.NoArgs("")
		}
		if c.Name() == "help" && c.Parent() == root {
			c.Args = func(cmd *cobra.Command, args []string) error {
				target, rest, err := root.Find(args)
				if err != nil {
					return cmdutil.UsageErr(fmt.Errorf("unknown help topic %q: %w", redact.Quoted(strings.Join(args, " ")), err))
				}
				if len(rest) > 0 {
					return unknownSubcommand(target, rest[0])
				}
				return nil
			}
		}
		if c.HasSubCommands() {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return unknownSubcommand(cmd, args[0])
				}
				return nil
			}
			if !c.HasParent() && !c.Runnable() {
				// brighter alone prints its help and succeeds.
				c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
			} else if !c.Runnable() {
				c.RunE = func(cmd *cobra.Command, args []string) error {
					cmd.SetOut(cmd.ErrOrStderr())
					_ = cmd.Help()
					var names []string
					for _, s := range cmd.Commands() {
						if s.IsAvailableCommand() {
							names = append(names, s.Name())
						}
					}
					return cmdutil.UsageErr(fmt.Errorf("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", ")))
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// maxSuggestedArg is the longest unknown subcommand (in bytes) for which
// "did you mean" names are looked for: longer than any command name by far.
const maxSuggestedArg = 64

// unknownSubcommand is the usage error for an argument of parent that names
// none of its subcommands, with the closest names cobra suggests.
func unknownSubcommand(parent *cobra.Command, arg string) error {
	msg := fmt.Sprintf("unknown command %q for %q", redact.Quoted(arg), parent.CommandPath())
	// A suggestion is a command name within a few edits of arg; cobra's
	// edit distance costs len(arg) x len(name) per command, so a pasted
	// value of hundreds of kilobytes, which no name is near, is not
	// compared at all.
	if len(arg) <= maxSuggestedArg {
		if s := parent.SuggestionsFor(arg); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
	}
	var names []string
	for _, s := range parent.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	if len(names) > 0 {
		msg += " (subcommands: " + strings.Join(names, ", ") + ")"
	}
	return cmdutil.UsageErr(errors.New(msg))
}

// Run executes the command line args (without the program's name) with
// the dependencies of f and returns the process exit code: 0 clean stop,
// 1 runtime failure, 2 usage or configuration error, 130 a dlq command
// interrupted, 141 (cmdutil.ExitBrokenPipe) a command whose output's
// reader went away (EPIPE; SIGPIPE is handled for the run, so the write
// fails instead of killing the process). The error that ends a failed run is written to stderr,
// redacted.
func Run(ctx context.Context, f *factory.Factory, args []string) int {
	return runTree(ctx, f, args, namedFirst(args))
}

// namedFirst is the command of commands that args name first (args[0]):
// a run of it needs no other command of the tree, and building them all
// (every command's flags, most of them dlq's) was a third of a millisecond
// of CPU at every start-up. It is "" (build every command) for anything
// else: a global flag first, help, completion, an unknown command.
func namedFirst(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// runTree is Run on a root with only the command named only under it
// (newCmdRoot; "" for every command).
func runTree(ctx context.Context, f *factory.Factory, args []string, only string) int {
	io := f.IOStreams
	if io.Redactor == nil {
		io.Redactor = &redact.Redactor{}
	}
	// The AWS SDK reads its keys from the environment, not the file: they
	// are secrets of this run too.
	for _, k := range redact.SecretEnv {
		if v, ok := io.Getenv(k); ok {
			io.Redactor.Add(v)
		}
	}
	// A reader of stdout that leaves early (| head) makes the next write
	// fail with EPIPE rather than kill the process: each command stops
	// there as at an interrupt, releasing what it holds.
	defer cmdutil.HandleBrokenPipe()()
	root := newCmdRoot(f, only)
	// Never nil: cobra reads os.Args for nil args (a test binary's flags).
	root.SetArgs(append([]string{}, args...))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	code := cmdutil.ExitUsage
	if ee, ok := cmdutil.AsExitError(err); ok {
		code = ee.Code
	}
	if cmdutil.IsBrokenPipe(err) && code != cmdutil.ExitInterrupted {
		// Whatever the command made of it, a run that ended because its
		// output's reader went away exits as a writer SIGPIPE ended.
		code = cmdutil.ExitBrokenPipe
	}
	// Errors cobra reports itself (unknown command or flag, bad args) are
	// usage errors.
	finalError(io, root, args, err, code)
	return code
}

// askedJSON reports whether args ask for --log-format json, for a run that
// failed before cobra parsed its flags (an unknown command, a bad flag).
func askedJSON(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--log-format=json":
			return true
		case a == "--log-format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// finalError writes the error that ends the run on stderr, redacted
// (cmdutil.WriteFinalError): a line, or with --log-format json one JSON
// record. Every value in it is cut at redact.MaxQuoted bytes with its
// length shown: the errors cobra and pflag build quote the command line
// whole.
func finalError(io *iostreams.IOStreams, root *cobra.Command, args []string, err error, code int) {
	f := root.PersistentFlags().Lookup("log-format")
	cmdutil.WriteFinalError(io.ErrOut, io.Redactor, (f != nil && f.Value.String() == "json") || askedJSON(args), err, code)
}
