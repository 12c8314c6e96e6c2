package dlq

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

// NewCmdDLQ returns the dlq command with its subcommands, all on one set
// of options built from f.
func NewCmdDLQ(f *factory.Factory) *cobra.Command {
	o := &dlqOptions{io: f.IOStreams, global: f, transports: f.Transports(), now: time.Now, exit: os.Exit, signals: func() (<-chan os.Signal, func()) {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		return ch, func() { signal.Stop(ch) }
	}}
	return newDLQCmdWith(o)
}

// newDLQCmdWith builds the dlq command over o (tests replace its signals
// and exit).
func newDLQCmdWith(o *dlqOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect, summarise and replay dead-lettered messages",
		Long: `Inspect the messages a subscription's consumers dead-lettered, find out why,
and put a chosen set back where they came from.

A destination is a subscription of the subscriptions file (its
deadLetterRoutingKey by default, --invalid for invalidMessageRoutingKey,
--native for the broker's own redrive target) or a URL:

  sqs://QUEUE                       an SQS queue (FIFO when it ends in .fifo);
                                    connection from --region, --endpoint,
                                    --profile and the AWS environment
  pubsub://projects/P/subscriptions/S
                                    a Pub/Sub subscription; an emulator from
                                    --endpoint or PUBSUB_EMULATOR_HOST, else
                                    the service with Application Default
                                    Credentials; replays go to topics of P
  rocketmq://TOPIC?group=G          a RocketMQ topic (a rejection topic or
                                    %DLQ%<group>) read by consumer group G
                                    (default brighter-dlq-reader); proxy from
                                    --rocketmq-endpoint or ROCKETMQ_ENDPOINT
                                    (ROCKETMQ_NAMESPACE, ROCKETMQ_ACCESS_KEY,
                                    ROCKETMQ_SECRET_KEY)
  memory://QUEUE?file=out.jsonl     a queue inside a memory.output file

Messages are read through the transport's ordinary consumer, so the count
shown is the one the rejecting consumer stamped. peek and stats
remove nothing: each message read is held invisible for --visibility while
the scan runs and made visible again when it ends.

RocketMQ keeps a topic's messages for every consumer group, so dlq reads
with a consumer group of its own: --group, by default the subscription's
consumerGroup followed by "-dlq-reader" (or brighter-dlq-reader for a URL),
never the subscription's own group. "Removed" means acknowledged for that
group; each peek is one delivery for it, so give the group a high retry
maximum on a real broker.

SQS FIFO: a message group's later messages are held back by SQS while its
earlier ones are in flight, and a peek holds everything it read, so peek
and stats show at most the first batch (up to 10) of each message group.
replay removes as it goes and reaches every message.

Ctrl-C (SIGINT) or SIGTERM stops a scan: the receive under way finishes
(at most --wait), a replay finishes the publishes and removes it has begun,
every message the scan holds is made visible again at once, what was read
is printed with the summary, and the command exits 130. A second signal
exits 130 at once, leaving held messages invisible until --visibility lapses.

On the memory transport the dead letters live in the subscription's
memory.output file (JSON lines, every queue of the run): peek and stats read
the queue named by deadLetterRoutingKey inside it, and replay rewrites the
file, moving the replayed messages to their destination queue.`,
	}
	cmd.AddCommand(newDLQPeekCmd(o), newDLQStatsCmd(o), newDLQReplayCmd(o))
	cmd.AddCommand(newDLQArchiveCmd(o), newDLQPurgeCmd(o), newDLQRestoreCmd(o), newDLQEditCmd(o), newDLQTriageCmd(o))
	return cmd
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

// exitInterrupted is the exit code of a dlq command stopped by SIGINT or
// SIGTERM (128 + SIGINT, as shells report it).
const exitInterrupted = 130

// Stable log texts of the dlq commands' signal handling.
const (
	logDLQStopping    = "signal received; stopping the scan and releasing what it holds (send it again to exit at once)"
	logDLQHeldUnknown = transport.LogHeldUnknown
	logDLQForced      = "second signal; exiting at once, held messages stay invisible until their visibility timeout lapses"
)

