package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/inspect"
)

// dlqOptions carries the flags every dlq subcommand shares and its
// dependencies.
type dlqOptions struct {
	io         *IOStreams
	global     *globalOptions
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
}

func newDLQCmd(io *IOStreams, g *globalOptions) *cobra.Command {
	o := &dlqOptions{io: io, global: g, transports: defaultTransports(), now: time.Now, exit: os.Exit, signals: func() (<-chan os.Signal, func()) {
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
	return cmd
}

// addCommon declares the flags every subcommand has.
func (o *dlqOptions) addCommon(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&o.configPath, "config", "c", "brighter.yaml", "subscriptions file (for a subscription name)")
	fl.StringVarP(&o.subscription, "subscription", "s", "", "the subscription whose dead letters to read (or give it, or a URL, as the argument)")
	_ = cmd.RegisterFlagCompletionFunc("subscription", subscriptionNames(o.io))
	cmd.ValidArgsFunction = completeSubscriptionArg(o.io)
	fl.BoolVar(&o.dlq, "dlq", false, "read the subscription's deadLetterRoutingKey (the default)")
	fl.BoolVar(&o.invalid, "invalid", false, "read the subscription's invalidMessageRoutingKey")
	fl.BoolVar(&o.native, "native", false, "read the broker's own redrive target (SQS redrivePolicy.deadLetterQueue, Pub/Sub deadLetterPolicy's subscription, RocketMQ %DLQ%<consumerGroup>)")
	fl.DurationVar(&o.visibility, "visibility", 5*time.Minute, "how long each message read stays invisible while the scan runs")
	fl.DurationVar(&o.wait, "wait", time.Second, "how long one receive waits; two empty receives in a row end the scan")
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
	completeValues(cmd, dlqReasons, "reason")
	cmd.MarkFlagsMutuallyExclusive("dlq", "invalid", "native")
}

// destination returns the destination the command line names: the
// argument or -s/--subscription, exactly one of them.
func (o *dlqOptions) destination(cmd *cobra.Command, args []string) (string, error) {
	switch {
	case len(args) == 1 && cmd.Flags().Changed("subscription"):
		return "", usageErr(fmt.Errorf("name the destination once: as the argument (%q) or with --subscription (%q), not both", args[0], o.subscription))
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

// dlqOutputs are the values of dlq peek and stats --output.
var dlqOutputs = []string{"table", "json"}

// addOutput declares peek's and stats' --output.
func (o *dlqOptions) addOutput(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: "+strings.Join(dlqOutputs, ", "))
	completeValues(cmd, dlqOutputs, "output")
}

// filter builds the selection from the flags; errors are usage errors.
func (o *dlqOptions) filter() (inspect.Filter, error) {
	f := inspect.Filter{Reasons: o.reasons, Topics: o.topics, IDs: o.ids, Limit: o.limit}
	var err error
	now := o.now()
	if f.Since, err = inspect.ParseTimeBound("since", o.since, now); err != nil {
		return f, usageErr(err)
	}
	if f.Until, err = inspect.ParseTimeBound("until", o.until, now); err != nil {
		return f, usageErr(err)
	}
	if o.grep != "" {
		if f.Grep, err = regexp.Compile(o.grep); err != nil {
			return f, usageErr(fmt.Errorf("--grep: %w", err))
		}
	}
	if err := f.Validate(); err != nil {
		return f, usageErr(err)
	}
	if o.visibility <= 0 {
		return f, usageErr(fmt.Errorf("--visibility %s: must be more than 0s (at most %s on SQS)", o.visibility, config.FormatDuration(config.MaxSQSVisibility)))
	}
	if o.wait <= 0 {
		return f, usageErr(fmt.Errorf("--wait %s: must be more than 0s (SQS long-polls at most %s a receive)", o.wait, config.FormatDuration(config.MaxSQSTimeOut)))
	}
	return f, nil
}

// checkTarget refuses the flags the destination's transport cannot honour:
// on SQS a --visibility above its maximum visibility timeout (12h), which
// the consumer would otherwise cut down without a word.
func (o *dlqOptions) checkTarget(t *dlqTarget) error {
	if t.s.Transport == config.TransportSQS && o.visibility > config.MaxSQSVisibility {
		return usageErr(fmt.Errorf("--visibility %s: on SQS it must be more than 0s and at most %s (SQS's maximum visibility timeout)", config.FormatDuration(o.visibility), config.FormatDuration(config.MaxSQSVisibility)))
	}
	return nil
}

// plural is "1 message", "2 messages".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
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
	logDLQStopping = "signal received; stopping the scan and releasing what it holds (send it again to exit at once)"
	logDLQForced   = "second signal; exiting at once, held messages stay invisible until their visibility timeout lapses"
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
	return &exitError{code: exitInterrupted, err: fmt.Errorf("%s: interrupted; every message read was made visible again", what)}
}

// resolve turns the argument (a subscription name or a URL) into a target.
func (o *dlqOptions) resolve(arg string) (*dlqTarget, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, usageErr(errors.New("a subscription name or URL is required (SUBSCRIPTION, or sqs://QUEUE, pubsub://projects/P/subscriptions/S, rocketmq://TOPIC, memory://QUEUE?file=F)"))
	}
	if strings.Contains(arg, "://") {
		return o.resolveURL(arg)
	}
	if o.sns {
		return nil, usageErr(fmt.Errorf("--sns applies only to an sqs:// URL; subscription %s publishes replays as its channelType says", arg))
	}
	f, err := loadConfig(o.io, o.configPath)
	if err != nil {
		return nil, err
	}
	s := f.Subscription(arg)
	if s == nil {
		if len(f.Subscriptions) == 0 {
			return nil, usageErr(fmt.Errorf("no subscription %q in %s (it has none)", arg, f.Path))
		}
		known := make([]string, 0, len(f.Subscriptions))
		for _, s := range f.Subscriptions {
			known = append(known, s.Name)
		}
		return nil, usageErr(fmt.Errorf("no subscription %q in %s (known: %s)", arg, f.Path, strings.Join(known, ", ")))
	}
	t := &dlqTarget{f: f, s: s}
	switch o.which() {
	case "invalid":
		t.dest = s.InvalidMessageRoutingKey
		if t.dest == "" {
			return nil, usageErr(fmt.Errorf("%s: subscription %s has no invalidMessageRoutingKey: its unacceptable messages go to its dead-letter queue (use --dlq)", s.Pos("invalidMessageRoutingKey"), s.Name))
		}
	case "native":
		switch {
		case s.SQS != nil && s.SQS.RedrivePolicy != nil:
			t.dest = s.SQS.RedrivePolicy.DeadLetterQueue
		case s.GCP != nil && s.GCP.DeadLetterPolicy != nil:
			// gcp.DeadLetterPolicy: "" means "dlq-<subscription>".
			t.dest = gcpNativeSubscription(s)
		case s.RocketMQ != nil:
			t.dest = "%DLQ%" + s.RocketMQ.ConsumerGroup
		default:
			return nil, usageErr(fmt.Errorf("%s: subscription %s has no native redrive target (sqs.redrivePolicy, gcp.deadLetterPolicy)", s.Pos("transport"), s.Name))
		}
	default:
		t.dest = s.DeadLetterRoutingKey
		if t.dest == "" {
			return nil, usageErr(fmt.Errorf("%s: subscription %s has no deadLetterRoutingKey: its rejected messages are discarded, not dead-lettered (try --native)", s.Pos("deadLetterRoutingKey"), s.Name))
		}
	}
	t.url = string(s.Transport) + "://" + t.dest
	switch s.Transport {
	case config.TransportGCP:
		t.url = "pubsub://" + gcpSubscriptionPath(f, s, t.dest)
	case config.TransportRocketMQ:
		t.group = o.group
		if t.group == "" {
			t.group = s.RocketMQ.ConsumerGroup + readerGroupSuffix
		}
		if t.group == s.RocketMQ.ConsumerGroup {
			return nil, usageErr(fmt.Errorf("--group %s: that is the subscription's own consumer group; dlq reads with a group of its own so it never takes messages from the consumers", t.group))
		}
		t.url = "rocketmq://" + t.dest + "?group=" + url.QueryEscape(t.group)
	}
	return t, nil
}

// readerGroupSuffix makes the default RocketMQ reader group of a
// subscription: CONSUMERGROUP-dlq-reader.
const readerGroupSuffix = "-dlq-reader"

// defaultURLReaderGroup is the RocketMQ reader group of a rocketmq:// URL
// without ?group= and without --group.
const defaultURLReaderGroup = "brighter-dlq-reader"

// gcpSubscriptionPath is projects/P/subscriptions/S for a subscription id
// of the subscription's project.
func gcpSubscriptionPath(f *config.File, s *config.Subscription, sub string) string {
	if strings.HasPrefix(sub, "projects/") {
		return sub
	}
	project := f.Connections.GCP.ProjectID
	if s.GCP != nil && s.GCP.ProjectID != "" {
		project = s.GCP.ProjectID
	}
	return "projects/" + project + "/subscriptions/" + sub
}

// env reads an environment variable through the command's IO streams.
func (o *dlqOptions) env(name string) string {
	if o.io.Getenv == nil {
		return ""
	}
	v, _ := o.io.Getenv(name)
	return v
}

// resolveURL synthesises a subscription for a destination named by URL.
func (o *dlqOptions) resolveURL(arg string) (*dlqTarget, error) {
	scheme, _, _ := strings.Cut(arg, "://")
	switch scheme {
	case "rocketmq":
		return o.resolveRocketMQURL(arg)
	case "pubsub":
		return o.resolvePubSubURL(arg)
	case "sqs", "memory":
	default:
		return nil, usageErr(fmt.Errorf("destination %q: unknown scheme %q: valid schemes are sqs, pubsub, rocketmq, memory", arg, scheme))
	}
	f := &config.File{Path: "(command line)"}
	s := &config.Subscription{MakeChannels: config.MakeChannelsValidate}
	var name string
	if scheme == "sqs" {
		var err error
		if name, err = parseSQSURL(arg); err != nil {
			return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
		}
		f.Connections.AWS = config.AWSConnection{Region: o.region, Endpoint: o.endpoint, Profile: o.profile}
		s.Transport = config.TransportSQS
		s.SQS = &config.SQS{ChannelType: config.ChannelPointToPoint, QueueType: config.QueueStandard, RawMessageDelivery: true}
		if strings.HasSuffix(name, ".fifo") {
			s.SQS.QueueType = config.QueueFIFO
		}
		if o.sns {
			s.SQS.ChannelType = config.ChannelPubSub
		}
	} else {
		queue, file, err := parseMemoryURL(arg)
		if err != nil {
			return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
		}
		if file == "" {
			return nil, usageErr(fmt.Errorf("destination %q: a memory destination needs ?file=PATH (a memory.output file)", arg))
		}
		name = queue
		s.Transport = config.TransportMemory
		s.Memory = &config.Memory{Output: file}
	}
	s.Name, s.ChannelName, s.RoutingKey = name, name, name
	return &dlqTarget{f: f, s: s, dest: name, url: scheme + "://" + name}, nil
}

// parseSQSURL returns the queue named by sqs://QUEUE. Anything an SQS queue
// name cannot carry (a query, a fragment, credentials, a path) is refused
// rather than ignored.
func parseSQSURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "sqs" {
		return "", fmt.Errorf("want sqs://QUEUE")
	}
	if u.RawQuery != "" || u.ForceQuery {
		return "", fmt.Errorf("an sqs:// URL takes no query (?%s): want sqs://QUEUE; connection settings are flags (--region, --endpoint, --profile)", u.RawQuery)
	}
	if u.Fragment != "" || u.User != nil || u.Port() != "" {
		return "", fmt.Errorf("want sqs://QUEUE, a queue name alone")
	}
	name := strings.TrimSuffix(strings.TrimPrefix(u.Host+u.Path, "/"), "/")
	if name == "" {
		return "", fmt.Errorf("names no queue: want sqs://QUEUE")
	}
	if strings.Contains(name, "/") {
		return "", fmt.Errorf("want sqs://QUEUE, a queue name (not a queue URL)")
	}
	return name, nil
}

