package shared

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// DestinationArgs is the positional-argument check of a dlq verb that takes
// the destination as its one optional argument (peek, stats, archive,
// purge, replay, triage): more is a usage error (exit 2) saying what the
// argument is.
var DestinationArgs = cmdutil.ArgsBetween(0, 1, DestinationArg)

// DestinationArg says what a dlq verb's destination argument is, for its
// argument-count errors.
const DestinationArg = "the destination, a SUBSCRIPTION name or a URL (or name it with -s/--subscription)"

// Options carries the flags every dlq verb shares and its dependencies;
// each verb's own Options embeds it.
type Options struct {
	// IO are the command's streams and environment.
	IO *iostreams.IOStreams
	// Factory is the root's factory: the logger the global flags ask for.
	Factory *factory.Factory
	// Transports is the transport registry the destination is read through.
	Transports transport.Registry
	// Now is the clock (--since and --until, ages, replayedAt).
	Now func() time.Time
	// Signals delivers SIGINT/SIGTERM and returns the function that stops
	// the delivery; tests replace it (factory.Factory.Signals).
	Signals func() (<-chan os.Signal, func())
	// Exit ends the process on a second signal, with the exit code.
	Exit func(int)
	// MergeWindow is how soon after the first signal another is the same
	// stop (timeout(1) signals the command and then its process group),
	// logged as merged rather than taken as a second signal; NewOptions
	// sets cmdutil.SignalMergeWindow, 0 takes every later signal as a
	// second.
	MergeWindow time.Duration
	// watch is the run's subscription to Signals (RunWith's start to its
	// end; nil outside a run).
	watch *signalWatch
	// ownSignals is set once OnSignals watches the run's signals: the
	// opens after it leave them to it.
	ownSignals atomic.Bool
	// receiving tracks the run's receives in flight (Source), for the
	// line the first signal logs (LogDLQAwaitingReceive).
	receiving receiving
	// stdout records a write to Out whose reader had gone (EPIPE).
	stdout stdoutWatch

	// Dest is the destination the command line names (the argument or
	// -s/--subscription), set by RunWith before the verb runs.
	Dest string

	// ConfigPath is -c/--config: the subscriptions file.
	ConfigPath string
	// Subscription is -s/--subscription: the destination, as the
	// positional argument names it.
	Subscription string
	// Invalid, Native and DLQ are --invalid, --native and --dlq: which of
	// a subscription's destinations is read (at most one; DLQ the default).
	Invalid bool
	Native  bool
	DLQ     bool
	// Visibility is --visibility: how long each message read stays
	// invisible while the scan runs.
	Visibility time.Duration
	// Wait is --wait: how long one receive waits.
	Wait time.Duration
	// Output is peek's and stats' -o/--output.
	Output string

	// Region, Endpoint and Profile are the connection settings of a
	// destination named by URL (--region, --endpoint, --profile).
	Region, Endpoint, Profile string
	// SNS is --sns: replays of an sqs:// URL go to SNS topics.
	SNS bool
	// RocketMQEndpoint is --rocketmq-endpoint: the proxy of a rocketmq:// URL.
	RocketMQEndpoint string

	// Group is the RocketMQ consumer group a dlq command reads with.
	Group string

	// Reasons, Topics, Since, Until, IDs, Grep and Limit are the filter
	// flags (--reason, --topic, --since, --until, --id, --grep, --limit).
	Reasons []string
	Topics  []string
	Since   string
	Until   string
	IDs     []string
	Grep    string
	Limit   int
	// GroupIDs is --group-id: failure group ids, as dlq stats shows them.
	GroupIDs []string
}

