package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"regexp/syntax"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/gcp"
	"github.com/brightergo/brighter/internal/broker/rocketmq"
	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// dlqOptions carries the flags every dlq subcommand shares and its
// dependencies.
type dlqOptions struct {
	io         *iostreams.IOStreams
	global     *factory.Factory
	transports transports
	now        func() time.Time
	// signals delivers SIGINT/SIGTERM; tests may replace it.
	signals func() (<-chan os.Signal, func())
	// exit ends the process on a second signal.
	exit func(int)

	configPath string
	// subscription is -s/--subscription: the destination, as the
	// positional argument names it.
	subscription string
	invalid      bool
	native       bool
	dlq          bool
	visibility   time.Duration
	wait         time.Duration
	output       string

	// connection settings for a destination named by URL
	region, endpoint, profile string
	sns                       bool
	rocketmqEndpoint          string

	// group is the RocketMQ consumer group a dlq command reads with.
	group string

	reasons []string
	topics  []string
	since   string
	until   string
	ids     []string
	grep    string
	limit   int
	// groupIDs is --group-id: failure group ids, as dlq stats shows them.
	groupIDs []string
}

// addCommon declares the flags every subcommand has.
func (o *dlqOptions) addCommon(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&o.configPath, "config", "c", "brighter.yaml", "subscriptions file (for a subscription name)")
	fl.StringVarP(&o.subscription, "subscription", "s", "", "the subscription whose dead letters to read (or give it, or a URL, as the argument)")
	_ = cmd.RegisterFlagCompletionFunc("subscription", cmdutil.SubscriptionNames(o.io))
	cmd.ValidArgsFunction = cmdutil.CompleteSubscriptionArg(o.io)
	fl.BoolVar(&o.dlq, "dlq", false, "read the subscription's deadLetterRoutingKey (the default)")
	fl.BoolVar(&o.invalid, "invalid", false, "read the subscription's invalidMessageRoutingKey")
	fl.BoolVar(&o.native, "native", false, "read the broker's own redrive target (SQS redrivePolicy.deadLetterQueue, Pub/Sub deadLetterPolicy's subscription, RocketMQ %DLQ%<consumerGroup>)")
	fl.DurationVar(&o.visibility, "visibility", 5*time.Minute, "how long each message read stays invisible while the scan runs")
	fl.DurationVar(&o.wait, "wait", time.Second, "how long one receive waits; an empty receive confirmed by a second (on SQS a short poll) ends the scan")
	fl.StringVar(&o.region, "region", "", "AWS region for sqs:// (default: the AWS environment)")
	fl.StringVar(&o.endpoint, "endpoint", "", "endpoint for a URL destination: SQS http://localhost:4566, Pub/Sub emulator localhost:8085")
	fl.StringVar(&o.profile, "profile", "", "AWS profile for sqs://")
	fl.StringVar(&o.rocketmqEndpoint, "rocketmq-endpoint", "", "RocketMQ proxy host:port for rocketmq:// (default: $ROCKETMQ_ENDPOINT)")
	fl.StringVar(&o.group, "group", "", "RocketMQ consumer group to read with (default: CONSUMERGROUP-dlq-reader, or the URL's ?group=, or brighter-dlq-reader)")
	fl.StringSliceVar(&o.reasons, "reason", nil, "only these rejection reasons: None, Unacceptable, DeliveryError, NativeRedrive (repeatable)")
	fl.StringSliceVar(&o.topics, "topic", nil, "only these original topics; globs allowed (repeatable)")
	fl.StringVar(&o.since, "since", "", "only messages rejected at or after this time (RFC 3339, or a duration ago: 2h)")
	fl.StringVar(&o.until, "until", "", "only messages rejected before this time (RFC 3339, or a duration ago)")
	fl.StringSliceVar(&o.ids, "id", nil, "only these message ids (repeatable)")
	fl.StringVar(&o.grep, "grep", "", "only messages whose rejection message matches this regular expression")
	fl.IntVar(&o.limit, "limit", 0, "select at most this many messages (0: all)")
	fl.StringSliceVar(&o.groupIDs, "group-id", nil, "only these failure groups, by the id dlq stats shows (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("group-id", o.completeGroupIDs)
	cmdutil.CompleteValues(cmd, dlqReasons, "reason")
	cmdutil.MarkExclusive(cmd, "dlq", "invalid", "native")
}