// parseMemoryURL returns the queue and the file (?file=, may be empty) of
// memory://QUEUE?file=PATH; any other query parameter is refused.
func parseMemoryURL(raw string) (queue, file string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	for k := range q {
		if k != "file" {
			return "", "", fmt.Errorf("unknown query parameter %q: a memory:// URL takes only ?file=PATH", k)
		}
	}
	queue = strings.TrimPrefix(u.Host+u.Path, "/")
	if queue == "" {
		return "", "", fmt.Errorf("names no queue: want memory://QUEUE?file=PATH")
	}
	return queue, q.Get("file"), nil
}

// parsePubSubURL splits pubsub://projects/P/KIND/ID, KIND being
// subscriptions or topics. A query is refused.
func parsePubSubURL(raw string) (project, kind, id string, err error) {
	rest := strings.TrimPrefix(raw, "pubsub://")
	rest, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		return "", "", "", fmt.Errorf("a pubsub:// URL takes no query (?%s); the emulator is --endpoint or PUBSUB_EMULATOR_HOST", query)
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) != 4 || parts[0] != "projects" || parts[1] == "" || parts[3] == "" || (parts[2] != "subscriptions" && parts[2] != "topics") {
		return "", "", "", errors.New("not a pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION or pubsub://projects/PROJECT/topics/TOPIC URL")
	}
	return parts[1], parts[2], parts[3], nil
}