// interruptible returns a context that ends on the first SIGINT/SIGTERM;
// a second signal exits the process with exitInterrupted at once. stop ends
// the watch.
func (o *dlqOptions) interruptible(ctx context.Context, logger *slog.Logger) (context.Context, func()) {
	ictx, cancel := context.WithCancel(ctx)
	if o.signals == nil {
		return ictx, cancel
	}
	sigs, unsubscribe := o.signals()
	finished := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		logger.Warn(logDLQStopping)
		cancel()
		select {
		case <-sigs:
			logger.Warn(logDLQForced)
			if o.exit != nil {
				o.exit(exitInterrupted)
			}
		case <-finished:
		}
	}()
	return ictx, func() {
		close(finished)
		unsubscribe()
		cancel()
	}
}

// interrupted is the error of a run stopped by a signal: exit code 130.
func interrupted(what string) error {
	return &cmdutil.ExitError{Code: exitInterrupted, Err: fmt.Errorf("%s: interrupted; every message read was made visible again", what)}
}

// resolve turns the argument (a subscription name or a URL) into a target.
func (o *dlqOptions) resolve(arg string) (*dlqTarget, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, cmdutil.UsageErr(errors.New("a subscription name or URL is required (SUBSCRIPTION, or sqs://QUEUE, pubsub://projects/P/subscriptions/S, rocketmq://TOPIC, memory://QUEUE?file=F)"))
	}
	if strings.Contains(arg, "://") {
		return o.resolveURL(arg)
	}
	if o.sns {
		return nil, cmdutil.UsageErr(fmt.Errorf("--sns applies only to an sqs:// URL; subscription %s publishes replays as its channelType says", redact.Cut(arg)))
	}
	f, err := cmdutil.LoadConfig(o.io, o.configPath)
	if err != nil {
		return nil, err
	}
	s := f.Subscription(arg)
	if s == nil {
		if len(f.Subscriptions) == 0 {
			return nil, cmdutil.UsageErr(fmt.Errorf("no subscription %q in %s (it has none)", redact.Quoted(arg), redact.Cut(f.Path)))
		}
		known := make([]string, 0, len(f.Subscriptions))
		for _, s := range f.Subscriptions {
			known = append(known, s.Name)
		}
		return nil, cmdutil.UsageErr(fmt.Errorf("no subscription %q in %s (known: %s)", redact.Quoted(arg), redact.Cut(f.Path), strings.Join(known, ", ")))
	}
	t := &dlqTarget{F: f, S: s}
	switch o.which() {
	case "invalid":
		t.Dest = s.InvalidMessageRoutingKey
		if t.Dest == "" {
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no invalidMessageRoutingKey: its unacceptable messages go to its dead-letter queue (use --dlq)", s.Pos("invalidMessageRoutingKey"), s.Name))
		}
	case "native":
		switch {
		case s.SQS != nil && s.SQS.RedrivePolicy != nil:
			t.Dest = s.SQS.RedrivePolicy.DeadLetterQueue
		case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
			// gcp.DeadLetterPolicy: "" means "dlq-<subscription>".
			t.Dest = transport.GCPNativeSubscription(s)
		case s.RocketMQ != nil:
			t.Dest = rocketmq.DLQTopic(s.RocketMQ.ConsumerGroup)
		default:
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no native redrive target (sqs.redrivePolicy, gcp.deadLetterPolicy)", s.Pos("transport"), s.Name))
		}
	default:
		t.Dest = s.DeadLetterRoutingKey
		if t.Dest == "" {
			return nil, cmdutil.UsageErr(fmt.Errorf("%s: subscription %s has no deadLetterRoutingKey: its rejected messages are discarded, not dead-lettered (try --native)", s.Pos("deadLetterRoutingKey"), s.Name))
		}
	}
	t.URL = string(s.Transport) + "://" + t.Dest
	switch s.Transport {
	case config.TransportGCP:
		t.URL = gcp.URLScheme{}.Format(broker.Address{Project: transport.GCPProject(t), Kind: broker.AddressSubscription, Name: t.Dest})
	case config.TransportRocketMQ:
		t.Group = o.group
		if t.Group == "" {
			t.Group = s.RocketMQ.ConsumerGroup + readerGroupSuffix
		}
		if t.Group == s.RocketMQ.ConsumerGroup {
			return nil, cmdutil.UsageErr(fmt.Errorf("--group %s: that is the subscription's own consumer group; dlq reads with a group of its own so it never takes messages from the consumers", redact.Cut(t.Group)))
		}
		t.URL = rocketmq.URLScheme{}.Format(broker.Address{Kind: broker.AddressTopic, Name: t.Dest, Params: url.Values{"group": {t.Group}}})
	}
	return t, nil
}

