// Package lint is `brighter lint`: the rules of internal/lint over
// subscriptions files (or stdin), their findings as text, JSON or SARIF,
// --live checks against the brokers, and --explain RULE.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package lint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/export"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/infra"
	"github.com/brightergo/brighter/internal/lint/infra/cloudformation"
	"github.com/brightergo/brighter/internal/lint/infra/krm"
	"github.com/brightergo/brighter/internal/lint/infra/terraform"
	"github.com/brightergo/brighter/internal/lint/live"
	"github.com/brightergo/brighter/internal/lint/local"
	"github.com/brightergo/brighter/internal/lint/rules"
	"github.com/brightergo/brighter/internal/redact"
)

// stdinName is how findings name a file read from standard input ("-").
const stdinName = "<stdin>"

// failOnNone is the --fail-on value that never fails on findings.
const failOnNone = "none"

// Options carries lint's flags and dependencies.
type Options struct {
	io     *iostreams.IOStreams
	global *factory.Factory

	files   []string
	configs []string
	format  string
	failOn  string
	explain string
	list    bool
	live    bool
	// liveTimeout bounds the broker calls of --live, per file.
	liveTimeout time.Duration
	// infraPaths are --infra's files and directories; infraRequireAll
	// makes infra-undeclared an error.
	infraPaths      []string
	infraRequireAll bool
	// infraReaders reads each infrastructure format (infraReaders() in
	// production).
	infraReaders infra.Readers

	// transports answers each transport's questions (native limits, leases).
	transports map[config.Transport]lint.TransportRules
	// readFile reads a named file (os.ReadFile in production).
	readFile func(name string) ([]byte, error)
	// probers returns the --live probers and channel validators and a
	// function that closes their clients (the transport registry's LiveCheckers in production).
	probers func() (map[config.Transport]live.Prober, map[config.Transport]live.ChannelValidator, func())
}