// parseRocketMQURL returns the topic and query of rocketmq://TOPIC?group=G.
// TOPIC may be written raw (%DLQ%orders) or escaped (%25DLQ%25orders). A
// query parameter other than group is refused.
func parseRocketMQURL(raw string) (string, url.Values, error) {
	rest := strings.TrimPrefix(raw, "rocketmq://")
	rawTopic, query, _ := strings.Cut(rest, "?")
	topic := strings.Trim(rawTopic, "/")
	if un, err := url.PathUnescape(topic); err == nil && !strings.Contains(topic, "%DLQ%") {
		topic = un
	}
	if topic == "" {
		return "", nil, errors.New("names no topic: want rocketmq://TOPIC?group=GROUP")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, err
	}
	for k := range q {
		if k != "group" {
			return "", nil, fmt.Errorf("unknown query parameter %q: a rocketmq:// URL takes only ?group=GROUP", k)
		}
	}
	return topic, q, nil
}

// resolvePubSubURL reads pubsub://projects/P/subscriptions/S. The emulator
// is --endpoint when given; otherwise the client library honours
// PUBSUB_EMULATOR_HOST, or reaches the service with Application Default
// Credentials.
func (o *dlqOptions) resolvePubSubURL(arg string) (*dlqTarget, error) {
	project, kind, sub, err := parsePubSubURL(arg)
	if err == nil && kind != "subscriptions" {
		err = errors.New("a topic is read through one of its subscriptions")
	}
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w: want pubsub://projects/PROJECT/subscriptions/SUBSCRIPTION", arg, err))
	}
	f := &config.File{Path: "(command line)"}
	f.Connections.GCP = config.GCPConnection{ProjectID: project, EmulatorHost: o.endpoint}
	s := &config.Subscription{
		Name: sub, ChannelName: sub, RoutingKey: sub, MakeChannels: config.MakeChannelsValidate,
		Transport: config.TransportGCP, GCP: &config.GCP{ProjectID: project, Mode: config.GCPModePull},
	}
	return &dlqTarget{f: f, s: s, dest: sub, url: "pubsub://projects/" + project + "/subscriptions/" + sub}, nil
}

