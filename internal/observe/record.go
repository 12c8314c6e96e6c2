package observe

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/pump"
	"github.com/brightergo/brighter/internal/redact"
)

// Record kinds that are not pump event kinds (pump kinds use
// pump.EventKind.String(): "received", "acknowledged", "deferred",
// "budget-exhausted", "rejected", "settle-failed", "channel-failure",
// "stalled", "channel-recovered", "started", "stopped", ...).
const (
	// KindSubscription describes a subscription: Info is set. The stream
	// sends one per subscription to every new reader first.
	KindSubscription = "subscription"
	// KindDLQDepth reports the dead-letter queue's depth: Depth is set.
	KindDLQDepth = "dlq-depth"
	// KindDropped tells a reader how many records it missed because it read
	// too slowly: Dropped is set.
	KindDropped = "dropped"
	// KindLog is a Warn or Error log line of the consumer (the
	// dashboard shows them): Level, Text and Attrs are set, Subscription
	// and MessageID when the line names them.
	KindLog = "log"
	// KindConnecting says that the consumer, before any pump runs, is
	// opening the channel of Subscription (from Since), those of Opened
	// being open already; the other subscriptions wait for it (channels
	// open in turn). Budget is Subscription's, so a reader that knows no
	// such kind and reads its budget from any record with a subscription
	// keeps the right one. A reader that connects while the consumer opens
	// its channels receives the latest first, after the descriptions.
	KindConnecting = "connecting"
	// KindConnected says that every channel is open and the pumps start;
	// it names no subscription. It ends the KindConnecting records.
	KindConnected = "connected"
)

// BodyPreviewBytes is the most of a message body a record carries.
const BodyPreviewBytes = 256

// Record is one line of /events: a pump event, a subscription description,
// a DLQ depth or a drop notice. Fields not relevant to a kind are omitted.
// It is the stable wire format between `consume --listen` and
// `brighter watch`.
type Record struct {
	// Kind is a pump event kind (pump.EventKind.String()) or one of
	// KindSubscription, KindDLQDepth, KindDropped, KindLog, KindConnecting,
	// KindConnected.
	Kind string `json:"kind"`
	// Time is when it happened (UTC, RFC 3339 with nanoseconds).
	Time time.Time `json:"time"`
	// Subscription is the subscription's name.
	Subscription string `json:"subscription,omitempty"`
	// MessageID is the message's id.
	MessageID string `json:"messageId,omitempty"`
	// DeliveryCount is the message's delivery count (R-1..R-4): presented
	// on received, incremented on deferred and budget-exhausted.
	DeliveryCount int `json:"deliveryCount"`
	// Budget is the subscription's requeueCount (-1 = unlimited).
	Budget int `json:"budget"`
	// Outcome is the handler's outcome: ack, defer, reject, unacceptable.
	Outcome string `json:"outcome,omitempty"`
	// Reason is the rejection reason (DeliveryError, Unacceptable, ...).
	Reason string `json:"reason,omitempty"`
	// Description is the rejection message written on the routed copy.
	Description string `json:"description,omitempty"`
	// Route is where a rejection went: dead-letter, invalid-message, none.
	Route string `json:"route,omitempty"`
	// Destination is the routing key of the route.
	Destination string `json:"destination,omitempty"`
	// DelayMS is a Defer's requeue delay in milliseconds.
	DelayMS int64 `json:"delayMs,omitempty"`
	// DurationMS is how long the handler took, in milliseconds.
	DurationMS float64 `json:"durationMs,omitempty"`
	// Error is the failure's text, if any.
	Error string `json:"error,omitempty"`
	// RoutingRetry is set on a rejected record that retries, without a
	// handler run, the routing of a message whose earlier routing here
	// failed (pump.Event.Retry): the message was counted once already.
	RoutingRetry bool `json:"routingRetry,omitempty"`
	// AckRetry is set on an acknowledged, settle-failed or stale-settle
	// record of an acknowledgement retried without a handler run: the
	// handler acknowledged an earlier delivery of the message here and
	// that acknowledgement failed, or was still waiting for its answer
	// (pump.Event.Retry; pump.Event.AckWaiting tells which).
	AckRetry bool `json:"ackRetry,omitempty"`
	// Message carries header, bag and a body preview on received and
	// rejected records. On a record made by FromEvent it is nil and the
	// detail is built on first use by Detail (and by MarshalJSON), on the
	// reader's goroutine, not the pump's.
	Message *MessageDetail `json:"message,omitempty"`
	// lazy builds Message from the event's message once, when first read.
	lazy *lazyDetail
	// Info describes the subscription on KindSubscription records.
	Info *SubscriptionInfo `json:"info,omitempty"`
	// Depth is the number of messages on the dead-letter queue
	// (KindDLQDepth); approximate where the broker says so (SQS).
	Depth int64 `json:"depth,omitempty"`
	// Dropped is how many records this reader missed (KindDropped).
	Dropped uint64 `json:"dropped,omitempty"`
	// Since is when the channel began failing and Failures how many broker
	// calls in a row have failed since (channel-failure, stalled,
	// channel-recovered), so a dashboard that connects during a
	// failure says since when. On KindConnecting Since is when the opening
	// of Subscription's channel began.
	Since    time.Time `json:"since,omitzero"`
	Failures int       `json:"failures,omitempty"`
	// Opened names the subscriptions whose channels are open already
	// (KindConnecting), in the order they were opened.
	Opened []string `json:"opened,omitempty"`
	// Level ("WARN", "ERROR"), Text (the stable message text) and Attrs
	// (the line's attributes, in order, but for subscription and
	// message_id, which are in their own fields) describe a KindLog record.
	Level string    `json:"level,omitempty"`
	Text  string    `json:"text,omitempty"`
	Attrs []LogAttr `json:"attrs,omitempty"`
}