// NewCmdLint returns the lint command. runF, when not nil, is called with
// the parsed options instead of runLint (a test checks the flags' parsing
// without running the command).
func NewCmdLint(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	io, g := f.IOStreams, f
	o := &Options{io: io, global: g, transports: rules.Default(), readFile: os.ReadFile, infraReaders: infraReaders(), probers: func() (map[config.Transport]live.Prober, map[config.Transport]live.ChannelValidator, func()) {
		return f.Transports().LiveCheckers()
	}}
	cmd := &cobra.Command{
		Use:   "lint [-c FILE]... [FILE...]",
		Short: "Check subscriptions files for budgets and dead-letter settings that will not behave as meant",
		Long: `Check one or more subscriptions files, given with -c/--config or as arguments
(default brighter.yaml; - reads standard input), for settings that are legal but will probably not behave as their
author meant: a zero budget, a budget outranked by the broker's own redrive
limit, a budget that cannot run down, a budget with no dead-letter
destination, a dead-letter destination equal to the source,
out-of-range broker settings, and a handler timeout longer than the lease.

Each finding is "file:line:col: severity rule: message". A file that does not
parse is reported as findings at the offending lines. brighter consume runs
the same rules at start-up and logs each finding once. lint also looks, on
the file system where it runs, for what consume opens or runs when it
starts: an exec handler's command (handler-command-not-found), an http
handler's tls files (handler-tls-unreadable), a memory transport's seed
file (memory-seed-invalid) and its output file (memory-output-unwritable),
relative paths taken from the subscriptions file's directory, as consume
takes them.

Exit status: 0 when no finding is at or above --fail-on (default error, so
warnings never fail a build unless asked), 1 when one is, 2 for a usage error
or a file that cannot be read. When a file (--infra ones too) cannot be read,
the files that could are still reported, but in place of the summary the
report says the lint did not complete.

With --live, SIGINT, SIGTERM or SIGHUP stops the look-ups: no report is written (it
would be partial), the command ends with "lint: interrupted during the --live
look-ups; no report was written", exit 130.

With --live, lint also asks the brokers for the native limits in force (SQS
GetQueueAttributes RedrivePolicy, Pub/Sub GetSubscription DeadLetterPolicy,
the RocketMQ consumer group's maximum delivery attempts as the proxy reports it),
reports drift from the file (native-limit-drift) and checks budget-outranked
against the broker's value; a broker that does not report its limit is a
live-check-failed finding, which names the endpoint and what was looked
up, and the report then says the lint did not complete. Each SQS, Pub/Sub
and RocketMQ look-up gives up after 5s, and an endpoint that did not answer
one is not asked again in the run. It lists the subscriptions of each Pub/Sub
dead-letter topic: one that none reads loses what is dead-lettered there
(dead-letter-topic-unsubscribed, a warning: a reader may live elsewhere).
For each subscription with makeChannels validate or assume it also looks up
every queue, topic and subscription the file names (dead-letter,
invalid-message and native redrive destinations, and the
redrive or dead-letter policy the broker really holds), with the validation
consume runs at start-up: a missing one is an error (missing-destination).
It only reads; it never changes a broker.

With --infra PATH (repeatable; files or directories, each file's format
told by its content), lint reads the queues and subscriptions that
infrastructure files declare, offline: Terraform plan JSON (terraform show
-json PLAN) and .tf files, CloudFormation templates (JSON or YAML, short-form
intrinsics too) and Kubernetes manifests (Config Connector PubSubSubscription
and PubSubTopic, ACK Queue). It runs the --live rules against what they
declare, with the same rule ids, and the rules only they make possible: a
dead-letter target other than the file names, a redrive allow policy that
forbids the source, a retention shorter than the budget's worst case,
ordering or SNS raw delivery that disagrees, a lease the declared visibility timeout or ack
deadline cannot hold, and a channel no file declares (infra-undeclared, an
error with --infra-require-all). Those findings point into the
infrastructure file, with the subscription as the related location. A value
the files decide only at apply time is never guessed: it is not judged.

Formats: text (grouped by file, coloured on a terminal; NO_COLOR is honoured),
json, sarif (SARIF 2.1.0 for GitHub code scanning), github (workflow-command
annotations on the pull request).`,
		Example: `  # Lint brighter.yaml in the current directory
  brighter lint

  # Lint one file, as consume, send and dlq name it
  brighter lint -c deploy/brighter.yaml

  # Lint every example, failing the build on warnings too
  brighter lint --fail-on warning examples/*.yaml

  # Annotate a GitHub pull request
  brighter lint -o github deploy/brighter.yaml

  # Upload to GitHub code scanning
  brighter lint -o sarif brighter.yaml > brighter.sarif

  # Lint a file generated by another tool
  render-config | brighter lint -

  # Also compare the native limits with what the brokers actually have
  brighter lint --live brighter.yaml

  # Check the budgets against the Terraform plan before it is applied
  terraform show -json plan.out > plan.json
  brighter lint --infra plan.json brighter.yaml

  # Or against the .tf files of a directory, every channel declared there
  brighter lint --infra infra/ --infra-require-all brighter.yaml

  # Why does budget-outranked matter?
  brighter lint --explain budget-outranked

  # Every rule, its severity and summary
  brighter lint --list-rules`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("format") {
				// On stderr: stdout may be a JSON or SARIF report.
				fmt.Fprintln(o.io.ErrOut, "brighter: --format is deprecated; use -o/--output")
			}
			o.files = append(slices.Clone(o.configs), args...)
			if runF != nil {
				return runF(o)
			}
			return runLint(cmd.Context(), o)
		},
	}
	cmd.Flags().StringArrayVarP(&o.configs, "config", "c", nil, "subscriptions file to check (repeatable; also as arguments; default brighter.yaml)")
	cmdutil.AddOutputFlag(cmd, &o.format, lint.OutputFormats, "")
	// --format/-f, the flag's old name, still works.
	cmd.Flags().StringVarP(&o.format, "format", "f", export.Default, "output format (deprecated: use --output)")
	_ = cmd.Flags().MarkHidden("format")
	cmdutil.CompleteValues(cmd, lint.OutputFormats.Completions(), "format")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	cmd.Flags().StringVar(&o.failOn, "fail-on", lint.SeverityError.String(), "exit 1 when a finding is at or above this severity: error, warning, note or none")
	cmd.Flags().StringVar(&o.explain, "explain", "", "print the explanation of a rule (an id of --list-rules), or of every rule of a requirement (R-4), and exit")
	cmd.Flags().BoolVar(&o.list, "list-rules", false, "list every rule with its severity, requirement and summary (-o json: a JSON array), and exit")
	cmd.Flags().BoolVar(&o.live, "live", false, "also read the native limits in force from the brokers (SQS, Pub/Sub, RocketMQ) and report drift")
	cmd.Flags().StringArrayVar(&o.infraPaths, "infra", nil, "also check against the queues and subscriptions infrastructure files declare: a Terraform plan JSON or .tf file, a CloudFormation template, a Kubernetes manifest, or a directory of them (repeatable)")
	cmd.Flags().BoolVar(&o.infraRequireAll, "infra-require-all", false, "with --infra: a channel no infrastructure file declares is an error, not a warning")
	cmd.Flags().DurationVar(&o.liveTimeout, "live-timeout", 30*time.Second, "how long --live may spend on the brokers of one file")
	cmdutil.CompleteValues(cmd, failOnValues(), "fail-on")
	_ = cmd.RegisterFlagCompletionFunc("explain", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var ids []cobra.Completion
		for _, r := range lint.Rules() {
			ids = append(ids, cobra.CompletionWithDesc(r.ID, r.Summary))
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// failOnValues are the values of --fail-on, most severe first.
func failOnValues() []string {
	return []string{lint.SeverityError.String(), lint.SeverityWarning.String(), lint.SeverityNote.String(), failOnNone}
}

// runLint lints the files the options name and writes the report; the
// exit code follows --fail-on (a usage error, exit 2, when a finding of
// that severity or worse is found).
func runLint(ctx context.Context, o *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.explain != "" {
		return o.runExplain()
	}
	if o.list {
		return o.listRules()
	}
	format, err := lint.ParseFormat(o.format)
	if err != nil {
		return cmdutil.UsageErr(err)
	}
	failOn := lint.Severity(-1)
	if !strings.EqualFold(o.failOn, failOnNone) {
		if failOn, err = lint.ParseSeverity(o.failOn); err != nil {
			return cmdutil.UsageErr(fmt.Errorf("--fail-on: %w (or none)", err))
		}
	}
	if err := cmdutil.PositiveDuration("live-timeout", o.liveTimeout, ""); err != nil {
		return err
	}
	for _, c := range o.configs {
		if err := cmdutil.CheckConfigPath(c); err != nil {
			return err
		}
	}
	files, err := lintFiles(o.files)
	if err != nil {
		return err
	}

	l := lint.New(o.transports)
	var probers map[config.Transport]live.Prober
	var validators map[config.Transport]live.ChannelValidator
	// interrupted reports whether SIGINT, SIGTERM or SIGHUP stopped --live's
	// look-ups: the lint then writes no report (it would be partial).
	interrupted := func() bool { return false }
	stopWatch := func() {}
	defer func() { stopWatch() }()
	if o.live {
		logger, err := o.global.Logger()
		if err != nil {
			return err
		}
		ctx, interrupted, stopWatch = cmdutil.StopOnSignals(ctx, logger, logLintStopping, o.global.Signals, o.global.Exit)
		var closeProbers func()
		probers, validators, closeProbers = o.probers()
		defer closeProbers()
	}
	var report lint.Report
	var unreadable []error
	// infraUnread and filesUnread say which inputs could not be read, and
	// liveUnchecked how many subscriptions --live could not check (each a
	// live-check-failed finding): the report then says the lint did not
	// complete.
	infraUnread, filesUnread, liveUnchecked := false, 0, 0
	var set *infra.Set
	if len(o.infraPaths) > 0 {
		var err error
		set, err = infra.Load(o.infraPaths, o.infraReaders, o.readFile)
		if err != nil {
			unreadable = append(unreadable, fmt.Errorf("--infra: %w", err))
			infraUnread = true
		}
	} else if o.infraRequireAll {
		return cmdutil.UsageErr(errors.New("--infra-require-all needs --infra"))
	}
	stdinRead := false
	for _, name := range files {
		data, shown, err := o.read(name, &stdinRead)
		if err != nil {
			unreadable = append(unreadable, err)
			filesUnread++
			continue
		}
		fs, f := l.Source(shown, data, o.io.Getenv)
		if f != nil {
			o.io.Redactor.Add(f.Secrets()...)
			// What consume opens or runs at start-up, on this file system.
			fs = append(fs, local.Check(ctx, f)...)
		}
		if o.live && f != nil {
			lctx, cancel := context.WithTimeout(ctx, o.liveTimeout)
			lfs := append(live.Check(lctx, f, probers, o.transports), live.CheckChannels(lctx, f, validators)...)
			cancel()
			if interrupted() {
				return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: errors.New("lint: interrupted during the --live look-ups; no report was written")}
			}
			liveUnchecked += uncheckedSubscriptions(lfs)
			fs = append(fs, lfs...)
		}
		if set != nil && f != nil {
			fs = append(fs, live.Check(ctx, f, live.InfraProbers(set), o.transports)...)
			infraFs := live.CheckInfra(f, set, o.transports, live.InfraOptions{RequireAll: o.infraRequireAll})
			if infraUnread {
				// A channel may be declared in a file that could not be
				// read: "no file declares it" would be a false claim.
				infraFs = slices.DeleteFunc(infraFs, func(fd lint.Finding) bool { return fd.RuleID == lint.RuleInfraUndeclared })
			}
			fs = append(fs, infraFs...)
		}
		report.Files = append(report.Files, shown)
		report.Findings = append(report.Findings, fs...)
	}
	if set != nil {
		report.Files = append(report.Files, set.Files...)
	}
	report.Incomplete = incomplete(infraUnread, filesUnread, liveUnchecked)
	lint.Sort(report.Findings)
	report.Findings = fileOrder(report)
	// A report may be uploaded (SARIF to code scanning): every finding
	// passes the redaction rule, --live's broker errors included.
	for i := range report.Findings {
		report.Findings[i].Message = o.io.Redactor.String(report.Findings[i].Message)
	}

	// A run that read no file still writes its report when it did not
	// complete: a CI step's `lint -o sarif > out.sarif` then uploads a
	// report saying so (executionSuccessful false), not an empty file.
	if len(report.Files) > 0 || report.Incomplete != "" {
		if err := lint.Write(o.io.Out, format, report, lint.WriteOptions{Color: o.io.Color && format == lint.FormatText, ToolVersion: o.global.Version().Version}); err != nil {
			return cmdutil.FailureErr(err)
		}
	}
	if len(unreadable) > 0 {
		return cmdutil.UsageErr(errors.Join(unreadable...))
	}
	if failOn >= 0 && report.Reaches(failOn) {
		n := 0
		for _, f := range report.Findings {
			if f.Severity >= failOn {
				n++
			}
		}
		return cmdutil.FailureErr(fmt.Errorf("lint: %d finding(s) at or above %s", n, failOn))
	}
	return nil
}

// logLintStopping is logged (Warning) at the first SIGINT/SIGTERM of a
// lint --live: its look-ups give up and no report is written.
const logLintStopping = "signal received; stopping the live look-ups, no report will be written (send it again to exit at once)"

// incomplete returns why a run did not complete, for Report.Incomplete:
// "" when every input was read and --live checked every subscription.
func incomplete(infraUnread bool, filesUnread, liveUnchecked int) string {
	var why []string
	if filesUnread > 0 {
		why = append(why, fmt.Sprintf("%d subscriptions file(s) could not be read", filesUnread))
	}
	if infraUnread {
		why = append(why, "the infrastructure files (--infra) could not all be read, so the --infra checks are partial")
	}
	if len(why) > 0 {
		why[len(why)-1] += " (the error is on stderr)"
	}
	if liveUnchecked > 0 {
		why = append(why, fmt.Sprintf("--live could not check %d subscription(s) on the brokers (each %s finding names the endpoint and what it looked up)", liveUnchecked, lint.RuleLiveCheckFailed))
	}
	return strings.Join(why, "; ")
}

// uncheckedSubscriptions counts the subscriptions with a live-check-failed
// finding among fs, one file's --live findings.
func uncheckedSubscriptions(fs []lint.Finding) int {
	subs := map[string]bool{}
	for _, f := range fs {
		if f.RuleID == lint.RuleLiveCheckFailed {
			subs[f.Subscription] = true
		}
	}
	return len(subs)
}

// lintFiles is the list of files to lint: names (the -c files, then the
// arguments) without the second and later naming of a file (a name that
// cleans to the same path, as x.yaml and ./x.yaml: a file named twice is
// linted once, its findings reported once; - for standard input is kept
// each time, read once and refused after), or brighter.yaml when names is
// empty. An empty argument is a usage error (exit 2).
func lintFiles(names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{cmdutil.DefaultConfigPath}, nil
	}
	var files []string
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" {
			return nil, cmdutil.UsageErr(errors.New(`an empty FILE argument: name a subscriptions file, or - for standard input`))
		}
		if n != "-" { // - twice stays an error: stdin is read once
			key := filepath.Clean(n)
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		files = append(files, n)
	}
	return files, nil
}