// resolveRocketMQURL reads rocketmq://TOPIC?group=G. TOPIC may be written
// raw (%DLQ%orders) or escaped (%25DLQ%25orders). The proxy is
// --rocketmq-endpoint, else $ROCKETMQ_ENDPOINT; namespace and keys come from
// $ROCKETMQ_NAMESPACE, $ROCKETMQ_ACCESS_KEY and $ROCKETMQ_SECRET_KEY.
func (o *dlqOptions) resolveRocketMQURL(arg string) (*dlqTarget, error) {
	topic, q, err := parseRocketMQURL(arg)
	if err != nil {
		return nil, usageErr(fmt.Errorf("destination %q: %w", arg, err))
	}
	group := o.group
	if group == "" {
		group = q.Get("group")
	}
	if group == "" {
		group = defaultURLReaderGroup
	}
	endpoint := o.rocketmqEndpoint
	if endpoint == "" {
		endpoint = o.env("ROCKETMQ_ENDPOINT")
	}
	if endpoint == "" {
		return nil, usageErr(fmt.Errorf("destination %q: no RocketMQ endpoint: pass --rocketmq-endpoint HOST:PORT or set ROCKETMQ_ENDPOINT", arg))
	}
	f := &config.File{Path: "(command line)"}
	f.Connections.RocketMQ = config.RocketMQConnection{
		Endpoint: endpoint, Namespace: o.env("ROCKETMQ_NAMESPACE"),
		AccessKey: o.env("ROCKETMQ_ACCESS_KEY"), SecretKey: o.env("ROCKETMQ_SECRET_KEY"),
	}
	s := &config.Subscription{
		Name: topic, ChannelName: topic, RoutingKey: topic, MakeChannels: config.MakeChannelsValidate,
		Transport: config.TransportRocketMQ, RocketMQ: &config.RocketMQ{ConsumerGroup: group, Tag: "*"},
	}
	return &dlqTarget{f: f, s: s, dest: topic, group: group, url: "rocketmq://" + topic + "?group=" + url.QueryEscape(group)}, nil
}

