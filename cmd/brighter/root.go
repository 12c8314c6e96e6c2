package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/observe"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(err error) error { return &exitError{code: exitUsage, err: err} }

// exitCoded returns err with the exit code the transports' wiring chose: a
// transport.UsageError becomes a usage error (exit 2); any other error is
// returned as it is.
func exitCoded(err error) error {
	var ee *exitError
	var ue *transport.UsageError
	if err != nil && !errors.As(err, &ee) && errors.As(err, &ue) {
		return usageErr(err)
	}
	return err
}

// asExitError finds the exit code an error already chose: an exitError in
// its chain, or a transport.UsageError (a usage error, exit 2) made by the
// transports' wiring.
func asExitError(err error) (*exitError, bool) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee, true
	}
	var ue *transport.UsageError
	if errors.As(err, &ue) {
		return &exitError{code: exitUsage, err: err}, true
	}
	return nil, false
}
func failureErr(err error) error { return &exitError{code: exitFailure, err: err} }

// positiveDuration refuses a duration flag's value d of zero or less, a
// usage error (exit 2) naming the flag, the value and the valid range:
// "--NAME D: must be more than 0s" and, when bound is not empty, the
// upper bound in parentheses ("at most 12h on SQS"). Every duration flag
// of the commands goes through it before anything is opened: a negative
// --timeout would otherwise run a command with a deadline already past.
func positiveDuration(name string, d time.Duration, bound string) error {
	if d > 0 {
		return nil
	}
	if bound != "" {
		bound = " (" + bound + ")"
	}
	return usageErr(fmt.Errorf("--%s %s: must be more than 0s%s", name, config.FormatDuration(d), bound))
}

// exclusiveAnnotation is the command annotation holding the groups of
// mutually exclusive flags markExclusive declared: the groups' flag names,
// space-separated, one group a line.
const exclusiveAnnotation = "brighter_mutually_exclusive"

// markExclusive declares names, flags of cmd, mutually exclusive: cobra's
// MarkFlagsMutuallyExclusive (which also keeps the others out of shell
// completion once one is given) plus a group that checkExclusiveFlags
// checks first, from the root's PersistentPreRunE, so the user reads a
// usage error of brighter's own rather than cobra's "if any flags in the
// group [...] are set none of the others can be".
func markExclusive(cmd *cobra.Command, names ...string) {
	cmd.MarkFlagsMutuallyExclusive(names...)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	groups := cmd.Annotations[exclusiveAnnotation]
	if groups != "" {
		groups += "\n"
	}
	cmd.Annotations[exclusiveAnnotation] = groups + strings.Join(names, " ")
}