// LogAttr is one attribute of a KindLog record; Key is dotted under its
// groups ("request.status").
type LogAttr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MessageDetail is what the dashboard's details view shows of a message.
type MessageDetail struct {
	Topic         string `json:"topic,omitempty"`
	MessageType   string `json:"messageType,omitempty"`
	CorrelationID string `json:"correlationId,omitempty"`
	ContentType   string `json:"contentType,omitempty"`
	PartitionKey  string `json:"partitionKey,omitempty"`
	TraceParent   string `json:"traceparent,omitempty"`
	// Bag is a shallow copy of the header bag (rejection metadata included).
	Bag map[string]any `json:"bag,omitempty"`
	// BodyPreview is the body's first BodyPreviewBytes bytes, cut at a rune
	// boundary; BodySize is the body's full size in bytes.
	BodyPreview string `json:"bodyPreview,omitempty"`
	BodySize    int    `json:"bodySize"`
}

// SubscriptionInfo describes a subscription's budget for the dashboard.
type SubscriptionInfo struct {
	// Transport is sqs, gcp, rocketmq or memory.
	Transport string `json:"transport"`
	// Budget is requeueCount, R (-1 = unlimited).
	Budget int `json:"budget"`
	// NativeLimit is the broker's own redrive limit, M (SQS
	// maxReceiveCount, Pub/Sub maxDeliveryAttempts, RocketMQ
	// maxDeliveryAttempts); 0 when there is none.
	NativeLimit int `json:"nativeLimit"`
	// EffectiveLimit is the delivery count at which a poison message
	// leaves the queue: the smaller of R and M where both apply; -1 when
	// neither does.
	EffectiveLimit int `json:"effectiveLimit"`
	// DeadLetter is deadLetterRoutingKey ("" = none).
	DeadLetter string `json:"deadLetter,omitempty"`
}

// EffectiveLimit returns the delivery count at which a poison message leaves
// its queue: min(budget, native) over the limits that apply (budget -1 and
// native 0 do not); -1 when none does.
func EffectiveLimit(budget, native int) int {
	switch {
	case budget < 0 && native <= 0:
		return -1
	case budget < 0:
		return native
	case native <= 0:
		return budget
	}
	return min(budget, native)
}

// FromEvent converts a pump event to its record. It copies what it needs
// from e.Message, so the record may outlive the call. The description and
// error pass the URL rule (redact.Text); FromEventRedacted masks a run's
// secrets too.
func FromEvent(e pump.Event) Record { return FromEventRedacted(e, nil) }