// NewOptions returns the shared options of a dlq verb built from f: its
// streams, the transport registry, the clock, and the process's signals
// and exit unless f replaces them.
func NewOptions(f *factory.Factory) *Options {
	o := &Options{IO: f.IOStreams, Factory: f, Transports: f.Transports(), Now: time.Now, Exit: os.Exit, MergeWindow: cmdutil.SignalMergeWindow, Signals: func() (<-chan os.Signal, func()) {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, cmdutil.StopSignals()...)
		return ch, func() { signal.Stop(ch) }
	}}
	if f.Signals != nil {
		o.Signals = f.Signals
	}
	if f.Exit != nil {
		o.Exit = f.Exit
	}
	return o
}

// AddCommon declares the flags every dlq verb has.
func (o *Options) AddCommon(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&o.ConfigPath, "config", "c", "brighter.yaml", "subscriptions file (for a subscription name)")
	fl.StringVarP(&o.Subscription, "subscription", "s", "", "the subscription whose dead letters to read (or give it, or a URL, as the argument)")
	_ = cmd.RegisterFlagCompletionFunc("subscription", cmdutil.SubscriptionNames(o.IO))
	cmd.ValidArgsFunction = cmdutil.CompleteSubscriptionArg(o.IO)
	fl.BoolVar(&o.DLQ, "dlq", false, "read the subscription's deadLetterRoutingKey (the default)")
	fl.BoolVar(&o.Invalid, "invalid", false, "read the subscription's invalidMessageRoutingKey")
	fl.BoolVar(&o.Native, "native", false, "read the broker's own redrive target (SQS redrivePolicy.deadLetterQueue, Pub/Sub deadLetterPolicy's subscription, RocketMQ %DLQ%<consumerGroup>)")
	fl.DurationVar(&o.Visibility, "visibility", 5*time.Minute, "how long each message read stays invisible while the scan runs")
	fl.DurationVar(&o.Wait, "wait", time.Second, "how long one receive waits; an empty receive confirmed by a second (on SQS a short poll) ends the scan")
	fl.StringVar(&o.Region, "region", "", "AWS region for sqs:// (default: the AWS environment)")
	fl.StringVar(&o.Endpoint, "endpoint", "", "endpoint for a URL destination: SQS http://localhost:4566, Pub/Sub emulator localhost:8085")
	fl.StringVar(&o.Profile, "profile", "", "AWS profile for sqs://")
	fl.StringVar(&o.RocketMQEndpoint, "rocketmq-endpoint", "", "RocketMQ proxy host:port for rocketmq:// (default: $ROCKETMQ_ENDPOINT)")
	fl.StringVar(&o.Group, "group", "", "RocketMQ consumer group to read with (default: CONSUMERGROUP-dlq-reader, or the URL's ?group=, or brighter-dlq-reader)")
	fl.StringSliceVar(&o.Reasons, "reason", nil, "only these rejection reasons: None, Unacceptable, DeliveryError, NativeRedrive (repeatable)")
	fl.StringSliceVar(&o.Topics, "topic", nil, "only these original topics; globs allowed (repeatable)")
	fl.StringVar(&o.Since, "since", "", "only messages rejected at or after this time (RFC 3339, or a duration ago: 2h)")
	fl.StringVar(&o.Until, "until", "", "only messages rejected before this time (RFC 3339, or a duration ago)")
	fl.StringSliceVar(&o.IDs, "id", nil, "only these message ids (repeatable)")
	fl.StringVar(&o.Grep, "grep", "", "only messages whose rejection message matches this regular expression")
	fl.IntVar(&o.Limit, "limit", 0, "select at most this many messages (0: all)")
	fl.StringSliceVar(&o.GroupIDs, "group-id", nil, "only these failure groups, by the id dlq stats shows (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("group-id", o.completeGroupIDs)
	cmdutil.CompleteValues(cmd, dlqReasons, "reason")
	cmdutil.MarkExclusive(cmd, "dlq", "invalid", "native")
}

// Destination returns the destination the command line names: the
// argument or -s/--subscription, exactly one of them.
func (o *Options) Destination(cmd *cobra.Command, args []string) (string, error) {
	switch {
	case len(args) == 1 && cmd.Flags().Changed("subscription"):
		return "", cmdutil.UsageErr(fmt.Errorf("name the destination once: as the argument (%q) or with --subscription (%q), not both", redact.Quoted(args[0]), redact.Quoted(o.Subscription)))
	case len(args) == 1:
		return args[0], nil
	}
	return o.Subscription, nil
}

