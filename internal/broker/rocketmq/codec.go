package rocketmq

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"

	"github.com/brightergo/brighter/internal/message"
)

// Property names of Brighter's RocketMQ wire format
// (docs/wire-format.md#rocketmq), case-sensitive.
const (
	PropMessageType   = "MessageType"
	PropID            = "CE_id"
	PropCorrelationID = "CorrelationId"
	PropTopic         = "Topic"
	PropHandledCount  = "HandledCount"
	PropTime          = "CE_time"
	PropSubject       = "CE_subject"
	PropReplyTo       = "ReplyTo"
	PropContentType   = "Content-Type"
	PropCEContentType = "CE_contenttype"
	PropSource        = "CE_source"
	PropSpecVersion   = "CE_specversion"
	PropType          = "CE_type"
	PropDataSchema    = "CE_dataschema"
	PropDataRef       = "CE_dataref"
	PropTraceParent   = "CE_traceparent"
	PropTraceState    = "CE_tracestate"
	PropBaggage       = "CE_baggage"
	// PropDelay carries Header.Delay in whole milliseconds. Brighter has no
	// delay property and reads its Delayed from HandledCount (the ReadDelay
	// defect, docs/wire-format.md#rocketmq); this transport writes and reads its own.
	PropDelay = "Delayed"
)

// Bag keys that steer the native message instead of travelling as
// properties (docs/wire-format.md#rocketmq).
const (
	// BagKeys holds the message keys: a string or a list of strings. Without
	// it the key is the message id.
	BagKeys = "Brighter-RocketMQ-Keys"
	// BagTag holds the message tag (a string). Without it the producer's
	// default tag applies.
	BagTag = "Brighter-RocketMQ-Tag"
)

// receivedContentType is the content type of a received message that names
// none (Brighter reads "plain/text", a typo this transport does not copy).
const receivedContentType = "text/plain"

// reserved lists every property that maps to a header field; such names never
// land in the bag on receive and a bag entry with such a name is not sent.
var reserved = map[string]bool{
	PropMessageType: true, PropID: true, PropCorrelationID: true, PropTopic: true, PropHandledCount: true,
	PropTime: true, PropSubject: true, PropReplyTo: true, PropContentType: true, PropCEContentType: true,
	PropSource: true, PropSpecVersion: true, PropType: true, PropDataSchema: true, PropDataRef: true,
	PropTraceParent: true, PropTraceState: true, PropBaggage: true, PropDelay: true,
}

// Wire is a RocketMQ message as the codec sees it: what a MessageView gives
// on receive, or what an rmq.Message carries on send.
type Wire struct {
	// Topic is the broker topic.
	Topic string
	// MessageID is the broker's (client-made) message id.
	MessageID string
	// Tag is the message tag, "" for none.
	Tag string
	// Keys are the message keys.
	Keys []string
	// MessageGroup is the FIFO message group, "" for none.
	MessageGroup string
	// Properties are the user properties.
	Properties map[string]string
	// Body is the payload.
	Body []byte
	// DeliveryTimestamp is the scheduled delivery time, zero for none.
	DeliveryTimestamp time.Time
}

// WireFromView copies what the codec needs out of a received MessageView.
func WireFromView(mv *rmq.MessageView) Wire {
	w := Wire{Topic: mv.GetTopic(), MessageID: mv.GetMessageId(), Keys: mv.GetKeys(), Properties: mv.GetProperties(), Body: mv.GetBody()}
	if t := mv.GetTag(); t != nil {
		w.Tag = *t
	}
	if g := mv.GetMessageGroup(); g != nil {
		w.MessageGroup = *g
	}
	if d := mv.GetDeliveryTimestamp(); d != nil {
		w.DeliveryTimestamp = *d
	}
	return w
}

// WireFromMessage copies an outgoing rmq.Message (for tests and for `brighter
// send --dry-run`). MessageID is empty: the client makes it at send.
func WireFromMessage(m *rmq.Message) Wire {
	w := Wire{Topic: m.Topic, Keys: m.GetKeys(), Properties: maps.Clone(m.GetProperties()), Body: m.Body}
	if t := m.GetTag(); t != nil {
		w.Tag = *t
	}
	if g := m.GetMessageGroup(); g != nil {
		w.MessageGroup = *g
	}
	if d := m.GetDeliveryTimestamp(); d != nil {
		w.DeliveryTimestamp = *d
	}
	return w
}