// FromEventRedacted is FromEvent with the record's description and error
// passed through red (red.String: its secrets masked, then the URL rule),
// so that a record shows no secret the run knows, whoever wrote the text
// (a handler, a transport's error). A nil red applies the URL rule only.
func FromEventRedacted(e pump.Event, red *redact.Redactor) Record {
	r := Record{
		Kind:          e.Kind.String(),
		Time:          e.Time.UTC(),
		Subscription:  e.Subscription,
		MessageID:     e.MessageID(),
		DeliveryCount: e.DeliveryCount,
		Budget:        e.Budget,
		Route:         string(e.Route),
		Destination:   e.Destination,
		DelayMS:       e.Delay.Milliseconds(),
		DurationMS:    float64(e.Duration) / float64(time.Millisecond),
		Description:   red.String(e.Description),
		Failures:      e.Failures,
	}
	if !e.Since.IsZero() {
		r.Since = e.Since.UTC()
	}
	switch e.Kind {
	case pump.EventAcknowledged, pump.EventDeferred, pump.EventBudgetExhausted, pump.EventRejected, pump.EventSettleFailed:
		r.Outcome = e.Outcome.String()
	}
	if e.Kind == pump.EventRejected {
		r.Reason = e.Reason.String()
		r.RoutingRetry = e.Retry
	} else {
		r.AckRetry = e.Retry
	}
	if e.Err != nil {
		r.Error = red.String(e.Err.Error())
	}
	if e.Message != nil && (e.Kind == pump.EventReceived || e.Kind == pump.EventRejected) {
		// Defer the detail to the reader: the pump and transports never
		// modify the header fields, bag or body a detail reads once the
		// message has been received (the pump changes only HandledCount), so
		// reading them later is safe; it keeps the observer cheap on the
		// pump's goroutine (per-message observation must not slow the pump).
		r.lazy = &lazyDetail{src: e.Message}
	}
	return r
}

// lazyDetail builds a MessageDetail once, on first use.
type lazyDetail struct {
	once sync.Once
	src  *message.Message
	d    *MessageDetail
}

func (l *lazyDetail) get() *MessageDetail {
	l.once.Do(func() {
		l.d = detailOf(l.src)
		l.src = nil
	})
	return l.d
}

// Detail returns the record's message detail: Message when set, else the
// detail built once from the event's message; nil when the record has none.
// It is safe for concurrent use by the stream's readers.
func (r *Record) Detail() *MessageDetail {
	if r.Message != nil || r.lazy == nil {
		return r.Message
	}
	return r.lazy.get()
}

// MarshalJSON writes the record with its message detail filled in.
func (r *Record) MarshalJSON() ([]byte, error) {
	var w wireRecord
	r.toWire(&w)
	return json.Marshal(&w)
}

// wireRecord is Record without its methods, so encoding/json writes its
// fields directly (no MarshalJSON call, no re-scan of the output).
type wireRecord Record

// toWire copies r into w with its message detail filled in, ready to
// encode; a writer reuses one w for every record.
func (r *Record) toWire(w *wireRecord) {
	*w = wireRecord(*r)
	w.Message = r.Detail()
	w.lazy = nil
}

func detailOf(m *message.Message) *MessageDetail {
	h := &m.Header
	d := &MessageDetail{
		Topic: h.Topic, MessageType: h.MessageType.String(), CorrelationID: h.CorrelationID,
		ContentType: h.ContentType, PartitionKey: h.PartitionKey, TraceParent: h.TraceParent,
		BodySize: len(m.Body), BodyPreview: preview(m.Body),
	}
	if len(h.Bag) > 0 {
		d.Bag = make(map[string]any, len(h.Bag))
		for k, v := range h.Bag {
			d.Bag[k] = v
		}
	}
	return d
}

// preview returns the first BodyPreviewBytes of b as text, cut at a rune
// boundary, with invalid UTF-8 replaced.
func preview(b []byte) string {
	if len(b) > BodyPreviewBytes {
		b = b[:BodyPreviewBytes]
		for len(b) > 0 && !utf8.Valid(b) && len(b) > BodyPreviewBytes-utf8.UTFMax {
			b = b[:len(b)-1]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