// readerGroupSuffix makes the default RocketMQ reader group of a
// subscription: CONSUMERGROUP-dlq-reader.
const readerGroupSuffix = "-dlq-reader"

// defaultURLReaderGroup is the RocketMQ reader group of a rocketmq:// URL
// without ?group= and without --group.
const defaultURLReaderGroup = transport.DefaultURLReaderGroup

// env reads an environment variable through the command's IO streams.
func (o *dlqOptions) env(name string) string {
	if o.io.Getenv == nil {
		return ""
	}
	v, _ := o.io.Getenv(name)
	return v
}

// dlqSchemeOrder is the order in which usage errors list the URL schemes.
var dlqSchemeOrder = []config.Transport{config.TransportSQS, config.TransportGCP, config.TransportRocketMQ, config.TransportMemory}

// scheme returns the dlq support of the transport whose URL scheme is
// name (nil when none has it), and the names of every scheme the command's
// transports have, for a usage error.
func (o *dlqOptions) scheme(name string) (dlqTransport, []string) {
	var names []string
	var found dlqTransport
	for _, t := range dlqSchemeOrder {
		dt, ok := o.transports[t]
		if !ok {
			continue
		}
		n := dt.Addresses().Forms().Scheme
		names = append(names, n)
		if n == name {
			found = dt
		}
	}
	return found, names
}

// resolveURL synthesises a subscription for a destination named by URL,
// parsed by its transport's own scheme; the transport makes the target.
func (o *dlqOptions) resolveURL(arg string) (*dlqTarget, error) {
	scheme, _, _ := strings.Cut(arg, "://")
	dt, names := o.scheme(scheme)
	if dt == nil {
		return nil, cmdutil.UsageErr(fmt.Errorf("destination %q: unknown scheme %q: valid schemes are %s", redact.Quoted(arg), redact.Quoted(scheme), strings.Join(names, ", ")))
	}
	as := dt.Addresses()
	a, err := as.Parse(arg)
	t, err := dt.URLTarget(o.urlOptions(), arg, as, a, err)
	return t, cmdutil.ExitCoded(err)
}

// dlqSetup is what every dlq command builds before it reads or publishes:
// the logger the global flags ask for, the selection from the filter flags,
// and the destination resolved with its transport's dlq support.
type dlqSetup struct {
	logger *slog.Logger
	f      inspect.Filter
	t      *dlqTarget
	dt     dlqTransport
}