// fileOrder keeps findings sorted by position within a file but lists files
// in argument order (lint.Sort orders them by name).
func fileOrder(r lint.Report) []lint.Finding {
	out := make([]lint.Finding, 0, len(r.Findings))
	seen := map[string]bool{}
	for _, name := range r.Files {
		if seen[name] {
			continue
		}
		seen[name] = true
		for _, f := range r.Findings {
			if f.Pos.File == name {
				out = append(out, f)
			}
		}
	}
	for _, f := range r.Findings {
		if !seen[f.Pos.File] {
			out = append(out, f)
		}
	}
	return out
}

// read returns the content of name ("-" is standard input, readable once)
// and the name findings use for it.
func (o *Options) read(name string, stdinRead *bool) ([]byte, string, error) {
	if name == "-" {
		if *stdinRead {
			return nil, "", fmt.Errorf("- (standard input) given more than once")
		}
		*stdinRead = true
		data, err := io.ReadAll(o.io.In)
		if err != nil {
			return nil, "", fmt.Errorf("read standard input: %w", err)
		}
		return data, stdinName, nil
	}
	data, err := o.readFile(name)
	if err != nil {
		// os.ReadFile's error names the file already ("read adir: is a
		// directory", "open x.yaml: no such file or directory"): say "read
		// NAME: " once, with what the system said. A file that does not
		// exist names -c/--config too.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path == name {
			return nil, "", cmdutil.ConfigNotFound(fmt.Errorf("read %s: %w", name, pe.Err), name)
		}
		return nil, "", cmdutil.ConfigNotFound(fmt.Errorf("read %s: %w", name, err), name)
	}
	return data, name, nil
}