// open resolves the argument and opens the transport's reader over it.
func (o *dlqOptions) open(ctx context.Context, arg string, rewrite bool, logger *slog.Logger) (*dlqTarget, dlqTransport, *openedChannel, error) {
	t, dt, err := o.target(arg)
	if err != nil {
		return nil, nil, nil, err
	}
	ch, err := o.openReader(ctx, t, dt, rewrite, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	return t, dt, ch, nil
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
	factory, err := o.transports.get(t.s)
	if err != nil {
		return nil, nil, err
	}
	dt, ok := factory.(dlqTransport)
	if !ok {
		return nil, nil, usageErr(fmt.Errorf("transport %q: dlq is not available for it in this build", t.s.Transport))
	}
	return t, dt, nil
}

// openReader opens the transport's reader over t.
func (o *dlqOptions) openReader(ctx context.Context, t *dlqTarget, dt dlqTransport, rewrite bool, logger *slog.Logger) (*openedChannel, error) {
	ch, err := dt.dlqReader(ctx, t, dlqReadOptions{visibility: o.visibility, wait: o.wait, rewrite: rewrite}, logger)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return nil, err
		}
		return nil, failureErr(fmt.Errorf("%s: open: %w", t.url, err))
	}
	return ch, nil
}

func (o *dlqOptions) source(t *dlqTarget, ch *openedChannel, logger *slog.Logger) *inspect.Source {
	return &inspect.Source{Consumer: ch.consumer, Name: t.url, Wait: o.wait, Logger: logger}
}

func (o *dlqOptions) checkOutput() error {
	if o.output != "table" && o.output != "json" {
		return usageErr(fmt.Errorf("--output %q: valid values are table, json", o.output))
	}
	return nil
}

