package sqs

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/broker/limits"
	"github.com/brightergo/brighter/internal/message"
)

// Brighter's SQS/SNS message attribute names (docs/wire-format.md#sqs).
// They are case-sensitive and travel with DataType "String".
const (
	AttrID                     = "id"
	AttrTopic                  = "topic"
	AttrContentType            = "content-type"
	AttrCorrelationID          = "correlation-id"
	AttrHandledCount           = "handled-count"
	AttrMessageType            = "message-type"
	AttrTimestamp              = "timestamp"
	AttrReplyTo                = "reply-to"
	AttrSubject                = "subject"
	AttrBag                    = "bag"
	AttrMessageDeduplicationID = "messageDeduplicationId"
	AttrType                   = "type"
	AttrSpecVersion            = "specversion"
	// AttrSource is the CloudEvents source key exactly as Brighter spells it
	// ("souce", sic). It is used inside cloudeventheaders.
	AttrSource          = "souce"
	AttrTime            = "time"
	AttrDataContentType = "datacontenttype"
	AttrDataSchema      = "dataschema"
	AttrDataRef         = "dataref"
	AttrTraceState      = "tracestate"
	AttrTraceParent     = "traceparent"
	AttrBaggage         = "baggage"
	// AttrCloudEventHeaders is the attribute holding the CloudEvents fields
	// as one flat JSON object of strings (docs/wire-format.md#sqs).
	AttrCloudEventHeaders = "cloudeventheaders"
)

// BagHandledCount is the bag key the stamped delivery count travels under,
// as a JSON string such as "0" (docs/wire-format.md#sqs).
const BagHandledCount = "handled-count"

// BagReceiptHandle is the bag key Brighter .NET keeps the SQS receipt handle
// under. This package never writes it (the handle lives in
// message.Message.Receipt) and strips it from every message it sends.
const BagReceiptHandle = "ReceiptHandle"

// bagProducerTopic is Brighter's local-only bag key, never sent.
const bagProducerTopic = "paramore.brighter.ProducerTopic"

// MaxAttributes is the SQS (and SNS) limit on message attributes per message.
const MaxAttributes = limits.SQSMaxAttributes

// ErrTooManyAttributes is returned by the encoders when a message would carry
// more than MaxAttributes message attributes (AWS would reject the send).
var ErrTooManyAttributes = errors.New("too many message attributes")

// ErrBodyNotText is returned (wrapped) by EncodeSQS and EncodeSNS for a body
// SQS cannot carry: empty, or not UTF-8 text, with a content type that is
// not one of the compressed types sent as base64.
var ErrBodyNotText = errors.New("SQS and SNS carry a non-empty UTF-8 text body")

// ErrUndecodable wraps every reason a received message could not be decoded
// (an SNS envelope that is not JSON, a bag that is not a JSON object, a
// compressed body that is not base64). Such a message is presented as
// MT_UNACCEPTABLE, with its receipt, so the pump routes it.
var ErrUndecodable = errors.New("message cannot be decoded")

// compressedTypes are the content types whose body travels as base64 text
// (Brighter's CompressPayloadTransformer).
var compressedTypes = map[string]struct{}{"application/gzip": {}, "application/deflate": {}, "application/br": {}}

// maxDelaySeconds is SQS's per-message DelaySeconds limit.
const maxDelaySeconds = 900

// Outgoing is one message encoded for SendMessage or SNS Publish. Every
// attribute has DataType String.
type Outgoing struct {
	// Body is the MessageBody (SQS) or Message (SNS).
	Body string
	// Attributes are the message attributes, name to string value.
	Attributes map[string]string
	// GroupID is the FIFO MessageGroupId ("" for none): the partition key.
	GroupID string
	// DeduplicationID is the FIFO MessageDeduplicationId ("" for none): the
	// bag's messageDeduplicationId when a group id is set.
	DeduplicationID string
	// DelaySeconds is the per-message delay in whole seconds, capped at 900
	// (SQS only).
	DelaySeconds int32
	// Subject is the SNS Subject ("" for none; SNS only).
	Subject string
}

