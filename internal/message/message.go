package message

import (
	"maps"
	"strconv"
	"time"
)

// Defaults of Brighter's MessageHeader (docs/wire-format.md#message-header).
const (
	// DefaultContentType is the content type of a header that sets none.
	DefaultContentType = "application/json; charset=utf-8"
	// DefaultSource is the CloudEvents source of a header that sets none.
	DefaultSource = "http://goparamore.io"
	// DefaultSpecVersion is the CloudEvents spec version.
	DefaultSpecVersion = "1.0"
)

// Well-known bag keys of Brighter's Message.cs.
const (
	// KeyOriginalMessageID is the bag key that carries the id of the message a
	// copy was made from (x-original-message-id).
	KeyOriginalMessageID = "x-original-message-id"
	// KeyPumpRejectionReason is the PascalCase key Brighter's pump sets on
	// every reject: "Message rejected reason: <Reason> Description: <text>".
	KeyPumpRejectionReason = "RejectionReason"
	// KeyReplayedFrom names the destination a replayed message was read from.
	KeyReplayedFrom = "replayedFrom"
	// KeyReplayedAt is when it was replayed (RFC 3339, UTC).
	KeyReplayedAt = "replayedAt"
)

// Bag is the header's dictionary of extra values (Brighter's
// Dictionary<string, object>). Keys are kept verbatim. Values are strings,
// numbers, booleans or nested JSON values as decoded by encoding/json.
type Bag map[string]any

// String returns the value under key as a string: a string as it is, other
// values in their JSON-ish text form, and "" (false) when the key is absent.
func (b Bag) String(key string) (string, bool) {
	v, ok := b[key]
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "", true
	}
	return "", true
}

// Header is Brighter's MessageHeader with every field of
// docs/wire-format.md#message-header.
type Header struct {
	// MessageID is the message's id (a UUID string when Brighter made it).
	MessageID string
	// Topic is the routing key the message was published to.
	Topic string
	// MessageType is the kind of message.
	MessageType MessageType
	// HandledCount is the delivery count presented to the handler
	// (requirements Group A): 0 on the first delivery, one more on each
	// redelivery. On the wire it is the count stamped when the message
	// was stored.
	HandledCount int
	// Timestamp is when the message was created (UTC).
	Timestamp time.Time
	// CorrelationID links a message to a conversation.
	CorrelationID string
	// ReplyTo is the routing key for a reply.
	ReplyTo string
	// ContentType is the MIME type of the body.
	ContentType string
	// PartitionKey orders messages: the SQS FIFO group id, the Pub/Sub
	// ordering key, the RocketMQ message group.
	PartitionKey string
	// Delay is how long the broker should hold the message before delivery.
	Delay time.Duration
	// Source is the CloudEvents source URI.
	Source string
	// Type is the CloudEvents type.
	Type string
	// SpecVersion is the CloudEvents spec version.
	SpecVersion string
	// DataSchema is the CloudEvents dataschema URI.
	DataSchema string
	// Subject is the CloudEvents subject.
	Subject string
	// DataRef is the CloudEvents dataref.
	DataRef string
	// TraceParent is the W3C traceparent.
	TraceParent string
	// TraceState is the W3C tracestate.
	TraceState string
	// Baggage is W3C baggage, "k=v,k2=v2".
	Baggage string
	// Bag carries every other value, including the rejection metadata.
	Bag Bag
}

// Message is a header and a body, plus the transport's receipt for a
// received message.
type Message struct {
	// Header is the message header.
	Header Header
	// Body is the payload, as bytes.
	Body []byte
	// Receipt is the transport's opaque handle for settling a received message
	// (an SQS receipt handle, a Pub/Sub ack id, a RocketMQ message view). It
	// is nil on a message that was not received, and it is never copied to a
	// routed or replayed message.
	Receipt any
	// DeliveryAttempt is the broker's own delivery counter for this receive
	// (1 on the first delivery; 0 when the broker gives none). It is
	// information only: Header.HandledCount is the presented count. The
	// pump judges a routed copy's redelivery budget on it (R-11, R-28;
	// docs/adr/0001 §9).
	DeliveryAttempt int
	// Undecodable says why a received message could not be decoded: the
	// field and the problem (for example `bag: not a JSON object`). A
	// consumer sets it together with MessageType MT_UNACCEPTABLE; the pump
	// routes the message as Unacceptable with it as the rejection
	// description. "" for a message that decoded. Never copied by Clone.
	Undecodable string
	// ReceivedAt is when the broker handed the message to this process: set
	// by a consumer that buffers deliveries before Receive returns them (the
	// Pub/Sub stream), else by the pump when Receive returns. The pump's
	// per-key hold-back compares it with the time an earlier message of the
	// same partition key was released unsettled
	// (docs/adr/0006-ordered-channels-under-deferral.md). Zero on a message
	// that was not received; never copied by Clone.
	ReceivedAt time.Time
	// WireMessageType is the message type exactly as received when the
	// decoder did not take it (a local type such as MT_QUIT, or text it could
	// not read); Stamp writes it as originalMessageType so the
	// invalid-message copy says what the sender wrote. "" otherwise.
	WireMessageType string
	// StoredID is the broker's own id of the stored copy this receive
	// delivered (the SQS MessageId, the Pub/Sub message id, the RocketMQ
	// message id, the memory broker's entry number): two copies with the
	// same Header.MessageID (a message restored twice) have different
	// StoredIDs, two receives of one copy the same. "" on a message that
	// was not received or whose transport gives none; never copied by Clone.
	StoredID string
}

// New makes a message with Brighter's header defaults: the given id, topic and
// type, the current time, the default content type, source and spec version,
// and an empty bag.
func New(id, topic string, mt MessageType, body []byte) *Message {
	return &Message{
		Header: Header{
			MessageID:   id,
			Topic:       topic,
			MessageType: mt,
			Timestamp:   time.Now().UTC(),
			ContentType: DefaultContentType,
			Source:      DefaultSource,
			SpecVersion: DefaultSpecVersion,
			Bag:         Bag{},
		},
		Body: body,
	}
}

// Clone returns a deep copy of the header and bag, sharing the body bytes,
// WITHOUT the receipt: a clone is for publishing, never for settling.
func (m *Message) Clone() *Message {
	c := &Message{Header: m.Header, Body: m.Body, DeliveryAttempt: m.DeliveryAttempt}
	c.Header.Bag = maps.Clone(m.Header.Bag)
	if c.Header.Bag == nil {
		c.Header.Bag = Bag{}
	}
	return c
}

// OriginalID is the id a message's dispatches are counted under: the
// x-original-message-id bag value when present, else the message id.
func (m *Message) OriginalID() string {
	if s, ok := m.Header.Bag.String(KeyOriginalMessageID); ok && s != "" {
		return s
	}
	return m.Header.MessageID
}

// MarkUndecodable presents m as a message its consumer could not decode:
// MessageType MT_UNACCEPTABLE and why in Undecodable, so the pump routes it
// as Unacceptable. The type m had been read as is kept in
// WireMessageType (unless the decoder already put the unreadable text there),
// so the routed copy's originalMessageType says what the message carried, not
// MT_UNACCEPTABLE.
func (m *Message) MarkUndecodable(why string) {
	if m.WireMessageType == "" && m.Header.MessageType != MTUnacceptable {
		m.WireMessageType = m.Header.MessageType.String()
	}
	m.Header.MessageType = MTUnacceptable
	m.Undecodable = why
}