func newDLQPeekCmd(o *dlqOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "peek [SUBSCRIPTION|URL]",
		Short: "Show dead-lettered messages with their rejection metadata, removing nothing",
		Long: `Show the messages of a dead-letter destination: id, original topic,
rejection reason and message, when it was rejected, its handled count, type
and age. A message without rejection metadata was moved by the broker's own
redrive and is shown as such.

--output json prints one JSON object per line with every header, the bag and
the body (base64 when it is not UTF-8): the format a memory.seed file takes.
Output is streamed: memory stays flat however many messages there are.`,
		Example: `  # Why were the orders subscription's messages dead-lettered?
  brighter dlq peek orders --config brighter.yaml
  brighter dlq peek -c brighter.yaml -s orders

  # Only budget exhaustions of the last hour, as JSON lines
  brighter dlq peek orders --reason DeliveryError --since 1h --output json

  # A queue by URL, with the AWS environment's credentials
  brighter dlq peek sqs://orders-dlq --grep 'timeout' --limit 20`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.runPeek(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

// readScan is what peek and stats share before their scan: the logger, the
// checked --output, the filter, the destination opened for reading, and a
// context that the first SIGINT or SIGTERM cancels. done closes the channel
// and stops listening for signals.
type readScan struct {
	logger *slog.Logger
	f      inspect.Filter
	t      *dlqTarget
	ch     *openedChannel
	ctx    context.Context
	done   func()
}

func (o *dlqOptions) openReadScan(ctx context.Context, arg string) (*readScan, error) {
	logger, err := o.global.newLogger(o.io)
	if err != nil {
		return nil, err
	}
	if err := o.checkOutput(); err != nil {
		return nil, err
	}
	f, err := o.filter()
	if err != nil {
		return nil, err
	}
	t, _, ch, err := o.open(ctx, arg, false, logger)
	if err != nil {
		return nil, err
	}
	sctx, stop := o.interruptible(ctx, logger)
	return &readScan{logger: logger, f: f, t: t, ch: ch, ctx: sctx, done: func() {
		stop()
		ch.close(context.WithoutCancel(ctx))
	}}, nil
}

func (o *dlqOptions) runPeek(ctx context.Context, arg string) error {
	rs, err := o.openReadScan(ctx, arg)
	if err != nil {
		return err
	}
	defer rs.done()
	ctx, t, logger, f, ch := rs.ctx, rs.t, rs.logger, rs.f, rs.ch
	var out inspect.Exporter
	if o.output == "json" {
		out = inspect.NewJSONLines(o.io.Out)
	} else {
		out = inspect.NewTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now)
	}
	counts, err := inspect.Peek(ctx, o.source(t, ch, logger), f, out)
	if ctx.Err() != nil {
		fmt.Fprintf(o.io.ErrOut, "%s: %d shown, %d read (interrupted)\n", t.url, counts.Selected, counts.Scanned)
		return interrupted("peek " + t.url)
	}
	if err != nil {
		return failureErr(naming(t, "peek", err))
	}
	fmt.Fprintf(o.io.ErrOut, "%s: %d shown, %d read\n", t.url, counts.Selected, counts.Scanned)
	return nil
}

func newDLQStatsCmd(o *dlqOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats [SUBSCRIPTION|URL]",
		Short: "Count dead-lettered messages by reason, original topic and rejection message",
		Long: `Summarise a dead-letter destination: how many messages, the oldest and
newest rejection, and counts grouped by rejection reason, original topic and
rejection message (normalised, so ids and numbers do not split groups).
Nothing is removed.`,
		Example: `  brighter dlq stats orders --config brighter.yaml
  brighter dlq stats -c brighter.yaml -s orders -o json
  brighter dlq stats sqs://orders-dlq --output json`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error { return o.runStats(cmd.Context(), dest) }),
	}
	o.addCommon(cmd)
	o.addOutput(cmd)
	return cmd
}

func (o *dlqOptions) runStats(ctx context.Context, arg string) error {
	rs, err := o.openReadScan(ctx, arg)
	if err != nil {
		return err
	}
	defer rs.done()
	ctx, t, logger, f, ch := rs.ctx, rs.t, rs.logger, rs.f, rs.ch
	st, counts, err := inspect.Collect(ctx, o.source(t, ch, logger), f)
	stopped := ctx.Err() != nil
	if err != nil && !stopped {
		return failureErr(naming(t, "stats", err))
	}
	// An interrupted run prints the counts of what it read so far.
	if o.output == "json" {
		err = st.WriteJSON(o.io.Out)
	} else {
		err = st.WriteTable(o.io.Out, o.io.OutTTY && o.io.Color, o.now())
	}
	if stopped {
		fmt.Fprintf(o.io.ErrOut, "%s: interrupted after %s; the counts cover only those\n", t.url, plural(st.Total, "message"))
		return interrupted("stats " + t.url)
	}
	if err != nil {
		return failureErr(err)
	}
	// As peek says how many it showed of how many it read: a filter that
	// selects nothing must not look like an empty destination.
	fmt.Fprintf(o.io.ErrOut, "%s: %d counted, %d read\n", t.url, counts.Selected, counts.Scanned)
	return nil
}

// dlqReplayOptions are replay's own flags.
type dlqReplayOptions struct {
	*dlqOptions
	to          string
	toSet       bool
	newID       bool
	keepCount   bool
	dryRun      bool
	rate        float64
	confirmOver int
	yes         bool
}

