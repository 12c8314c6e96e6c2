// Package send is `brighter send`: publish a message, or --count N of
// them, in Brighter's wire format to a subscription's topic through the
// transport registry, the body from --body, --file or stdin.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Must not import: internal/cmd/root
package send

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/cmd/cmdutil"
	"github.com/brightergo/brighter/internal/cmd/factory"
	"github.com/brightergo/brighter/internal/cmd/iostreams"
	"github.com/brightergo/brighter/internal/inspect"
	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
	"github.com/brightergo/brighter/internal/transport"
)

// MaxCount is the most copies one `send --count` publishes (a count): a
// typo of a few more digits must not publish, and bill, for hours.
const MaxCount = 100_000

// Options carries send's flags and dependencies.
type Options struct {
	io            *iostreams.IOStreams
	global        *factory.Factory
	transports    transport.Registry
	configPath    string
	subscription  string
	topic         string
	body          string
	bodySet       bool
	file          string
	id            string
	idSet         bool
	messageType   string
	correlationID string
	partitionKey  string
	contentType   string
	handledCount  int
	headers       []string
	count         int
}

// NewCmdSend returns the send command. runF, when not nil, is called with
// the parsed options instead of runSend (a test checks the flags' parsing
// without running the command).
func NewCmdSend(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	io, g := f.IOStreams, f
	o := &Options{io: io, global: g, transports: f.Transports()}
	cmd := &cobra.Command{
		Use:   "send",
		Short: "Publish a message in Brighter's wire format for a subscription's transport",
		Long: `Publish a message to a subscription's topic (its routingKey) in the wire format
Brighter uses on that transport. The body comes from --body, --file, or stdin.

SIGINT or SIGTERM stops the send: no further message is sent, the summary line
("messages sent", with interrupted=true) says how many were, and the command
ends with "interrupted; N of M sent", exit 130. Signals within half a second of
the first are the same stop; a later one exits 130 at once.`,
		Example: `  # Send a poison-message drill to the orders subscription's topic
  brighter send --config brighter.yaml --subscription orders --body '{"orderId": 42}'

  # Body from a file, with a bag entry and a partition key
  brighter send -c brighter.yaml -s orders --file order.json --header tenant=acme --partition-key acme`,
		Args: cmdutil.NoArgs("name the subscription with -s/--subscription and give the body with --body, --file or stdin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bodySet = cmd.Flags().Changed("body")
			o.idSet = cmd.Flags().Changed("id")
			if runF != nil {
				return runF(o)
			}
			return runSend(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.configPath, "config", "c", cmdutil.DefaultConfigPath, "subscriptions file")
	fl.StringVarP(&o.subscription, "subscription", "s", "", "subscription whose transport and routingKey to use (required)")
	_ = cmd.RegisterFlagCompletionFunc("subscription", cmdutil.SubscriptionNames(io))
	fl.StringVar(&o.topic, "topic", "", "topic to publish to instead of the subscription's routingKey")
	fl.StringVar(&o.body, "body", "", "message body")
	fl.StringVar(&o.file, "file", "", "read the body from this file ('-' for stdin)")
	fl.StringVar(&o.id, "id", "", "message id (default: a new UUID)")
	fl.StringVar(&o.messageType, "type", "MT_EVENT", "message type, in any case: "+strings.Join(sendTypes, ", "))
	cmdutil.CompleteValues(cmd, sendTypes, "type")
	fl.StringVar(&o.correlationID, "correlation-id", "", "correlation id")
	fl.StringVar(&o.partitionKey, "partition-key", "", "partition key (SQS FIFO group, Pub/Sub ordering key, RocketMQ message group)")
	fl.StringVar(&o.contentType, "content-type", message.DefaultContentType, "content type of the body")
	fl.IntVar(&o.handledCount, "handled-count", 0, "stamped handled count (for drills)")
	fl.StringArrayVar(&o.headers, "header", nil, "bag entry key=value (repeatable, one value per key)")
	fl.IntVar(&o.count, "count", 1, fmt.Sprintf("send this many copies (at most %d), each with a new id unless --id is given", MaxCount))
	_ = cmd.MarkFlagRequired("subscription")
	return cmd
}

func (o *Options) readBody() ([]byte, error) {
	switch {
	case o.bodySet && o.file != "":
		return nil, cmdutil.UsageErr(fmt.Errorf("--body and --file cannot be used together"))
	case o.bodySet:
		return []byte(o.body), nil
	case o.file == "-" || o.file == "":
		if o.file == "" && o.io.InTTY {
			return nil, cmdutil.UsageErr(fmt.Errorf("no body: give --body, --file, or pipe it on stdin"))
		}
		b, err := io.ReadAll(o.io.In)
		if err != nil {
			return nil, cmdutil.FailureErr(fmt.Errorf("read body from stdin: %w", err))
		}
		return b, nil
	default:
		b, err := os.ReadFile(o.file)
		if err != nil {
			return nil, cmdutil.UsageErr(fmt.Errorf("--file: %w", err))
		}
		return b, nil
	}
}

// bodySource names where readBody read the body from, for its errors.
func (o *Options) bodySource() string {
	switch {
	case o.bodySet:
		return "--body"
	case o.file != "" && o.file != "-":
		return "--file " + o.file
	}
	return "stdin"
}

// sendTypes are the message types send may stamp.
var sendTypes = []string{"MT_COMMAND", "MT_EVENT", "MT_DOCUMENT"}

// parseSendType reads --type: one of sendTypes in any case (mt_command),
// as --output and --log-level take their values, or the enum's number
// (1, 2, 3); the message carries the canonical name (MT_COMMAND). Any
// other value, the types send never stamps (MT_NONE, MT_QUIT,
// MT_UNACCEPTABLE) included, is a usage error naming the valid values.
func parseSendType(s string) (message.MessageType, error) {
	for _, n := range sendTypes {
		if strings.EqualFold(s, n) {
			mt, _ := message.ParseMessageType(n)
			return mt, nil
		}
	}
	if mt, ok := message.ParseMessageType(s); ok && slices.Contains(sendTypes, mt.String()) {
		return mt, nil
	}
	return 0, cmdutil.UsageErr(fmt.Errorf("--type %q: valid values are %s (in any case)", redact.Quoted(s), strings.Join(sendTypes, ", ")))
}

// parseHeaders reads the --header values into a bag: each key=value with
// a non-empty key, not rejection metadata, and each key once. A key given
// twice is a usage error naming it, even with one value twice: the bag
// holds one value per key, and keeping the last silently would send
// something the command line does not say.
func parseHeaders(headers []string) (message.Bag, error) {
	bag := message.Bag{}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, cmdutil.UsageErr(fmt.Errorf("--header %q: want key=value", redact.Quoted(h)))
		}
		if slices.Contains(message.RejectionKeys[:], k) || k == message.KeyPumpRejectionReason {
			return nil, cmdutil.UsageErr(fmt.Errorf("--header %q: %s is rejection metadata, written only when brighter routes a message; a message carrying it is read as a routed copy", redact.Quoted(h), redact.Cut(k)))
		}
		if _, dup := bag[k]; dup {
			return nil, cmdutil.UsageErr(fmt.Errorf("--header %q: key %q is given more than once: a bag entry has one value, give each key once", redact.Quoted(h), redact.Quoted(k)))
		}
		bag[k] = v
	}
	return bag, nil
}