// setup builds the logger and the filter, runs checks (the command's own
// flag checks, in order; each returns a usage error), then resolves arg
// into a target; it reads nothing. The first error is returned as is.
func (o *dlqOptions) setup(arg string, checks ...func() error) (*dlqSetup, error) {
	logger, err := o.global.Logger()
	if err != nil {
		return nil, err
	}
	f, err := o.filter()
	if err != nil {
		return nil, err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	t, dt, err := o.target(arg)
	if err != nil {
		return nil, err
	}
	return &dlqSetup{logger: logger, f: f, t: t, dt: dt}, nil
}

// target resolves the argument, checks the flags against its transport and
// returns the transport's dlq support; it reads nothing.
func (o *dlqOptions) target(arg string) (*dlqTarget, dlqTransport, error) {
	t, err := o.resolve(arg)
	if err != nil {
		return nil, nil, err
	}
	if err := o.checkTarget(t); err != nil {
		return nil, nil, err
	}
	factory, err := o.transports.Get(t.S)
	if err != nil {
		return nil, nil, cmdutil.ExitCoded(err)
	}
	return t, factory, nil
}

// openReader opens the transport's reader over t.
func (o *dlqOptions) openReader(ctx context.Context, t *dlqTarget, dt dlqTransport, rewrite bool, logger *slog.Logger) (*openedChannel, error) {
	ch, err := dt.DLQReader(ctx, t, dlqReadOptions{Visibility: o.visibility, Wait: o.wait, Rewrite: rewrite}, logger)
	if err != nil {
		if _, ok := cmdutil.AsExitError(err); ok {
			return nil, cmdutil.ExitCoded(err)
		}
		return nil, cmdutil.FailureErr(fmt.Errorf("%s: open: %w", t.URL, err))
	}
	return ch, nil
}

// noteHeld says on w, after a scan of t, how many messages another reader
// held invisible when the scan began (openedChannel.held): the scan could
// not see them, so an empty or short result is not the whole destination.
// It says nothing when none were held or the transport cannot
// tell.
func noteHeld(w io.Writer, t *dlqTarget, ch *openedChannel) {
	if s := heldNote(ch.Held); s != "" {
		fmt.Fprintf(w, "%s: %s\n", t.URL, s)
	}
}

// heldNote is noteHeld's text for held messages, "" for none.
func heldNote(held int64) string {
	if held <= 0 {
		return ""
	}
	return plural(int(held), "more message") + " held invisible by another reader when this one began (a killed replay or archive, a running scan, or a consumer): not read; they come back when their visibility timeout lapses"
}

func (o *dlqOptions) source(t *dlqTarget, ch *openedChannel, logger *slog.Logger) *inspect.Source {
	return &inspect.Source{Consumer: ch.Consumer, Name: t.URL, Wait: o.wait, ShortPoll: ch.ShortPoll, Logger: logger}
}

func (o *dlqOptions) checkOutput() error { return cmdutil.ParseOutput(cmdutil.ScanFormats, &o.output) }

// newScanCmd completes cmd, a dlq command that scans a destination and
// removes nothing (peek, stats): it takes the destination as at most one
// argument, has the common flags and --output, and runs scan over the
// destination opened for reading, closing it afterwards.
func (o *dlqOptions) newScanCmd(cmd *cobra.Command, scan func(rs *readScan) error) *cobra.Command {
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.RunE = o.runWith(func(cmd *cobra.Command, dest string) error {
		rs, err := o.openReadScan(cmd.Context(), dest)
		if err != nil {
			return err
		}
		defer rs.done()
		return scan(rs)
	})
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

// readScan is what peek and stats share before their scan: the checked
// --output, the filter, the destination opened for reading and its
// source, a context that the first SIGINT or SIGTERM cancels, and stderr
// for the summary. done closes the channel and stops listening for
// signals.
type readScan struct {
	f      inspect.Filter
	t      *dlqTarget
	ch     *openedChannel
	source *inspect.Source
	ctx    context.Context
	done   func()
	errOut io.Writer
}

// summarise prints the scan's summary line on stderr: the destination's
// URL, ": ", then format with args.
func (rs *readScan) summarise(format string, args ...any) {
	fmt.Fprintf(rs.errOut, "%s: %s\n", rs.t.URL, fmt.Sprintf(format, args...))
}

func (o *dlqOptions) openReadScan(ctx context.Context, arg string) (*readScan, error) {
	su, err := o.setup(arg, o.checkOutput)
	if err != nil {
		return nil, err
	}
	f, t, logger := su.f, su.t, su.logger
	ch, err := o.openReader(ctx, t, su.dt, false, logger)
	if err != nil {
		return nil, err
	}
	sctx, stop := o.interruptible(ctx, logger)
	return &readScan{f: f, t: t, ch: ch, source: o.source(t, ch, logger), ctx: sctx, errOut: o.io.ErrOut, done: func() {
		stop()
		ch.Close(context.WithoutCancel(ctx))
	}}, nil
}
