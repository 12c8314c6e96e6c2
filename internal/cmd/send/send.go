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
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/brightergo/brighter/internal/broker"
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

SIGINT, SIGTERM or SIGHUP stops the send: no further message is sent, the summary line
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
// a non-empty key, key and value held to checkText, not rejection
// metadata, and each key once. A key given
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
		if err := checkText(fmt.Sprintf("--header %q: key", redact.Quoted(h)), k); err != nil {
			return nil, err
		}
		if err := checkText(fmt.Sprintf("--header %q: value", redact.Quoted(h)), v); err != nil {
			return nil, err
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

// checkID reads an id-like flag's value (--id, --correlation-id): UTF-8
// text with no control character (newline, tab, the other C0 and C1
// controls, DEL) and no white space at either end. send prints each
// message id as one line of stdout, which a script reads as the id; a
// correlation id names the message id it answers, so it is held to the
// same rule. Any other value is a usage error naming the rule the value
// breaks.
func checkID(flag, v string) error {
	bad := func(rule string) error {
		return cmdutil.UsageErr(fmt.Errorf("%s %q: %s", flag, redact.Quoted(v), rule))
	}
	if !utf8.ValidString(v) {
		return bad("not UTF-8 text: an id must be UTF-8 (SQS would replace the bytes, Pub/Sub and RocketMQ refuse them)")
	}
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return bad(fmt.Sprintf("holds the control character %U: an id may hold no control character (newline, tab, other C0 or C1 controls, DEL), since send prints each id as one line of stdout", r))
	}
	if strings.TrimSpace(v) != v {
		return bad("starts or ends with white space: an id may not, since a script reading the printed id would not get it back as sent")
	}
	return nil
}

// checkText reads a value that travels as a header field or property
// (a --header key or value, --partition-key, --content-type): UTF-8 text
// whose only C0 control characters are tab, newline and carriage return,
// which every transport carries. Pub/Sub and RocketMQ refuse bytes that
// are not UTF-8 (SQS would replace them); RocketMQ separates a message's
// properties with U+0001 and U+0002, so a value holding one would not
// arrive as sent, and a message read on one transport may be replayed to
// another. DEL and the C1 controls travel and are taken as they are.
// what starts the usage error (`--header "k=v": key`).
func checkText(what, v string) error {
	bad := func(rule string) error {
		return cmdutil.UsageErr(fmt.Errorf("%s %s", what, rule))
	}
	if !utf8.ValidString(v) {
		return bad("is not UTF-8 text: Pub/Sub and RocketMQ refuse it, SQS would replace the bytes")
	}
	if i := strings.IndexFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' && r != '\r' }); i >= 0 {
		return bad(fmt.Sprintf("holds the control character %U: it may hold tab, newline and carriage return, no other C0 control (RocketMQ separates a message's properties with U+0001 and U+0002)", rune(v[i])))
	}
	return nil
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
// broker refused, cmdutil.ExitInterrupted (130) when SIGINT, SIGTERM or SIGHUP
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
	if o.idSet {
		if err := checkID("--id", o.id); err != nil {
			return err
		}
	}
	if o.correlationID != "" {
		if err := checkID("--correlation-id", o.correlationID); err != nil {
			return err
		}
	}
	if err := checkText(fmt.Sprintf("--partition-key %q:", redact.Quoted(o.partitionKey)), o.partitionKey); err != nil {
		return err
	}
	if err := checkText(fmt.Sprintf("--content-type %q:", redact.Quoted(o.contentType)), o.contentType); err != nil {
		return err
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
	// underWay says a publish call was cut off: the broker may have taken
	// its message. Without one under way and none sent (the signal came
	// while the first message's queue was looked up, say), nothing was.
	stopped := func(underWay bool) error {
		logger.Info(logSentBulk, "count", sent, "topic", topic, "transport", string(s.Transport), "interrupted", true)
		what := ""
		switch {
		case underWay:
			what = " (the one under way was abandoned; the broker may have taken it)"
		case sent == 0:
			what = " (before the first publish call: nothing was sent)"
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
				// A send that failed before its publish call (the
				// destination's look-up) cannot have been taken.
				return stopped(!errors.Is(err, broker.ErrNotSent))
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
		} else if _, err := fmt.Fprintln(o.io.Out, id); err != nil {
			// stdout's reader went away (| head): no further message is
			// sent, as at a signal.
			logger.Info(logSentBulk, "count", sent, "topic", topic, "transport", string(s.Transport), "interrupted", true)
			return cmdutil.WrapExit(cmdutil.ExitFailure, err, "send to %s: stopped after %d of %d sent, their ids not all printed", topic, sent, o.count)
		}
	}
	if bulk {
		logger.Info(logSentBulk, "count", sent, "topic", topic, "transport", string(s.Transport))
	}
	return nil
}