// Encode builds the RocketMQ message for m on topic in Brighter's wire format
// (docs/wire-format.md#rocketmq): the header properties (an empty optional value is left
// out), then every bag entry except the two steering keys as text (a bag entry
// named like a header property is dropped, so the stamped HandledCount can
// never be overwritten), keys from BagKeys else the message id, the tag from
// BagTag else defaultTag, the message group from PartitionKey, and a delivery
// timestamp now+Delay for a delayed message without a message group (RocketMQ
// has no delayed FIFO messages; the delay is still carried in PropDelay). It
// never fails: a bag value that is not text is written as JSON.
func Encode(m *message.Message, topic, defaultTag string, now time.Time) *rmq.Message {
	h := &m.Header
	out := &rmq.Message{Topic: topic, Body: m.Body}
	put := func(k, v string) {
		if v != "" {
			out.AddProperty(k, v)
		}
	}
	put(PropID, h.MessageID)
	put(PropTopic, h.Topic)
	put(PropHandledCount, strconv.Itoa(message.ClampStamp(h.HandledCount)))
	put(PropMessageType, h.MessageType.String())
	ts := h.Timestamp
	if ts.IsZero() {
		ts = now
	}
	put(PropTime, message.FormatWireTime(ts))
	put(PropSource, h.Source)
	put(PropSpecVersion, h.SpecVersion)
	put(PropBaggage, h.Baggage)
	put(PropType, h.Type)
	put(PropSubject, h.Subject)
	put(PropDataSchema, h.DataSchema)
	put(PropContentType, h.ContentType)
	put(PropCEContentType, h.ContentType)
	put(PropCorrelationID, h.CorrelationID)
	put(PropReplyTo, h.ReplyTo)
	put(PropDataRef, h.DataRef)
	put(PropTraceParent, h.TraceParent)
	put(PropTraceState, h.TraceState)
	if h.Delay > 0 {
		put(PropDelay, strconv.FormatInt(h.Delay.Milliseconds(), 10))
	}
	for _, k := range slices.Sorted(maps.Keys(h.Bag)) {
		if k == BagKeys || k == BagTag || reserved[k] || k == "" {
			continue
		}
		put(k, bagText(h.Bag[k]))
	}
	if keys := bagKeys(h.Bag[BagKeys]); len(keys) > 0 {
		out.SetKeys(keys...)
	} else if h.MessageID != "" {
		out.SetKeys(h.MessageID)
	}
	tag := defaultTag
	if s, ok := h.Bag[BagTag].(string); ok && s != "" {
		tag = s
	}
	if tag != "" {
		out.SetTag(tag)
	}
	if h.PartitionKey != "" {
		out.SetMessageGroup(h.PartitionKey)
	} else if h.Delay > 0 {
		out.SetDelayTimestamp(now.Add(h.Delay))
	}
	return out
}

// bagText renders a bag value as Brighter's value.ToString() would for text
// and numbers, and as JSON for anything else.
func bagText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64, int, int64, bool:
		s, _ := message.Bag{"v": x}.String("v")
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// bagKeys reads BagKeys: a string, a []string or a JSON list of strings.
func bagKeys(v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" {
			return []string{x}
		}
	case []string:
		return slices.DeleteFunc(slices.Clone(x), func(s string) bool { return s == "" })
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Errors Decode returns (wrapped with the property and value).
var (
	// ErrBadProperty means a Brighter property holds a value it cannot
	// hold (a HandledCount that is not a whole number below
	// message.HandledCountLimit, a Delayed that is not a non-negative
	// integer of at most a year).
	ErrBadProperty = errors.New("malformed property")
	// ErrLocalMessageType means the wire names a message type that is never
	// sent (MT_NONE, MT_QUIT: message.ErrLocalMessageType); taking it at its word would
	// stop the pump or hide the message.
	ErrLocalMessageType = message.ErrLocalMessageType
)