// checkExclusiveFlags refuses, with a usage error (exit 2), a command line
// giving two or more flags of one group markExclusive declared on c:
// "--invalid and --native are mutually exclusive: give one of --dlq,
// --invalid, --native".
func checkExclusiveFlags(c *cobra.Command) error {
	for group := range strings.Lines(c.Annotations[exclusiveAnnotation]) {
		names := strings.Fields(group)
		var given []string
		for _, n := range names {
			if f := c.Flags().Lookup(n); f != nil && f.Changed {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 1 {
			return usageErr(fmt.Errorf("%s are mutually exclusive: give one of --%s", andList(given), strings.Join(names, ", --")))
		}
	}
	return nil
}

// andList joins items as "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// wrapExit adds context to err, keeping the exit code an inner exitError
// already chose (a seed file that does not parse is a usage error even when
// it surfaces while opening a channel), else using code.
func wrapExit(code int, err error, format string, args ...any) error {
	if ee, ok := asExitError(err); ok {
		code, err = ee.code, ee.err
	}
	return &exitError{code: code, err: fmt.Errorf(format+": %w", append(args, err)...)}
}

// globalOptions are the root command's persistent flags.
type globalOptions struct {
	logFormat string
	logLevel  string
}

// newLogger builds the slog logger the flags ask for; logs go to stderr.
// Repeated Errors are rate-limited with a count of what was suppressed.
func (g *globalOptions) newLogger(io *IOStreams) (*slog.Logger, error) {
	h, _, err := g.logHandler(io)
	if err != nil {
		return nil, err
	}
	return slog.New(redact.Handler(observe.RateLimit(h, observe.DefaultLogEvery, observe.DefaultLogBurst), io.Redactor)), nil
}

// logHandler returns the handler the flags ask for, writing to stderr,
// and its level; consume wraps it (observe.LogTee) before rate-limiting.
func (g *globalOptions) logHandler(io *IOStreams) (slog.Handler, slog.Level, error) {
	var level slog.Level
	switch strings.ToLower(g.logLevel) {
	case "debug":
		level = slog.LevelDebug
	case "info", "":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, 0, usageErr(fmt.Errorf("--log-level %q: valid values are %s", redact.Quoted(g.logLevel), strings.Join(logLevels, ", ")))
	}
	opts := &slog.HandlerOptions{Level: level}
	switch g.logFormat {
	case "text", "":
		return slog.NewTextHandler(io.ErrOut, opts), level, nil
	case "json":
		return slog.NewJSONHandler(io.ErrOut, opts), level, nil
	}
	return nil, 0, usageErr(fmt.Errorf("--log-format %q: valid values are %s", redact.Quoted(g.logFormat), strings.Join(logFormats, ", ")))
}

func newRootCmd(io *IOStreams) *cobra.Command {
	g := &globalOptions{}
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
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "text", "log format: "+strings.Join(logFormats, ", "))
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: "+strings.Join(logLevels, ", "))
	completeValues(root, logFormats, "log-format")
	completeValues(root, logLevels, "log-level")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(err) })
	// Check the global flags for every command, including those that log
	// nothing (a typo in --log-format must not pass silently).
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := checkExclusiveFlags(c); err != nil {
			return err
		}
		_, err := g.newLogger(io)
		return err
	}

	root.AddCommand(newConsumeCmd(io, g))
	root.AddCommand(newSendCmd(io, g))
	root.AddCommand(newVersionCmd(io))
	root.AddCommand(newSchemaCmd(io))
	root.AddCommand(newWatchCmd(io, g))
	root.AddCommand(newDLQCmd(io, g))
	root.AddCommand(newLintCmd(io, g))
	root.AddCommand(newDemoCmd(io, g))
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
		if c.Name() == "help" && c.Parent() == root {
			c.Args = func(cmd *cobra.Command, args []string) error {
				target, rest, err := root.Find(args)
				if err != nil {
					return usageErr(fmt.Errorf("unknown help topic %q: %w", redact.Quoted(strings.Join(args, " ")), err))
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
					return usageErr(fmt.Errorf("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", ")))
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// unknownSubcommand is the usage error for an argument of parent that names
// none of its subcommands, with the closest names cobra suggests.
func unknownSubcommand(parent *cobra.Command, arg string) error {
	msg := fmt.Sprintf("unknown command %q for %q", redact.Quoted(arg), parent.CommandPath())
	if s := parent.SuggestionsFor(arg); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
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
	return usageErr(errors.New(msg))
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, io *IOStreams, args []string) int {
	if io.Redactor == nil {
		io.Redactor = &redact.Redactor{}
	}
	// The AWS SDK reads its keys from the environment, not the file: they
	// are secrets of this run too.
	for _, k := range awsSecretEnv {
		if v, ok := io.Getenv(k); ok {
			io.Redactor.Add(v)
		}
	}
	root := newRootCmd(io)
	// Never nil: cobra reads os.Args for nil args (a test binary's flags).
	root.SetArgs(append([]string{}, args...))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage
	if ee, ok := asExitError(err); ok {
		code = ee.code
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

// awsSecretEnv are the environment variables the AWS SDK reads keys from.
var awsSecretEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}

// msgRunFailed is the stable message of the final error record.
const msgRunFailed = "brighter: run failed"

// finalError writes the error that ends the run on stderr, redacted: the
// line "brighter: ERROR", or with --log-format json one JSON record (level
// ERROR, msg msgRunFailed, error, exit_code), so that every line of a JSON
// run parses (what a crash-looping pod shows). Every value in it
// is cut at redact.MaxQuoted bytes with its length shown (redact.Bound): the
// errors cobra and pflag build quote the command line whole.
func finalError(io *IOStreams, root *cobra.Command, args []string, err error, code int) {
	text := redact.Bound(io.Redactor.String(err.Error()))
	if f := root.PersistentFlags().Lookup("log-format"); (f != nil && f.Value.String() == "json") || askedJSON(args) {
		log := slog.New(slog.NewJSONHandler(io.ErrOut, nil))
		log.Error(msgRunFailed, "error", text, "exit_code", code)
		return
	}
	fmt.Fprintln(io.ErrOut, "brighter:", text)
}