func newDLQReplayCmd(parent *dlqOptions) *cobra.Command {
	o := &dlqReplayOptions{dlqOptions: parent}
	cmd := &cobra.Command{
		Use:   "replay [SUBSCRIPTION|URL]",
		Short: "Send dead-lettered messages back where they came from, safely",
		Long: `For each selected message, publish it to --to (default: its originalTopic)
and only then remove it from the dead-letter destination. A failed publish
leaves the message where it is and the replay goes on; a crash at any
instant leaves every message in the dead-letter destination, at its
destination, or both, never neither. The summary says how many were
replayed, skipped (not selected) and failed; any failure exits 1.

The replayed message keeps its id (or gets a new one with --new-id), body,
attributes and correlation id, loses the five rejection keys and the
receipt, records replayedFrom and replayedAt, and starts with handled count
0 (unless --keep-count) so its redelivery budget starts afresh. On a FIFO
queue it keeps its message group and gets a fresh deduplication id.

--to takes a topic or queue name, or a URL of the source's transport
(sqs://QUEUE, pubsub://projects/P/topics/T, rocketmq://TOPIC, memory://QUEUE);
it may not be the destination being read (that would only strip the
messages' rejection metadata): that, an empty --to and another transport's
URL are refused before anything is read (exit 2).

A destination that does not exist is never created: those messages fail
and stay. More than --confirm-over messages ask for confirmation on a
terminal and need --yes otherwise (a declined confirmation exits 2, with
nothing replayed); without --yes the replay then handles at most the
number confirmed (or --confirm-over when none was asked).

Each message is handled at most once a run: a replayed message that a
consumer dead-letters again while the replay runs (same id, new rejection
time) is left in the dead-letter destination, counted neither replayed nor
failed.`,
		Example: `  # See what would happen, then do it
  brighter dlq replay orders --reason DeliveryError --dry-run
  brighter dlq replay orders --reason DeliveryError --yes

  # Ten a second, to a staging queue, with new ids
  brighter dlq replay sqs://orders-dlq --to orders-staging --new-id --rate 10 --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.runWith(func(cmd *cobra.Command, dest string) error {
			o.toSet = cmd.Flags().Changed("to")
			return o.run(cmd.Context(), dest)
		}),
	}
	o.addCommon(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.to, "to", "", "publish every message to this topic or queue, or a URL of the source's transport (default: its originalTopic)")
	fl.BoolVar(&o.newID, "new-id", false, "give each replayed message a new id")
	fl.BoolVar(&o.keepCount, "keep-count", false, "keep the handled count instead of starting from 0")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print what would be replayed; change nothing")
	fl.Float64Var(&o.rate, "rate", 0, "publish at most this many messages per second (0: no limit)")
	fl.IntVar(&o.confirmOver, "confirm-over", 100, "ask before replaying more than this many messages")
	fl.BoolVarP(&o.yes, "yes", "y", false, "replay without asking, however many messages")
	fl.BoolVar(&o.sns, "sns", false, "for an sqs:// URL only: publish replays to SNS topics instead of SQS queues")
	return cmd
}

func (o *dlqReplayOptions) run(ctx context.Context, arg string) error {
	logger, err := o.global.newLogger(o.io)
	if err != nil {
		return err
	}
	f, err := o.filter()
	if err != nil {
		return err
	}
	if o.rate < 0 {
		return usageErr(fmt.Errorf("--rate %g: must be 0 or more", o.rate))
	}
	if o.confirmOver < 0 {
		return usageErr(fmt.Errorf("--confirm-over %d: must be 0 or more", o.confirmOver))
	}
	t, dt, err := o.target(arg)
	if err != nil {
		return err
	}
	to, err := o.replayTo(ctx, t, dt, logger)
	if err != nil {
		return err
	}
	ch, err := o.openReader(ctx, t, dt, !o.dryRun, logger)
	if err != nil {
		return err
	}
	closeReader := func() error { return ch.close(context.WithoutCancel(ctx)) }
	src := o.source(t, ch, logger)
	ctx, stop := o.interruptible(ctx, logger)
	defer stop()

	total := -1
	if !o.dryRun && !o.yes && (f.Limit == 0 || f.Limit > o.confirmOver) {
		n, err := inspect.Count(ctx, src, f)
		if ctx.Err() != nil {
			_ = closeReader()
			fmt.Fprintf(o.io.ErrOut, "%s: interrupted while counting; nothing was replayed\n", t.url)
			return interrupted("replay " + t.url)
		}
		if err != nil {
			_ = closeReader()
			return failureErr(naming(t, "replay", err))
		}
		total = n
		if n > o.confirmOver {
			if ok, err := o.confirm(n, t.url); !ok {
				_ = closeReader()
				return err
			}
		}
		// The replay never goes beyond what was confirmed (n) or, without a
		// confirmation, beyond --confirm-over, even when more messages arrive
		// (or come back) while it runs.
		capped := max(n, o.confirmOver)
		if capped == 0 {
			_ = closeReader()
			return o.finish(nil, inspect.Summary{}, nil, nil, t)
		}
		if f.Limit == 0 || f.Limit > capped {
			f.Limit = capped
		}
	}
	opts := inspect.ReplayOptions{To: to, NewID: o.newID, KeepCount: o.keepCount, DryRun: o.dryRun, Rate: o.rate, Now: o.now}
	var bar *inspect.Bar
	if o.io.OutTTY {
		bar = inspect.NewBar(o.io.ErrOut, total, "replaying "+t.url)
		opts.Progress = bar
	} else {
		opts.Progress = inspect.NewLines(o.io.Out)
	}
	var prod broker.Producer
	if !o.dryRun {
		if prod, err = dt.dlqProducer(ctx, t, logger); err != nil {
			_ = closeReader()
			return failureErr(fmt.Errorf("replay %s: producer: %w", t.url, err))
		}
	}
	sum, rerr := inspect.Replay(ctx, src, replaySelf(t), prod, f, opts)
	cerr := closeReader()
	if prod != nil {
		cerr = errors.Join(prod.Close(context.WithoutCancel(ctx)), cerr)
	}
	if ctx.Err() != nil {
		if bar != nil {
			bar.Finish()
		}
		if err := inspect.WriteSummary(o.io.Out, sum); err != nil {
			return failureErr(err)
		}
		fmt.Fprintf(o.io.ErrOut, "%s: interrupted; messages not replayed are still in the dead-letter destination, visible\n", t.url)
		return interrupted("replay " + t.url)
	}
	return o.finish(bar, sum, rerr, cerr, t)
}

// naming adds "what URL: " to err unless err already names the destination
// (a receive error of inspect does), so the URL is said once.
func naming(t *dlqTarget, what string, err error) error {
	if strings.Contains(err.Error(), t.url) {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, t.url, err)
}

// replaySelf is the name a replay must not publish back into: the
// destination being read.
func replaySelf(t *dlqTarget) string { return t.dest }

func (o *dlqReplayOptions) finish(bar *inspect.Bar, sum inspect.Summary, rerr, cerr error, t *dlqTarget) error {
	if bar != nil {
		bar.Finish()
	}
	if err := inspect.WriteSummary(o.io.Out, sum); err != nil {
		return failureErr(err)
	}
	switch {
	case rerr != nil:
		return failureErr(naming(t, "replay", rerr))
	case cerr != nil:
		return failureErr(fmt.Errorf("replay %s: %w", t.url, cerr))
	case sum.Failed > 0:
		where := "they are"
		if sum.Failed == 1 {
			where = "it is"
		}
		return failureErr(fmt.Errorf("replay %s: %s failed; %s still in the dead-letter destination (or in both places, as logged)", t.url, plural(sum.Failed, "message"), where))
	}
	return nil
}

// confirm asks on a terminal; off one it refuses without --yes.
func (o *dlqReplayOptions) confirm(n int, name string) (bool, error) {
	if !o.io.InTTY {
		return false, usageErr(fmt.Errorf("%s selected in %s, more than --confirm-over %d: pass --yes to replay them, or narrow the selection", plural(n, "message"), name, o.confirmOver))
	}
	fmt.Fprintf(o.io.ErrOut, "Replay %s from %s? [y/N] ", plural(n, "message"), name)
	line, err := bufio.NewReader(o.io.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, failureErr(fmt.Errorf("read confirmation: %w", err))
	}
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(o.io.ErrOut)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	// Declined (or no answer: end of input): a refused replay, exit 2 as
	// without --yes off a terminal; nothing was replayed.
	return false, usageErr(errors.New("replay cancelled; nothing was replayed"))
}