// destination returns the destination the command line names: the
// argument or -s/--subscription, exactly one of them.
func (o *dlqOptions) destination(cmd *cobra.Command, args []string) (string, error) {
	switch {
	case len(args) == 1 && cmd.Flags().Changed("subscription"):
		return "", cmdutil.UsageErr(fmt.Errorf("name the destination once: as the argument (%q) or with --subscription (%q), not both", redact.Quoted(args[0]), redact.Quoted(o.subscription)))
	case len(args) == 1:
		return args[0], nil
	}
	return o.subscription, nil
}

// runWith is a RunE that resolves the destination and calls run with it.
func (o *dlqOptions) runWith(run func(cmd *cobra.Command, dest string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		dest, err := o.destination(cmd, args)
		if err != nil {
			return err
		}
		return run(cmd, dest)
	}
}

// dlqReasons are the values of --reason.
var dlqReasons = []string{"None", "Unacceptable", "DeliveryError", inspect.ReasonNativeRedrive}

// addOutput declares peek's and stats' --output.
func (o *dlqOptions) addOutput(cmd *cobra.Command) {
	cmdutil.AddOutputFlag(cmd, &o.output, cmdutil.ScanFormats, "")
}

// filter builds the selection from the flags; errors are usage errors.
func (o *dlqOptions) filter() (inspect.Filter, error) {
	f := inspect.Filter{Reasons: o.reasons, Topics: o.topics, IDs: o.ids, Limit: o.limit, GroupIDs: o.groupIDs}
	var err error
	now := o.now()
	if f.Since, err = inspect.ParseTimeBound("since", o.since, now); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if f.Until, err = inspect.ParseTimeBound("until", o.until, now); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if o.grep != "" {
		if f.Grep, err = regexp.Compile(o.grep); err != nil {
			// regexp quotes the expression whole, in backquotes: say what is
			// wrong with the value cut at redact.MaxQuoted bytes instead.
			var se *syntax.Error
			if errors.As(err, &se) {
				return f, cmdutil.UsageErr(fmt.Errorf("--grep %q: %s: %q", redact.Quoted(o.grep), se.Code, redact.Quoted(se.Expr)))
			}
			return f, cmdutil.UsageErr(fmt.Errorf("--grep %q: %w", redact.Quoted(o.grep), err))
		}
	}
	if err := f.Validate(); err != nil {
		return f, cmdutil.UsageErr(err)
	}
	if err := cmdutil.PositiveDuration("visibility", o.visibility, "at most "+config.FormatDuration(config.MaxSQSVisibility)+" on SQS"); err != nil {
		return f, err
	}
	if err := cmdutil.PositiveDuration("wait", o.wait, "SQS long-polls at most "+config.FormatDuration(config.MaxSQSTimeOut)+" a receive"); err != nil {
		return f, err
	}
	return f, nil
}

// checkTarget refuses the flags the destination's transport cannot honour:
// on SQS a --visibility above its maximum visibility timeout (12h) or a
// --wait above its longest long poll (20s), which the consumer would
// otherwise cut down without a word.
func (o *dlqOptions) checkTarget(t *dlqTarget) error {
	if t.S.Transport != config.TransportSQS {
		return nil
	}
	if o.visibility > config.MaxSQSVisibility {
		return cmdutil.UsageErr(fmt.Errorf("--visibility %s: on SQS it must be more than 0s and at most %s (SQS's maximum visibility timeout)", config.FormatDuration(o.visibility), config.FormatDuration(config.MaxSQSVisibility)))
	}
	if o.wait > config.MaxSQSTimeOut {
		return cmdutil.UsageErr(fmt.Errorf("--wait %s: on SQS it must be more than 0s and at most %s (SQS's longest long poll)", config.FormatDuration(o.wait), config.FormatDuration(config.MaxSQSTimeOut)))
	}
	return nil
}

// plural is "1 message", "2 messages".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if len(noun) > 1 && noun[len(noun)-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])) {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// which names the destination flag in use.
func (o *dlqOptions) which() string {
	switch {
	case o.invalid:
		return "invalid"
	case o.native:
		return "native"
	}
	return "dlq"
}