// RunWith is a RunE that resolves the destination into o.Dest and calls run.
func (o *Options) RunWith(run func(cmd *cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		dest, err := o.Destination(cmd, args)
		if err != nil {
			return err
		}
		o.Dest = dest
		// One subscription for the whole run: a signal while connecting
		// is handled as one while scanning is, and none is lost between.
		defer o.HoldSignals()()
		return o.EndRun(run(cmd))
	}
}

// dlqReasons are the values of --reason.
var dlqReasons = []string{"None", "Unacceptable", "DeliveryError", inspect.ReasonNativeRedrive}

// AddOutput declares peek's and stats' --output.
func (o *Options) AddOutput(cmd *cobra.Command) {
	cmdutil.AddOutputFlag(cmd, &o.Output, cmdutil.ScanFormats, "")
}

// Filter builds the selection from the flags; errors are usage errors.
func (o *Options) Filter() (inspect.Filter, error) {
	f := inspect.Filter{Reasons: o.Reasons, Topics: o.Topics, IDs: o.IDs, Limit: o.Limit, GroupIDs: o.GroupIDs}
	var err error
	now := o.Now()
	if f.Since, err = inspect.ParseTimeBound("since", o.Since, now); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if f.Until, err = inspect.ParseTimeBound("until", o.Until, now); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if o.Grep != "" {
		if f.Grep, err = regexp.Compile(o.Grep); err != nil {
			// regexp quotes the expression whole, in backquotes: say what is
			// wrong with the value cut at redact.MaxQuoted bytes instead.
			var se *syntax.Error
			if errors.As(err, &se) {
				return f, cmdutil.UsageErr(fmt.Errorf("--grep %q: %s: %q", redact.Quoted(o.Grep), se.Code, redact.Quoted(se.Expr)))
			}
			return f, cmdutil.UsageErr(fmt.Errorf("--grep %q: %w", redact.Quoted(o.Grep), err))
		}
	}
	if err := f.Validate(); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if err := cmdutil.PositiveDuration("visibility", o.Visibility, "at most "+config.FormatDuration(config.MaxSQSVisibility)+" on SQS"); err != nil {
		return f, err
	}
	if err := cmdutil.PositiveDuration("wait", o.Wait, "SQS long-polls at most "+config.FormatDuration(config.MaxSQSTimeOut)+" a receive"); err != nil {
		return f, err
	}
	return f, nil
}

// checkTarget refuses the flags the destination's transport cannot honour:
// on SQS a --visibility above its maximum visibility timeout (12h) or a
// --wait above its longest long poll (20s), which the consumer would
// otherwise cut down without a word.
func (o *Options) checkTarget(t *transport.Target) error {
	if t.S.Transport != config.TransportSQS {
		return nil
	}
	if o.Visibility > config.MaxSQSVisibility {
		return cmdutil.UsageErr(fmt.Errorf("--visibility %s: on SQS it must be more than 0s and at most %s (SQS's maximum visibility timeout)", config.FormatDuration(o.Visibility), config.FormatDuration(config.MaxSQSVisibility)))
	}
	if o.Wait > config.MaxSQSTimeOut {
		return cmdutil.UsageErr(fmt.Errorf("--wait %s: on SQS it must be more than 0s and at most %s (SQS's longest long poll)", config.FormatDuration(o.Wait), config.FormatDuration(config.MaxSQSTimeOut)))
	}
	return nil
}

// Plural is "1 message", "2 messages".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if len(noun) > 1 && noun[len(noun)-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])) {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// which names the destination flag in use.
func (o *Options) which() string {
	switch {
	case o.Invalid:
		return "invalid"
	case o.Native:
		return "native"
	}
	return "dlq"
}
