package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/redact"
)

// File is a parsed, defaulted and validated subscriptions file.
type File struct {
	// Path is the name the file was loaded under (as given to Load or Parse).
	Path string
	// Connections holds how to reach each broker.
	Connections Connections
	// Subscriptions are in file order; names are unique. Never empty.
	Subscriptions []*Subscription

	pos map[string]Position
	// written maps a non-empty value that came out of ${VAR} expansion to
	// the text the file has for it ("https://h/x?k=s3cret" ->
	// "${HANDLER_URL}"), the first field's when two expanded to the same
	// value (File.AsWritten).
	written asWritten
	// envValues are the values the environment gave the ${VAR}
	// references of the fields whose values are secrets (secretField), in
	// the order they were read.
	envValues []string
}

// Subscription returns the subscription with the given name, or nil.
func (f *File) Subscription(name string) *Subscription {
	for _, s := range f.Subscriptions {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Connections holds the broker connection settings shared by every
// subscription of a transport.
type Connections struct {
	AWS      AWSConnection
	GCP      GCPConnection
	RocketMQ RocketMQConnection
}

// AWSConnection is connections.aws. Empty fields leave the AWS SDK's own
// resolution (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL*) to the transport.
type AWSConnection struct {
	Region string
	// Endpoint is an http(s) URL (LocalStack, for example); optional.
	Endpoint string
	Profile  string
}

// GCPConnection is connections.gcp.
type GCPConnection struct {
	// ProjectID is the default project of every gcp subscription.
	ProjectID string
	// EmulatorHost is host:port of a Pub/Sub emulator; PUBSUB_EMULATOR_HOST
	// is honoured by the transport when this is empty.
	EmulatorHost string
}

// RocketMQConnection is connections.rocketmq. Endpoint is required when a
// subscription uses transport rocketmq.
type RocketMQConnection struct {
	// Endpoint is the proxy's host:port.
	Endpoint  string
	Namespace string
	AccessKey string
	SecretKey string
}

// Transport names a broker.
type Transport string

// The transports a subscription may name.
const (
	TransportSQS      Transport = "sqs"
	TransportGCP      Transport = "gcp"
	TransportRocketMQ Transport = "rocketmq"
	TransportMemory   Transport = "memory"
)

// transports lists every valid transport, in the order error messages show.
var transports = schemaEnum("$defs", "subscription", "properties", "transport")

// PumpType is messagePumpType: the pump variant (docs/wire-format.md#pump).
type PumpType string

// The pump variants. Their values equal internal/pump's Variant values.
const (
	Reactor  PumpType = "reactor"
	Proactor PumpType = "proactor"
)

// MakeChannels is Brighter's OnMissingChannel: what to do when the queue,
// topic or subscription does not exist.
type MakeChannels string

// The makeChannels values.
const (
	// MakeChannelsCreate creates missing infrastructure (the default).
	MakeChannelsCreate MakeChannels = "create"
	// MakeChannelsValidate checks that it exists and fails if not.
	MakeChannelsValidate MakeChannels = "validate"
	// MakeChannelsAssume makes no check at all.
	MakeChannelsAssume MakeChannels = "assume"
)

// Defaults of the base subscription
// (docs/configuration.md#subscription-settings: Brighter's, plus this tool's
// drainTimeout).
const (
	DefaultBufferSize     = 1
	DefaultNoOfPerformers = 1
	// MaxNoOfPerformers is the most performers a subscription may have:
	// each is a receive loop (and, in the Proactor, a worker with a lane
	// of bufferSize messages), so a typo of 10^8 would take gigabytes
	// before the first message; a thousand concurrent receives per
	// subscription is already more than a broker rewards.
	MaxNoOfPerformers          = 1000
	DefaultRequeueCount        = -1
	DefaultEmptyChannelDelay   = 500 * time.Millisecond
	DefaultChannelFailureDelay = time.Second
	// DefaultMaxChannelFailureDelay caps the back-off of repeated channel
	// failures.
	DefaultMaxChannelFailureDelay = 30 * time.Second
	// DefaultCallTimeout is the deadline of each settle and routing call.
	DefaultCallTimeout = 30 * time.Second
	// DefaultStallAfter is how long a channel may fail before /readyz says
	// not ready.
	DefaultStallAfter     = 60 * time.Second
	DefaultDrainTimeout   = 10 * time.Second
	DefaultHandlerTimeout = 30 * time.Second
	// DefaultMaxLeaseExtension is maxLeaseExtension's default (the Pub/Sub
	// client's MaxExtension default; docs/adr/0005-leases.md).
	DefaultMaxLeaseExtension = time.Hour
	// MaxBufferSize is the largest bufferSize (Brighter's limit, and SQS's
	// largest receive batch).
	MaxBufferSize = 10
	// MaxSQSTimeOut is SQS's longest long-poll wait.
	MaxSQSTimeOut = 20 * time.Second
	// MaxSQSVisibility is SQS's longest visibility timeout (and so the
	// longest requeue delay an SQS subscription can honour).
	MaxSQSVisibility = limits.SQSMaxVisibility
)

// DefaultTimeOut returns the receive timeout (timeOut) a subscription of the
// given transport gets when the file does not set one: sqs 20s (the SQS
// long-poll maximum), gcp 1s, rocketmq 20s, memory 300ms (Brighter's base
// default); 300ms for an unknown transport.
func DefaultTimeOut(t Transport) time.Duration {
	switch t {
	case TransportSQS, TransportRocketMQ:
		return 20 * time.Second
	case TransportGCP:
		return time.Second
	default:
		return 300 * time.Millisecond
	}
}

// Subscription is one entry of subscriptions: a channel on one transport,
// its pump settings, its handler, and its transport's native settings.
// Every field carries its default when the file did not set it.
type Subscription struct {
	// Name is unique within the file (required).
	Name string
	// Transport is the broker (required).
	Transport Transport
	// ChannelName is the queue (SQS), subscription (Pub/Sub) or topic read
	// by the consumer group (RocketMQ); default Name.
	ChannelName string
	// RoutingKey is the topic; default ChannelName.
	RoutingKey string
	// MessagePumpType is reactor or proactor; default proactor.
	MessagePumpType PumpType
	// BufferSize is how many messages one receive may return, 1..10;
	// default 1.
	BufferSize int
	// NoOfPerformers is the number of performers, 1..MaxNoOfPerformers;
	// default 1.
	NoOfPerformers int
	// TimeOut is the receive timeout (long-poll wait); default
	// DefaultTimeOut(Transport). SQS: at most 20s.
	TimeOut time.Duration
	// TimeOutSet reports whether the file set timeOut explicitly.
	TimeOutSet bool
	// RequeueCount is the redelivery budget, a budget of deliveries: a
	// deferred message is rejected once its delivery count reaches it; -1
	// (the default) disables it.
	// Any integer is legal here; lint judges 0 and values below -1.
	RequeueCount int
	// RequeueDelay is the delay of a requeue, >= 0; SQS at most 12h.
	RequeueDelay time.Duration
	// UnacceptableMessageLimit stops the pump after that many rejections
	// (within the window, if set): every rejection counts, a handler's
	// Reject or Unacceptable, a message that could not be decoded and a
	// spent redelivery budget alike, as .NET Brighter counts them; 0 never
	// stops. >= 0.
	UnacceptableMessageLimit int
	// UnacceptableMessageLimitWindow is the window of the limit; 0 means
	// the whole run. >= 0.
	UnacceptableMessageLimitWindow time.Duration
	// EmptyChannelDelay is the pause after an empty receive; default 500ms.
	EmptyChannelDelay time.Duration
	// ChannelFailureDelay is the pause after a failed receive; default 1s.
	// Repeated failures double it, with jitter, up to
	// MaxChannelFailureDelay.
	ChannelFailureDelay time.Duration
	// MaxChannelFailureDelay caps the back-off of repeated channel
	// failures; default 30s.
	MaxChannelFailureDelay time.Duration
	// CallTimeout is the deadline of each settle call (acknowledge,
	// requeue, and each call of a rejection: publish, acknowledge or
	// release); default 30s. A call that times out fails like any other.
	CallTimeout time.Duration
	// StallAfter is how long the channel's broker calls may fail with no
	// success between before the subscription is reported stalled
	// (/readyz 503, brighter_stalled 1); default 60s.
	StallAfter time.Duration
	// DrainTimeout bounds graceful shutdown; default 10s; > 0 (a file
	// setting 0s is refused).
	DrainTimeout time.Duration
	// MaxLeaseExtension caps how long past its first lease the pump keeps
	// extending a held message's lease (SQS visibility timeout, Pub/Sub
	// pull ack deadline, RocketMQ invisible duration); 0 turns extension
	// off; default 1h (docs/adr/0005-leases.md). >= 0.
	MaxLeaseExtension time.Duration
	// MakeChannels is create, validate or assume; default create.
	MakeChannels MakeChannels
	// DeadLetterRoutingKey is where every rejection but an Unacceptable one
	// goes (DeliveryError and None), and Unacceptable ones too when
	// InvalidMessageRoutingKey is "" ("" = none: the message is acknowledged
	// and a Warning logged).
	DeadLetterRoutingKey string
	// InvalidMessageRoutingKey is where Unacceptable rejections go ("" =
	// fall back to DeadLetterRoutingKey).
	InvalidMessageRoutingKey string
	// Handler is the user's code for each message (required).
	Handler Handler

	// SQS is the sqs block; non-nil (defaulted) when Transport is sqs,
	// nil otherwise.
	SQS *SQS
	// GCP is the gcp block; non-nil (defaulted) when Transport is gcp.
	GCP *GCP
	// RocketMQ is the rocketmq block; non-nil when Transport is rocketmq.
	RocketMQ *RocketMQ
	// Memory is the memory block; non-nil (defaulted) when Transport is
	// memory.
	Memory *Memory

	// Index is the subscription's position in File.Subscriptions.
	Index int

	self Position
	// pos holds the line and column of every key the file set under the
	// subscription, by path relative to it; their file is self's.
	pos map[string]keyPos
	// written is File.written for the subscription's own fields only (nil
	// when none came out of ${VAR} expansion), so that findings about it
	// quote its values as written and no other field's text.
	written asWritten
}

// keyPos is a position within the file a Position names: a
// subscription keeps its file name once (in self), not once per key. A
// negative col marks a key that came in through a merge key (<<), at its
// position in the anchored mapping (column -col): a flag of its own
// would make every subscription's table larger (8 bytes a key, 3% of
// what parsing a file of 10,000 subscriptions allocates).
type keyPos struct{ line, col int32 }

// newKeyPos returns the keyPos of p, marked when merged.
func newKeyPos(p Position, merged bool) keyPos {
	k := keyPos{line: clampInt32(p.Line), col: clampInt32(p.Column)}
	if merged {
		k.col = -k.col
	}
	return k
}

// column is the key's column.
func (k keyPos) column() int { return int(max(k.col, -k.col)) }

// merged reports whether the key came in through a merge key.
func (k keyPos) merged() bool { return k.col < 0 }

// Pos returns the position of the key field (a YAML path relative to the
// subscription, e.g. "requeueCount", "handler.url",
// "sqs.redrivePolicy.maxReceiveCount") when the file set it, else the
// position of its nearest present ancestor, else of the subscription itself
// (its first key). Pos("") is the subscription's own position.
func (s *Subscription) Pos(field string) Position {
	for p := field; p != ""; p = parentPath(p) {
		if lc, ok := s.pos[p]; ok {
			return Position{File: s.self.File, Line: int(lc.line), Column: lc.column()}
		}
	}
	return s.self
}

// Merged reports whether the value Pos(field) points at came into the
// subscription through a merge key (<<: *anchor): field, or the nearest
// ancestor of it that the file set, or any ancestor of that key, was
// brought in by a merge rather than written in the subscription itself.
// Pos then points into the anchored mapping, which is where the value is
// edited (or overridden by a key of the subscription's own).
func (s *Subscription) Merged(field string) bool {
	for p := field; p != ""; p = parentPath(p) {
		if lc, ok := s.pos[p]; ok && lc.merged() {
			return true
		}
	}
	return false
}

// Set reports whether the file set field (a path as for Pos) explicitly,
// rather than leaving it to its default.
func (s *Subscription) Set(field string) bool {
	_, ok := s.pos[field]
	return ok
}

// Path returns the subscription's YAML path, e.g. "subscriptions[2]".
func (s *Subscription) Path() string { return subscriptionPath(s.Index) }

// HandlerType names a handler adapter.
type HandlerType string

// The handler types.
const (
	HandlerBuiltin HandlerType = "builtin"
	HandlerExec    HandlerType = "exec"
	HandlerHTTP    HandlerType = "http"
)

// The builtin handler names, which are also the outcomes a builtin script
// may list.
const (
	BuiltinLog          = "log"
	BuiltinAck          = "ack"
	BuiltinDefer        = "defer"
	BuiltinReject       = "reject"
	BuiltinFail         = "fail"
	BuiltinUnacceptable = "unacceptable"
)

var builtinNames = schemaEnum("$defs", "outcome")

// Handler is a subscription's handler block. Only the fields of Type are
// set; the file may not carry fields of another type.
type Handler struct {
	// Type is builtin, exec or http (required).
	Type HandlerType
	// Timeout bounds one exec or http call; default 30s, > 0.
	Timeout time.Duration

	// Name is the builtin handler (log, ack, defer, reject, fail,
	// unacceptable); exactly one of Name and Script is set for builtin.
	Name string
	// Script is a builtin script: Script[i] is the outcome of the delivery
	// whose count (HandledCount) is i; the last entry repeats. Each is one
	// of the builtin names. Written in the file as "defer,defer,ack".
	Script []string

	// Command is the exec program (required for exec); run without a
	// shell.
	Command string
	// Args are the exec arguments.
	Args []string
	// Env is extra environment for the exec command.
	Env map[string]string

	// URL is the http endpoint, an absolute http or https URL (required
	// for http).
	URL string
	// Headers are extra request headers for http (after ${VAR} expansion).
	Headers map[string]string
	// TLS configures the http client's TLS; nil when absent.
	TLS *TLS
}

// TLS is handler.tls for http handlers. CertFile and KeyFile come together.
type TLS struct {
	CAFile             string
	CertFile           string
	KeyFile            string
	InsecureSkipVerify bool
}

// SQS channel types (docs/configuration.md#transport-blocks).
const (
	// ChannelPointToPoint reads a queue only.
	ChannelPointToPoint = "pointToPoint"
	// ChannelPubSub subscribes queue channelName to SNS topic routingKey.
	ChannelPubSub = "pubSub"
)

// SQS queue types.
const (
	QueueStandard = "standard"
	QueueFIFO     = "fifo"
)

// SQS is the sqs block (docs/configuration.md#transport-blocks).
type SQS struct {
	// ChannelType is pointToPoint (default) or pubSub.
	ChannelType string
	// QueueType is standard (default) or fifo.
	QueueType string
	// VisibilityTimeout is 0..12h; default 30s.
	VisibilityTimeout time.Duration
	// RawMessageDelivery applies to pubSub; default true.
	RawMessageDelivery bool
	// ContentBasedDeduplication applies to fifo; default true.
	ContentBasedDeduplication bool
	// MessageRetentionPeriod is 60s..336h; default 96h.
	MessageRetentionPeriod time.Duration
	// RedrivePolicy is SQS's native redrive; nil when absent.
	RedrivePolicy *RedrivePolicy
	// Tags are queue tags.
	Tags map[string]string
}

// RedrivePolicy is SQS's native dead-letter redrive.
type RedrivePolicy struct {
	// DeadLetterQueue is the queue name (required).
	DeadLetterQueue string
	// MaxReceiveCount is 1..1000 (required); lint compares it with
	// requeueCount.
	MaxReceiveCount int
}

// Pub/Sub subscription modes.
const (
	GCPModePull   = "pull"
	GCPModeStream = "stream"
)

// GCP is the gcp block (docs/configuration.md#transport-blocks).
type GCP struct {
	// ProjectID defaults to connections.gcp.projectId; required one way or
	// the other.
	ProjectID string
	// Mode is pull or stream (default).
	Mode string
	// AckDeadline is >= 0; default 30s.
	AckDeadline time.Duration
	// EnableMessageOrdering orders by ordering key; default false.
	EnableMessageOrdering bool
	// MaxExtension caps stream lease extension; default 60m.
	MaxExtension time.Duration
	// MaxRequeueDelay is the retry policy's maximum backoff; default 600s.
	// The back-off follows the consumer's own hold of requeueDelay, so a
	// gap between deliveries is at most requeueDelay + MaxRequeueDelay.
	MaxRequeueDelay time.Duration
	// SubscriberMember is an IAM member granted subscriber; optional.
	SubscriberMember string
	// DeadLetterPolicy is Pub/Sub's native dead-lettering; nil when absent.
	// Without one, delivery_attempt is not populated.
	DeadLetterPolicy *DeadLetterPolicy
	// Labels are subscription labels.
	Labels map[string]string
}

// DeadLetterPolicy is Pub/Sub's native dead-letter policy.
type DeadLetterPolicy struct {
	// Topic is the dead-letter topic (required).
	Topic string
	// Subscription is the dead-letter topic's subscription; optional.
	Subscription string
	// MaxDeliveryAttempts is 5..100; default 10 when the key is absent. A
	// file's 0 is stored as GCPDefaultMaxDeliveryAttempts, what Pub/Sub
	// applies for 0. Lint compares it with requeueCount.
	MaxDeliveryAttempts int
	// AckDeadline of the dead-letter subscription, >= 0; default 60s.
	AckDeadline     time.Duration
	PublisherMember string
}

// GCPDefaultMaxDeliveryAttempts is what Pub/Sub applies for a dead-letter
// policy's maxDeliveryAttempts of 0, and the smallest value it accepts.
const GCPDefaultMaxDeliveryAttempts = 5

// RocketMQ is the rocketmq block (docs/configuration.md#transport-blocks).
type RocketMQ struct {
	// ConsumerGroup is required.
	ConsumerGroup string
	// InvisibleDuration is how long a received message stays hidden,
	// > 0; default 30s.
	InvisibleDuration time.Duration
	// Tag is the filter expression; default "*".
	Tag string
	// MaxDeliveryAttempts is the consumer group's maximum delivery
	// attempts on the broker (its retry policy), >= 1;
	// default 16. Lint compares it with requeueCount.
	MaxDeliveryAttempts int
}

// Memory is the memory block: the in-memory transport, for local runs and
// tests.
type Memory struct {
	// Seed is a JSON-lines file of message records loaded at start;
	// resolved against the config file's directory; "" = none.
	Seed string
	// Output is where the remaining messages of every queue are written as
	// JSON lines at stop; resolved like Seed; "" = nowhere.
	Output string
	// StopWhenEmpty stops consume when every queue is empty.
	StopWhenEmpty bool
	// VisibilityTimeout is > 0; default 30s.
	VisibilityTimeout time.Duration
}

// Secrets returns every value of f that the redaction rule must hide
// wherever it appears (docs/security.md): the header values of http
// handlers and the user-info, query values and path of their URLs
// (redact.URLSecrets), the environment values of exec handlers, the
// user-info and query values of connections.aws.endpoint, the RocketMQ
// access and secret keys, and every value a ${VAR} expanded to in a
// handler block or a key field (the ${VAR} values of names, endpoints and
// numbers are shown: see secretField). Values are after ${VAR} expansion, as
// sent. The list is in no particular order; redact.Redactor masks every
// byte any of them covers, whatever the order.
func (f *File) Secrets() []string {
	out := slices.Clone(f.envValues)
	for _, s := range f.Subscriptions {
		h := s.Handler
		for _, v := range h.Headers {
			out = append(out, v)
		}
		for _, v := range h.Env {
			out = append(out, v)
		}
		out = append(out, redact.URLSecrets(h.URL)...)
	}
	out = append(out, redact.URLSecrets(f.Connections.AWS.Endpoint)...)
	rm := f.Connections.RocketMQ
	return append(out, rm.AccessKey, rm.SecretKey)
}

// AsWritten returns text with every value that came from ${VAR} expansion
// replaced by the text the file has for it ("${TOKEN}"): quoted ("s3cret",
// as strconv.Quote writes it) always, and anywhere in text (a suggestion
// such as "s3cret-dlq") when it is at least redact.MinSecret bytes long,
// so that a short value ("1", "sqs") does not rewrite ordinary words.
// Errors and findings that quote a subscription's values never show what
// the environment expanded them to (docs/security.md).
func (f *File) AsWritten(text string) string { return f.written.apply(text) }

// AsWritten is File.AsWritten for text about this subscription.
func (s *Subscription) AsWritten(text string) string { return s.written.apply(text) }

// asWritten maps expanded values to their text in the file.
type asWritten map[string]string

// apply replaces each quoted expanded value in text by its quoted text as
// written, longest first (so a value that contains another is replaced
// whole).
func (w asWritten) apply(text string) string {
	if len(w) == 0 {
		return text
	}
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	for _, k := range keys {
		if len(k) >= redact.MinSecret {
			text = strings.ReplaceAll(text, k, w[k])
			continue
		}
		text = strings.ReplaceAll(text, strconv.Quote(k), strconv.Quote(w[k]))
	}
	return text
}