// Decode reads a received message in Brighter's wire format
// (docs/wire-format.md#rocketmq): topic = the broker topic; id = CE_id, else
// the broker id; timestamp = CE_time, else the delivery timestamp, else now;
// message type read case-insensitively with Brighter's MT_EVENT fallback;
// content type CE_contenttype, else Content-Type, else text/plain;
// HandledCount as stamped (the presented count is applied by the consumer, see
// DeliveryCount); partition key = message group; Delay from PropDelay (not
// from HandledCount). Every property that is not a header field goes to the
// bag, and so do the tag (BagTag) and keys other than the bare message id
// (BagKeys), so a routed or replayed copy keeps its steering.
//
// It returns an error wrapping ErrBadProperty or ErrLocalMessageType for a
// message that cannot be taken as Brighter's. The message is then still
// returned, decoded as far as it goes, as MT_UNACCEPTABLE: its id, every
// readable property, the received type text in WireMessageType and each
// property with its problem in Undecodable, so the consumer can
// hand it to the pump to route. The message is never nil.
func Decode(w Wire, now time.Time) (*message.Message, error) {
	p := w.Properties
	id := p[PropID]
	if id == "" {
		id = w.MessageID
	}
	m := &message.Message{Body: w.Body}
	h := &m.Header
	h.MessageID, h.Topic, h.PartitionKey = id, w.Topic, w.MessageGroup
	h.MessageType = message.MTEvent
	h.Bag = bagOf(w, id)
	var problems []string
	var errs []error
	if s, ok := p[PropMessageType]; ok && s != "" {
		// Brighter's RocketMQ reader ignores case (docs/wire-format.md#message-header).
		mt, err := message.ParseWireMessageType(strings.ToUpper(strings.TrimSpace(s)))
		if err != nil {
			problems = append(problems, PropMessageType+": "+err.Error())
			errs = append(errs, err)
			m.WireMessageType = s
		}
		h.MessageType = mt
	}
	if s, ok := p[PropHandledCount]; ok && s != "" {
		n, err := message.ParseHandledCount(s)
		if err != nil {
			problems = append(problems, PropHandledCount+": "+err.Error())
			errs = append(errs, fmt.Errorf("%s: %w: %w", PropHandledCount, ErrBadProperty, err))
			h.Bag[PropHandledCount+"Received"] = s
		} else {
			h.HandledCount = n
		}
	}
	if s, ok := p[PropDelay]; ok && s != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 0 || n > int64(24*365*time.Hour/time.Millisecond) {
			problems = append(problems, fmt.Sprintf("%s: %q is not a whole number of milliseconds from 0 to a year", PropDelay, s))
			errs = append(errs, fmt.Errorf("%s %q: %w", PropDelay, s, ErrBadProperty))
			h.Bag[PropDelay+"Received"] = s
		} else {
			h.Delay = time.Duration(n) * time.Millisecond
		}
	}
	h.Timestamp = now.UTC()
	if t, ok := message.ParseWireTime(p[PropTime]); ok {
		h.Timestamp = t
	} else if !w.DeliveryTimestamp.IsZero() {
		h.Timestamp = w.DeliveryTimestamp.UTC()
	}
	h.ContentType = firstNonEmpty(p[PropCEContentType], p[PropContentType], receivedContentType)
	h.CorrelationID, h.ReplyTo = p[PropCorrelationID], p[PropReplyTo]
	h.Source = firstNonEmpty(p[PropSource], message.DefaultSource)
	h.SpecVersion = firstNonEmpty(p[PropSpecVersion], message.DefaultSpecVersion)
	h.Type, h.Subject, h.DataSchema, h.DataRef = p[PropType], p[PropSubject], p[PropDataSchema], p[PropDataRef]
	h.TraceParent, h.TraceState, h.Baggage = p[PropTraceParent], p[PropTraceState], p[PropBaggage]
	if len(problems) > 0 {
		m.MarkUndecodable(strings.Join(problems, "; "))
		return m, fmt.Errorf("RocketMQ message %s (id %s): %w", w.MessageID, id, errors.Join(errs...))
	}
	return m, nil
}

// Unacceptable is the message the consumer presents for a wire message Decode
// refused: Decode's partial message, MT_UNACCEPTABLE, with the id and topic it
// can find, the body unchanged and the non-header properties in the bag, so
// the routed copy on the invalid-message topic loses nothing an operator
// needs. Undecodable is "undecodable" when Decode found no fault.
func Unacceptable(w Wire, now time.Time) *message.Message {
	m, _ := Decode(w, now)
	why := m.Undecodable
	if why == "" {
		why = "undecodable"
	}
	m.MarkUndecodable(why)
	return m
}

func bagOf(w Wire, id string) message.Bag {
	bag := message.Bag{}
	for k, v := range w.Properties {
		if !reserved[k] {
			bag[k] = v
		}
	}
	if w.Tag != "" {
		bag[BagTag] = w.Tag
	}
	if len(w.Keys) > 0 && (len(w.Keys) != 1 || w.Keys[0] != id) {
		keys := make([]any, len(w.Keys))
		for i, k := range w.Keys {
			keys[i] = k
		}
		bag[BagKeys] = keys
	}
	return bag
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