// Stable log texts of send: one line for a single message; for --count N,
// one line at the end (each message at Debug).
const (
	logSent     = "message sent"
	logSentBulk = "messages sent"
	// logSendStopping is logged (Warning) at the first SIGINT/SIGTERM:
	// no further message is sent, the summary line says how many were.
	logSendStopping = "signal received; stopping the send (send it again to exit at once)"
)

// runSend builds the message(s) from the flags and publishes them to the
// subscription's topic: nil when every message was sent, a usage error
// (exit 2) for a wrong file or flag or a message the transport cannot
// carry (transport.MessageRefused), a failure (exit 1) for a send the
// broker refused, cmdutil.ExitInterrupted (130) when SIGINT or SIGTERM
// stopped it (then the summary line, marked interrupted, and the error say
// how many were sent).
func runSend(ctx context.Context, o *Options) error {
	logger, err := o.global.Logger()
	if err != nil {
		return err
	}
	mt, err := parseSendType(o.messageType)
	if err != nil {
		return err
	}
	if o.idSet && o.id == "" {
		// As an empty -s or -c is: a script's --id "$ID" with ID unset
		// must not send under a new id it did not ask for.
		return cmdutil.UsageErr(errors.New(`--id "": give a message id, or leave --id out for a new UUID per message`))
	}
	if o.handledCount < 0 || o.handledCount >= message.HandledCountLimit {
		return cmdutil.UsageErr(fmt.Errorf("--handled-count %d: must be 0 or more and below %d (a receiver refuses any other stamp)", o.handledCount, message.HandledCountLimit))
	}
	if o.count < 1 || o.count > MaxCount {
		return cmdutil.UsageErr(fmt.Errorf("--count %d: must be 1 to %d (send publishes test messages, one billed call each; it is no load generator)", o.count, MaxCount))
	}
	bag, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	body, err := o.readBody()
	if err != nil {
		return err
	}
	if len(body) == 0 {
		// A usage error like every other body error (SQS and SNS would
		// refuse it at the send, a failure).
		return cmdutil.UsageErr(fmt.Errorf("the body is empty (%s): give a non-empty --body, --file, or stdin", o.bodySource()))
	}
	f, err := cmdutil.LoadConfig(o.io, o.configPath)
	if err != nil {
		return err
	}
	s := f.Subscription(o.subscription)
	if s == nil {
		_, err := cmdutil.SelectSubscriptions(f, []string{o.subscription})
		return cmdutil.UsageErr(err)
	}
	factory, err := o.transports.Get(s)
	if err != nil {
		return cmdutil.ExitCoded(err)
	}
	topic := s.RoutingKey
	if o.topic != "" {
		// The name rule the file's routingKey is held to: a --topic the
		// broker cannot name would otherwise be created as it is.
		if rule := s.TopicNameRule(o.topic); rule != "" {
			return cmdutil.UsageErr(fmt.Errorf("--topic %q: %s", redact.Quoted(o.topic), rule))
		}
		topic = o.topic
	}
	// From here on a signal stops the send: while connecting nothing is
	// sent; while sending no further message is.
	ctx, interrupted, stopWatch := cmdutil.StopOnSignals(ctx, logger, logSendStopping, o.global.Signals, o.global.Exit)
	defer stopWatch()
	p, err := factory.Producer(ctx, f, s, logger)
	if err != nil {
		if interrupted() {
			return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: fmt.Errorf("send to %s: interrupted while connecting to the broker; nothing was sent", topic)}
		}
		return cmdutil.WrapExit(cmdutil.ExitFailure, err, "subscription %s: producer", s.Name)
	}
	defer p.Close(context.WithoutCancel(ctx))
	// Several messages: a progress bar on a terminal instead of the ids, and
	// one log line at the end instead of one per message.
	bulk := o.count > 1
	var bar *inspect.Bar
	if bulk && o.io.OutTTY {
		bar = inspect.NewBar(o.io.ErrOut, o.count, "sending to "+topic)
		defer bar.Finish()
	}
	level := slog.LevelInfo
	if bulk {
		level = slog.LevelDebug
	}
	sent := 0
	// stopped is the end of a send a signal interrupted: the summary line
	// (as a finished send logs it, marked interrupted) and exit 130.
	// underWay says a send was cut off: the broker may have taken it.
	stopped := func(underWay bool) error {
		logger.Info(logSentBulk, "count", sent, "topic", topic, "transport", string(s.Transport), "interrupted", true)
		what := ""
		if underWay {
			what = " (the one under way was abandoned; the broker may have taken it)"
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitInterrupted, Err: fmt.Errorf("send to %s: interrupted; %d of %d sent%s", topic, sent, o.count, what)}
	}
	for range o.count {
		if interrupted() {
			return stopped(false)
		}
		id := o.id
		if id == "" {
			id = uuid.NewString()
		}
		m := message.New(id, topic, mt, body)
		m.Header.CorrelationID = o.correlationID
		m.Header.PartitionKey = o.partitionKey
		m.Header.ContentType = o.contentType
		m.Header.HandledCount = o.handledCount
		for k, v := range bag {
			m.Header.Bag[k] = v
		}
		if err := p.Send(ctx, m); err != nil {
			if interrupted() {
				return stopped(true)
			}
			// A message the transport cannot carry (a body that is not
			// text on SQS, one over the size limit) is the user's input:
			// a usage error, as every other body error is.
			exit := cmdutil.FailureErr
			if transport.MessageRefused(err) {
				exit = cmdutil.UsageErr
			}
			if bulk {
				return exit(fmt.Errorf("send to %s: %d of %d sent: %w", topic, sent, o.count, err))
			}
			return exit(fmt.Errorf("send to %s: %w", topic, err))
		}
		sent++
		logger.Log(ctx, level, logSent, "message_id", id, "topic", topic, "transport", string(s.Transport))
		if bar != nil {
			bar.Done(inspect.Outcome{ID: id})
		} else {
			fmt.Fprintln(o.io.Out, id)
		}
	}
	if bulk {
		logger.Info(logSentBulk, "count", sent, "topic", topic, "transport", string(s.Transport))
	}
	return nil
}