// EncodeSQS encodes m for SendMessage to the queue at queueURL in Brighter's
// SQS wire format (docs/wire-format.md#sqs): the body, the attributes id,
// cloudeventheaders, topic (= queueURL), message-type, content-type,
// timestamp, bag (with handled-count = Header.HandledCount as a string) and,
// when set, reply-to, subject and correlation-id; extra attributes are
// added as they are. It returns ErrTooManyAttributes (wrapped) when the
// result would carry more than MaxAttributes attributes. It does not modify m.
func EncodeSQS(m *message.Message, queueURL string, extra map[string]string) (Outgoing, error) {
	return encode(m, queueURL, extra, false)
}

// EncodeSNS encodes m for SNS Publish to topicARN (docs/wire-format.md#sqs): as
// EncodeSQS but topic = topicARN, no subject attribute (the subject travels
// as the SNS Subject), and cloudeventheaders without id.
func EncodeSNS(m *message.Message, topicARN string, extra map[string]string) (Outgoing, error) {
	return encode(m, topicARN, extra, true)
}

func encode(m *message.Message, topic string, extra map[string]string, sns bool) (Outgoing, error) {
	h := &m.Header
	ct := h.ContentType
	if ct == "" {
		ct = "text/plain"
	}
	ce := map[string]string{
		AttrDataContentType: ct,
		AttrDataSchema:      h.DataSchema,
		AttrSpecVersion:     orDefault(h.SpecVersion, message.DefaultSpecVersion),
		AttrType:            h.Type,
		AttrSource:          orDefault(h.Source, message.DefaultSource),
		AttrTime:            message.FormatWireTime(timestampOrNow(h.Timestamp)),
		AttrBaggage:         h.Baggage,
	}
	if !sns {
		ce[AttrID] = h.MessageID
	}
	for k, v := range map[string]string{AttrSubject: h.Subject, AttrDataRef: h.DataRef, AttrTraceParent: h.TraceParent, AttrTraceState: h.TraceState} {
		if v != "" {
			ce[k] = v
		}
	}
	ceJSON, err := json.Marshal(ce)
	if err != nil {
		return Outgoing{}, fmt.Errorf("encode cloudeventheaders of message %s: %w", h.MessageID, err)
	}
	bag := make(map[string]any, len(h.Bag)+1)
	for k, v := range h.Bag {
		if k == bagProducerTopic || k == BagReceiptHandle {
			continue
		}
		bag[k] = v
	}
	bag[BagHandledCount] = strconv.Itoa(message.ClampStamp(h.HandledCount))
	bagJSON, err := json.Marshal(bag)
	if err != nil {
		return Outgoing{}, fmt.Errorf("encode bag of message %s: %w", h.MessageID, err)
	}
	attrs := map[string]string{
		AttrID:                h.MessageID,
		AttrCloudEventHeaders: string(ceJSON),
		AttrTopic:             topic,
		AttrMessageType:       h.MessageType.String(),
		AttrContentType:       ct,
		AttrTimestamp:         message.FormatWireTime(timestampOrNow(h.Timestamp)),
		AttrBag:               string(bagJSON),
	}
	if h.ReplyTo != "" {
		attrs[AttrReplyTo] = h.ReplyTo
	}
	if h.CorrelationID != "" {
		attrs[AttrCorrelationID] = h.CorrelationID
	}
	if h.Subject != "" && !sns {
		attrs[AttrSubject] = h.Subject
	}
	for k, v := range extra {
		if _, clash := attrs[k]; clash {
			return Outgoing{}, fmt.Errorf("message %s: extra attribute %q clashes with a Brighter attribute", h.MessageID, k)
		}
		attrs[k] = v
	}
	if len(attrs) > MaxAttributes {
		return Outgoing{}, fmt.Errorf("message %s would carry %d message attributes, more than the %d SQS and SNS allow: %w", h.MessageID, len(attrs), MaxAttributes, ErrTooManyAttributes)
	}
	out := Outgoing{Body: string(m.Body), Attributes: attrs}
	if _, ok := compressedTypes[ct]; ok {
		out.Body = base64.StdEncoding.EncodeToString(m.Body)
	} else if len(m.Body) == 0 || !utf8.Valid(m.Body) {
		return Outgoing{}, fmt.Errorf("message %s: body of %d bytes is empty or not UTF-8 text: %w; base64-encode binary data (or send it with a compressed content type such as application/gzip)", h.MessageID, len(m.Body), ErrBodyNotText)
	}
	if h.PartitionKey != "" {
		out.GroupID = h.PartitionKey
		if s, ok := h.Bag.String(AttrMessageDeduplicationID); ok && s != "" {
			out.DeduplicationID = s
		}
	}
	if h.Delay > 0 {
		out.DelaySeconds = int32(min((h.Delay+time.Second-1)/time.Second, maxDelaySeconds))
	}
	if sns {
		out.Subject = h.Subject
	}
	return out, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func timestampOrNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// DecodeOptions say how to read a received SQS message.
type DecodeOptions struct {
	// Envelope means the queue is subscribed to SNS with rawMessageDelivery
	// false: the body is the SNS JSON envelope. A message that carries SQS
	// message attributes is read raw even then (SNS envelopes never do, so
	// such a message was sent straight to the queue, e.g. a routed copy).
	Envelope bool
	// DefaultTopic is the topic of a message that names none (a message from
	// a producer that is not Brighter): the queue's name.
	DefaultTopic string
}

// Decode reads a received SQS message in Brighter's wire format
// (docs/wire-format.md#sqs), raw or from the SNS envelope, and presents its
// delivery count: Header.HandledCount = PresentedCount(stamped bag
// handled-count, ApproximateReceiveCount, routed copy) (count.go).
// Message.Receipt is the receipt handle (never the bag) and DeliveryAttempt
// the receive count.
//
// A message from a producer that is not Brighter decodes with defaults: id =
// the SQS MessageId, MT_EVENT, topic = opts.DefaultTopic. When part of the
// message cannot be taken (ErrUndecodable: an envelope that is not JSON, a
// bag that is not a JSON object, a stamped count that is not a whole number
// below message.HandledCountLimit, a local message type such as MT_QUIT, a
// compressed body that is not base64), Decode returns BOTH the message,
// decoded as far as it goes, as MT_UNACCEPTABLE and the error: the Brighter
// id when the id attribute is readable, every readable attribute and bag
// entry (an unreadable bag is kept as text under the bag key "bag"), the raw
// body, the received type text in WireMessageType, and in Undecodable the
// field and the problem, which the pump uses as the rejection message.
// The result is never nil and Decode never panics.
func Decode(sm types.Message, opts DecodeOptions) (*message.Message, error) {
	attempt := receiveCount(sm.Attributes)
	m, problems := decode(&sm, opts)
	var err error
	if len(problems) > 0 {
		m.MarkUndecodable(strings.Join(problems, "; "))
		err = fmt.Errorf("SQS message %s (id %s): %w: %s", aws.ToString(sm.MessageId), m.Header.MessageID, ErrUndecodable, m.Undecodable)
	}
	m.Receipt = aws.ToString(sm.ReceiptHandle)
	m.StoredID = aws.ToString(sm.MessageId)
	m.DeliveryAttempt = attempt
	m.Header.HandledCount = broker.PresentedCount(m.Header.HandledCount, attempt, m.HasRejectionMetadata())
	return m, err
}

// envelope is the SNS notification JSON an SQS queue receives when the
// subscription is not raw.
type envelope struct {
	Type              string `json:"Type"`
	MessageID         string `json:"MessageId"`
	TopicArn          string `json:"TopicArn"`
	Subject           string `json:"Subject"`
	Message           string `json:"Message"`
	Timestamp         string `json:"Timestamp"`
	MessageAttributes map[string]struct {
		Type  string `json:"Type"`
		Value string `json:"Value"`
	} `json:"MessageAttributes"`
}

// wireAttrs are the message attributes decode reads, taken in one pass
// over the attribute map (the SQS message's, or the SNS envelope's): each
// field is its attribute's value, "" when absent.
type wireAttrs struct {
	id, topic, messageType, dataContentType, contentType string
	correlationID, replyTo, time, timestamp, subject     string
	handledCount, source, typ, dataSchema, specVersion   string
	bag, ceHeaders                                       string
	// hasMessageType is whether the message-type attribute is present
	// (an empty one is read, and refused).
	hasMessageType bool
	// foreign counts the attributes that are not Brighter's (knownAttr),
	// which decode surfaces in the bag.
	foreign int
}

// take keeps value when name is an attribute decode reads; it reports
// whether name is one of Brighter's (knownAttr).
func (w *wireAttrs) take(name, value string) bool {
	switch name {
	case AttrID:
		w.id = value
	case AttrTopic:
		w.topic = value
	case AttrMessageType:
		w.messageType, w.hasMessageType = value, true
	case AttrDataContentType:
		w.dataContentType = value
	case AttrContentType:
		w.contentType = value
	case AttrCorrelationID:
		w.correlationID = value
	case AttrReplyTo:
		w.replyTo = value
	case AttrTime:
		w.time = value
	case AttrTimestamp:
		w.timestamp = value
	case AttrSubject:
		w.subject = value
	case AttrHandledCount:
		w.handledCount = value
	case AttrSource:
		w.source = value
	case AttrType:
		w.typ = value
	case AttrDataSchema:
		w.dataSchema = value
	case AttrSpecVersion:
		w.specVersion = value
	case AttrBag:
		w.bag = value
	case AttrCloudEventHeaders:
		w.ceHeaders = value
	default:
		return knownAttr(name)
	}
	return true
}

// knownAttr is HeaderNames.IsKnown: every other message attribute is
// surfaced in the bag on receive.
func knownAttr(name string) bool {
	switch name {
	case AttrID, AttrTopic, AttrContentType, AttrCorrelationID, AttrHandledCount,
		AttrMessageType, AttrTimestamp, AttrReplyTo, AttrSubject, AttrBag,
		AttrMessageDeduplicationID, AttrType, AttrSpecVersion, AttrSource, AttrTime,
		AttrDataContentType, AttrDataSchema, AttrDataRef, AttrTraceState,
		AttrTraceParent, AttrBaggage, AttrCloudEventHeaders:
		return true
	}
	return false
}

// sqsAttrValue is an SQS message attribute's value as decode reads it: the
// string value, a binary value in base64, else "".
func sqsAttrValue(v *types.MessageAttributeValue) string {
	if v.StringValue != nil {
		return *v.StringValue
	}
	if v.BinaryValue != nil {
		return base64.StdEncoding.EncodeToString(v.BinaryValue)
	}
	return ""
}

// readAttrs takes the attributes of sm (or of env, when not nil) in one
// pass.
func readAttrs(sm *types.Message, env *envelope) wireAttrs {
	var w wireAttrs
	if env != nil {
		for k, v := range env.MessageAttributes {
			if !w.take(k, v.Value) {
				w.foreign++
			}
		}
		return w
	}
	for k := range sm.MessageAttributes {
		v := sm.MessageAttributes[k]
		if !w.take(k, sqsAttrValue(&v)) {
			w.foreign++
		}
	}
	return w
}

// addForeign puts each attribute of sm (or of env) that is not Brighter's
// into bag, unless the bag already holds its name.
func addForeign(bag message.Bag, sm *types.Message, env *envelope) {
	if env != nil {
		for k, v := range env.MessageAttributes {
			if _, dup := bag[k]; !dup && !knownAttr(k) {
				bag[k] = v.Value
			}
		}
		return
	}
	for k, v := range sm.MessageAttributes {
		if _, dup := bag[k]; !dup && !knownAttr(k) {
			bag[k] = sqsAttrValue(&v)
		}
	}
}

// flatBag collects a flat bag's members, keeping the stamped count
// (handled-count) aside: the bag then needs no entry for it.
type flatBag struct {
	bag        message.Bag
	stamped    string
	hasStamped bool
}

func (f *flatBag) put(k, v string) {
	if k == BagHandledCount {
		f.stamped, f.hasStamped = v, true
		return
	}
	f.bag[k] = v
}

// decode reads sm as far as it goes; problems name each field it could not
// take and why ("bag: not a JSON object: ..."). The message is never nil.
func decode(sm *types.Message, opts DecodeOptions) (*message.Message, []string) {
	var problems []string
	body := aws.ToString(sm.Body)
	var env *envelope
	if opts.Envelope && len(sm.MessageAttributes) == 0 {
		var e envelope
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			problems = append(problems, "SNS envelope (the body): not JSON: "+err.Error())
		} else {
			env = &e
			body = e.Message
		}
	}
	a := readAttrs(sm, env)
	var ce ceHeaders
	if a.ceHeaders != "" {
		ce.read(a.ceHeaders)
	}
	// The bag's stamped count is read from fb.stamped when the fast path
	// took the bag, else from the bag itself (stampedCount).
	fb := flatBag{bag: message.Bag{}}
	if s := a.bag; s != "" {
		if !message.ScanFlatStrings(s, fb.put) {
			slow := message.Bag{}
			if err := json.Unmarshal([]byte(s), &slow); err != nil || slow == nil {
				if err == nil {
					err = errors.New("null")
				}
				problems = append(problems, "bag: not a JSON object: "+err.Error())
				slow = message.Bag{AttrBag: s}
			}
			fb = flatBag{bag: slow}
		}
	}
	bag := fb.bag
	if a.foreign > 0 {
		addForeign(bag, sm, env)
	}

	id := a.id
	if id == "" {
		id = aws.ToString(sm.MessageId)
	}
	topic := opts.DefaultTopic
	if a.topic != "" {
		topic = topicName(a.topic)
	}
	mt := message.MTEvent
	var wireType string
	if a.hasMessageType {
		var err error
		if mt, err = message.ParseWireMessageType(a.messageType); err != nil {
			problems = append(problems, "message-type: "+err.Error())
			wireType = a.messageType
		}
	}
	m := &message.Message{Header: message.Header{MessageID: id, Topic: topic, MessageType: mt, Bag: bag}}
	m.WireMessageType = wireType
	h := &m.Header

	switch {
	case a.dataContentType != "":
		h.ContentType = a.dataContentType
	case a.contentType != "":
		h.ContentType = a.contentType
	case ce.dataContentType != "":
		h.ContentType = ce.dataContentType
	default:
		h.ContentType = "text/plain"
	}
	h.CorrelationID = a.correlationID
	h.ReplyTo = a.replyTo

	if t, ok := readTime(a.time); ok {
		h.Timestamp = t
	} else if t, ok := readTime(a.timestamp); ok {
		h.Timestamp = t
	} else if ms, err := strconv.ParseInt(sm.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		h.Timestamp = time.UnixMilli(ms).UTC()
	} else {
		h.Timestamp = time.Now().UTC()
	}

	h.PartitionKey = sm.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
	if d := sm.Attributes[string(types.MessageSystemAttributeNameMessageDeduplicationId)]; d != "" {
		bag[AttrMessageDeduplicationID] = d
	}

	switch {
	case a.subject != "":
		h.Subject = a.subject
	case env != nil && env.Subject != "":
		h.Subject = env.Subject
	default:
		h.Subject = ce.subject
	}

	var n int
	var ok bool
	var err error
	if fb.hasStamped {
		// The fast path kept the bag's handled-count aside; an unreadable
		// one stays in the bag, as stampedCount leaves it.
		if fb.stamped != "" {
			n, err = message.ParseHandledCount(fb.stamped)
			ok = err == nil
		}
		if err != nil {
			bag[BagHandledCount] = fb.stamped
		}
	} else {
		n, ok, err = stampedCount(bag)
	}
	if err != nil {
		problems = append(problems, "bag handled-count: "+err.Error())
	} else {
		delete(bag, BagHandledCount)
	}
	if ok {
		h.HandledCount = n
	} else if s := a.handledCount; s != "" && err == nil {
		// A top-level handled-count attribute (what Brighter's envelope reader
		// looks for; no Brighter producer writes it).
		if n, err := message.ParseHandledCount(s); err != nil {
			problems = append(problems, "handled-count attribute: "+err.Error())
			bag[AttrHandledCount] = s
		} else {
			h.HandledCount = n
		}
	}

	h.Source = firstNonEmpty(a.source, ce.source, message.DefaultSource)
	h.Type = firstNonEmpty(a.typ, ce.typ)
	h.DataSchema = firstNonEmpty(a.dataSchema, ce.dataSchema)
	h.SpecVersion = firstNonEmpty(a.specVersion, ce.specVersion, message.DefaultSpecVersion)
	h.DataRef = ce.dataRef
	h.TraceParent, h.TraceState, h.Baggage = ce.traceParent, ce.traceState, ce.baggage

	m.Body = []byte(body)
	if _, ok := compressedTypes[h.ContentType]; ok {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			problems = append(problems, "body: content type "+h.ContentType+" but not base64: "+err.Error())
			// Keep the text: the invalid-message copy must carry what came.
			h.ContentType = "text/plain"
		} else {
			m.Body = b
		}
	}
	return m, problems
}

