package gcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/message"
)

// Attribute names of Brighter's Pub/Sub wire format
// (docs/wire-format.md#pubsub). They are case-sensitive on send; on receive a
// foreign attribute is compared with them case-insensitively.
const (
	AttrMessageType   = "MessageType"
	AttrCorrelationID = "CorrelationId"
	AttrTopic         = "Topic"
	AttrHandledCount  = "HandledCount"
	AttrReplyTo       = "ReplyTo"
	AttrID            = "ce-id"
	AttrContentType   = "ce-datacontenttype"
	AttrTime          = "ce-time"
	AttrSubject       = "ce-subject"
	AttrSpecVersion   = "ce-specversion"
	AttrType          = "ce-type"
	AttrSource        = "ce-source"
	AttrDataSchema    = "ce-dataschema"
	AttrTraceParent   = "ce-traceparent"
	AttrTraceState    = "ce-tracestate"
	AttrBaggage       = "ce-baggage"
)

// ReceiptHandleKey is the bag key .NET Brighter keeps the ack id under. It is
// never sent (a routed copy must not carry a stale ack id, R-18) and never
// read back into the bag.
const ReceiptHandleKey = "ReceiptHandle"

// DefaultReceivedContentType is the content type of a received message that
// carries no ce-datacontenttype (Brighter's Parser uses text/plain).
const DefaultReceivedContentType = "text/plain"

// headerAttrs are the 16 attributes read into header fields, lower-cased.
var headerAttrs = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{AttrMessageType, AttrCorrelationID, AttrTopic, AttrHandledCount, AttrReplyTo,
		AttrID, AttrContentType, AttrTime, AttrSubject, AttrSpecVersion, AttrType, AttrSource,
		AttrDataSchema, AttrTraceParent, AttrTraceState, AttrBaggage} {
		m[strings.ToLower(k)] = true
	}
	return m
}()