// runExplain prints the explanation of the rule --explain names, or of
// every rule of the requirement it names (R-4 has several), in listing
// order, a blank line apart.
func (o *Options) runExplain() error {
	rules := explained(o.explain)
	if len(rules) == 0 {
		ids := make([]string, 0, len(lint.Rules()))
		for _, r := range lint.Rules() {
			ids = append(ids, r.ID)
		}
		return cmdutil.UsageErr(fmt.Errorf("--explain %q: no such rule; valid ids are %s", redact.Quoted(o.explain), strings.Join(ids, ", ")))
	}
	for i, r := range rules {
		if i > 0 {
			fmt.Fprintln(o.io.Out)
		}
		title := r.ID
		if r.Requirement != "" {
			title += " (" + r.Requirement + ")"
		}
		fmt.Fprintf(o.io.Out, "%s: %s\nseverity: %s\n\n%s\n", title, r.Summary, r.Severity, r.Explanation)
	}
	return nil
}

// explained are the rules --explain idOrRequirement explains: the rule of
// that id, else every rule implementing that requirement (R-n, in any
// case), in listing order; none when nothing matches.
func explained(idOrRequirement string) []lint.Rule {
	var reqs []lint.Rule
	for _, r := range lint.Rules() {
		if r.ID == idOrRequirement {
			return []lint.Rule{r}
		}
		if r.Requirement != "" && strings.EqualFold(r.Requirement, idOrRequirement) {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// listedRule is one rule of --list-rules -o json.
type listedRule struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	// Requirement is the requirement the rule implements ("R-4"),
	// omitted for an operator rule with none.
	Requirement string `json:"requirement,omitempty"`
	Summary     string `json:"summary"`
}

// listRules prints every rule with its severity, requirement ("-" when
// none) and summary: aligned columns, or with -o json one JSON array of
// listedRule. Another -o is a usage error: a rule list is no report.
func (o *Options) listRules() error {
	format, err := lint.ParseFormat(o.format)
	if err != nil {
		return cmdutil.UsageErr(err)
	}
	switch string(format) {
	case export.Default:
	case export.JSON:
		rules := []listedRule{}
		for _, r := range lint.Rules() {
			rules = append(rules, listedRule{ID: r.ID, Severity: r.Severity.String(), Requirement: r.Requirement, Summary: r.Summary})
		}
		enc := json.NewEncoder(o.io.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rules); err != nil {
			return cmdutil.FailureErr(fmt.Errorf("write the rules: %w", err))
		}
		return nil
	default:
		return cmdutil.UsageErr(fmt.Errorf("--list-rules prints text or json, not --output %s", format))
	}
	// Columns as wide as their longest cell, two blanks apart.
	tw := tabwriter.NewWriter(o.io.Out, 0, 0, 2, ' ', 0)
	for _, r := range lint.Rules() {
		req := r.Requirement
		if req == "" {
			req = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, req, r.Summary)
	}
	if err := tw.Flush(); err != nil {
		return cmdutil.FailureErr(err)
	}
	return nil
}

// infraReaders returns the reader of every infrastructure format --infra
// reads.
func infraReaders() infra.Readers {
	r := infra.Readers{}
	for f, read := range terraform.Readers() {
		r[f] = read
	}
	r[infra.FormatCloudFormation] = cloudformation.Read
	r[infra.FormatKubernetes] = krm.Read
	return r
}