// ceHeaders are the members of the cloudeventheaders attribute decode
// reads, each under its exact key (as a map's look-up matches it: "Type"
// is not "type"); "" when absent.
type ceHeaders struct {
	dataContentType, subject, source, typ, dataSchema, specVersion string
	dataRef, traceParent, traceState, baggage                      string
}

// read takes the members of s, the cloudeventheaders attribute. The flat
// object of strings Brighter writes is read without encoding/json
// (message.ScanFlatStrings: the same members, the last of a repeated key
// winning); any other text goes to encoding/json into a map, as it always
// did, and a malformed one is swallowed, as Brighter swallows it (a
// syntax error leaves nothing read; a member that is not a string is
// skipped).
func (c *ceHeaders) read(s string) {
	if message.ScanFlatStrings(s, c.set) {
		return
	}
	*c = ceHeaders{}
	var slow map[string]string
	_ = json.Unmarshal([]byte(s), &slow)
	for k, v := range slow {
		c.set(k, v)
	}
}

// set keeps v when key is a member decode reads.
func (c *ceHeaders) set(key, v string) {
	switch key {
	case AttrDataContentType:
		c.dataContentType = v
	case AttrSubject:
		c.subject = v
	case AttrSource:
		c.source = v
	case AttrType:
		c.typ = v
	case AttrDataSchema:
		c.dataSchema = v
	case AttrSpecVersion:
		c.specVersion = v
	case AttrDataRef:
		c.dataRef = v
	case AttrTraceParent:
		c.traceParent = v
	case AttrTraceState:
		c.traceState = v
	case AttrBaggage:
		c.baggage = v
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// readTime reads a wire time attribute's value; "" is none.
func readTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	return message.ParseWireTime(s)
}

// topicName reads Brighter's topic attribute (docs/wire-format.md#sqs): an ARN gives
// its resource (the topic name), a queue URL the text after the last '/',
// anything else is taken whole.
func topicName(s string) string {
	if strings.HasPrefix(s, "arn:") {
		if parts := strings.SplitN(s, ":", 6); len(parts) == 6 {
			return parts[5]
		}
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}