// isReserved reports whether an attribute or bag key is one of the header
// attributes (case-insensitively) or the receipt-handle key. An ASCII key
// of up to reservedKeyMax bytes is lower-cased on the stack (every reserved
// name is ASCII and shorter), so a received attribute costs no allocation;
// any other key is lower-cased by strings.ToLower, whose Unicode case
// mapping decides as before.
func isReserved(key string) bool {
	if len(key) <= reservedKeyMax {
		var buf [reservedKeyMax]byte
		ascii := true
		for i := 0; i < len(key); i++ {
			c := key[i]
			if c >= utf8.RuneSelf {
				ascii = false
				break
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if ascii {
			// The conversion in the index expression does not allocate.
			return headerAttrs[string(buf[:len(key)])] || string(buf[:len(key)]) == receiptHandleLower
		}
	}
	return headerAttrs[strings.ToLower(key)] || strings.EqualFold(key, ReceiptHandleKey)
}

// reservedKeyMax bounds the keys isReserved lower-cases on the stack: longer
// than every reserved name, so a longer ASCII key is never reserved but is
// still checked the general way.
const reservedKeyMax = 32

// receiptHandleLower is ReceiptHandleKey lower-cased.
var receiptHandleLower = strings.ToLower(ReceiptHandleKey)

// Wire is one Pub/Sub message as it travels: what Encode produces for a
// publish and what Decode reads from a pull or a stream. ID and PublishTime
// are set by the service and ignored by Encode.
type Wire struct {
	// ID is the Pub/Sub message id (set by the service).
	ID string
	// Data is the body bytes.
	Data []byte
	// Attributes are the message attributes.
	Attributes map[string]string
	// OrderingKey is the ordering key ("" for none).
	OrderingKey string
}

// Encode writes m in Brighter's Pub/Sub wire format (docs/wire-format.md#pubsub): data
// is the body; ce-id, Topic, HandledCount, MessageType, ce-specversion,
// ce-source, ce-time (RFC 3339 with milliseconds), ce-datacontenttype and
// ce-baggage always; ce-type, CorrelationId, ReplyTo, ce-subject,
// ce-dataschema, ce-traceparent and ce-tracestate when not empty; every bag
// entry whose key is not a header attribute (compared case-insensitively) nor
// ReceiptHandle becomes its own attribute, its value as text (strings as they
// are, numbers in shortest form, booleans as .NET writes them, "True" /
// "False", anything else as JSON). The ordering key is the partition key.
func Encode(m *message.Message) Wire {
	h := &m.Header
	a := make(map[string]string, 16+len(h.Bag))
	for k, v := range h.Bag {
		if isReserved(k) {
			continue
		}
		a[k] = bagText(v)
	}
	a[AttrID] = h.MessageID
	a[AttrTopic] = h.Topic
	a[AttrHandledCount] = strconv.Itoa(message.ClampStamp(h.HandledCount))
	a[AttrMessageType] = h.MessageType.String()
	a[AttrSpecVersion] = orDefault(h.SpecVersion, message.DefaultSpecVersion)
	a[AttrSource] = orDefault(h.Source, message.DefaultSource)
	ts := h.Timestamp
	if ts.IsZero() {
		ts = time.Unix(0, 0)
	}
	a[AttrTime] = message.FormatWireTime(ts)
	a[AttrContentType] = h.ContentType
	a[AttrBaggage] = h.Baggage
	for k, v := range map[string]string{AttrType: h.Type, AttrCorrelationID: h.CorrelationID, AttrReplyTo: h.ReplyTo,
		AttrSubject: h.Subject, AttrDataSchema: h.DataSchema, AttrTraceParent: h.TraceParent, AttrTraceState: h.TraceState} {
		if v != "" {
			a[k] = v
		}
	}
	return Wire{Data: m.Body, Attributes: a, OrderingKey: h.PartitionKey}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func bagText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case fmt.Stringer:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Errors of Decode; a message that fails to decode is presented as
// MT_UNACCEPTABLE (see DecodeOrFailure).
var (
	// ErrBadHandledCount means the HandledCount attribute is not a whole
	// number in 0..message.HandledCountLimit-1 (message.ErrBadHandledCount).
	ErrBadHandledCount = message.ErrBadHandledCount
	// ErrLocalMessageType means the MessageType attribute names a local-only
	// type (MT_NONE, MT_QUIT) that a sender never writes (message.ErrLocalMessageType).
	ErrLocalMessageType = message.ErrLocalMessageType
	// ErrBadBaggage means ce-baggage has an entry without '=' (Brighter's
	// LoadBaggage throws on it).
	ErrBadBaggage = errors.New("ce-baggage has an entry without '='")
)

// Decode reads a Pub/Sub message in Brighter's wire format (docs/wire-format.md#pubsub)
// into a message whose HandledCount is the STAMPED count (count.go applies
// the delivery attempt). Defaults follow Brighter's Parser: id from ce-id,
// else the Pub/Sub message id; content type text/plain; an unknown or missing
// MessageType is MT_EVENT; an unparseable ce-time is the zero time replaced
// by now (the caller's clock, given as now). Every attribute that is not a
// header attribute (case-insensitively) nor ReceiptHandle goes into the bag
// as a string. The partition key is the ordering key.
//
// It returns an error (wrapping ErrBadHandledCount, ErrLocalMessageType or
// ErrBadBaggage) for a message Brighter could not parse or that would
// misdirect the pump; the message returned alongside is still filled as far
// as possible so the caller can present it as MT_UNACCEPTABLE.
func Decode(w Wire, now time.Time) (*message.Message, error) {
	m := &message.Message{Body: w.Data}
	h := &m.Header
	h.Bag = message.Bag{}
	// One pass over the attributes: each header attribute (its exact name)
	// is kept for below, every other attribute that is not a header name in
	// another case nor ReceiptHandle goes into the bag.
	var id, handled, mtype, ctype, ts, source, spec, baggage string
	var hasHandled, hasType bool
	for k, v := range w.Attributes {
		switch k {
		case AttrID:
			id = v
		case AttrTopic:
			h.Topic = v
		case AttrHandledCount:
			handled, hasHandled = v, true
		case AttrMessageType:
			mtype, hasType = v, true
		case AttrContentType:
			ctype = v
		case AttrTime:
			ts = v
		case AttrSource:
			source = v
		case AttrSpecVersion:
			spec = v
		case AttrCorrelationID:
			h.CorrelationID = v
		case AttrReplyTo:
			h.ReplyTo = v
		case AttrSubject:
			h.Subject = v
		case AttrType:
			h.Type = v
		case AttrDataSchema:
			h.DataSchema = v
		case AttrTraceParent:
			h.TraceParent = v
		case AttrTraceState:
			h.TraceState = v
		case AttrBaggage:
			baggage = v
		default:
			if !isReserved(k) {
				h.Bag[k] = v
			}
		}
	}
	if id == "" {
		id = w.ID
	}
	h.MessageID = id
	h.MessageType = message.MTEvent
	h.ContentType = DefaultReceivedContentType
	h.Source = message.DefaultSource
	h.SpecVersion = message.DefaultSpecVersion
	h.Timestamp = now.UTC()
	h.PartitionKey = w.OrderingKey
	var errs []error
	if hasHandled && handled != "" {
		n, err := message.ParseHandledCount(handled)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s attribute: %w", AttrHandledCount, err))
			// Keep the value: the invalid-message copy says what came
			// (an attribute of that name, in the bag already, wins).
			if _, ok := h.Bag[AttrHandledCount+"Received"]; !ok {
				h.Bag[AttrHandledCount+"Received"] = handled
			}
		} else {
			h.HandledCount = n
		}
	}
	if hasType {
		mt, err := message.ParseWireMessageType(mtype)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s attribute: %w", AttrMessageType, err))
			m.WireMessageType = mtype
		}
		h.MessageType = mt
	}
	if ctype != "" {
		h.ContentType = ctype
	}
	if ts != "" {
		if t, ok := message.ParseWireTime(ts); ok {
			h.Timestamp = t
		}
	}
	if source != "" {
		h.Source = source
	}
	if spec != "" {
		h.SpecVersion = spec
	}
	if baggage != "" {
		if err := checkBaggage(baggage); err != nil {
			errs = append(errs, fmt.Errorf("%s attribute: %w", AttrBaggage, err))
		} else {
			h.Baggage = baggage
		}
	}
	if len(errs) > 0 {
		return m, fmt.Errorf("decode Pub/Sub message %s: %w", id, errors.Join(errs...))
	}
	return m, nil
}

func checkBaggage(s string) error {
	for rest, more := s, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",")
		if strings.TrimSpace(part) == "" {
			continue
		}
		if !strings.Contains(part, "=") {
			return fmt.Errorf("%w: %q", ErrBadBaggage, part)
		}
	}
	return nil
}

// DecodeOrFailure decodes w; when Decode fails it returns the partly decoded
// message with MessageType MT_UNACCEPTABLE (never nil, never dropped; its id,
// every attribute that is not a header in the bag, the received type text in
// WireMessageType, the attribute and the problem in Undecodable) and the
// error, so the consumer can hand it to the pump to reject as Unacceptable.
func DecodeOrFailure(w Wire, now time.Time) (*message.Message, error) {
	m, err := Decode(w, now)
	if err != nil {
		m.MarkUndecodable(strings.ReplaceAll(strings.TrimPrefix(err.Error(), "decode Pub/Sub message "+m.Header.MessageID+": "), "\n", "; "))
	}
	return m, err
}
