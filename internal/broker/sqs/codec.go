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

// knownAttrs is HeaderNames.IsKnown: every other message attribute is
// surfaced in the bag on receive.
var knownAttrs = map[string]struct{}{
	AttrID: {}, AttrTopic: {}, AttrContentType: {}, AttrCorrelationID: {}, AttrHandledCount: {},
	AttrMessageType: {}, AttrTimestamp: {}, AttrReplyTo: {}, AttrSubject: {}, AttrBag: {},
	AttrMessageDeduplicationID: {}, AttrType: {}, AttrSpecVersion: {}, AttrSource: {}, AttrTime: {},
	AttrDataContentType: {}, AttrDataSchema: {}, AttrDataRef: {}, AttrTraceState: {},
	AttrTraceParent: {}, AttrBaggage: {}, AttrCloudEventHeaders: {},
}

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
	m, problems := decode(sm, opts)
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

// attrSource abstracts the two places attributes come from.
type attrSource struct {
	sqs map[string]types.MessageAttributeValue
	env *envelope
}

func (a attrSource) get(name string) (string, bool) {
	if a.env != nil {
		v, ok := a.env.MessageAttributes[name]
		return v.Value, ok
	}
	v, ok := a.sqs[name]
	if !ok {
		return "", false
	}
	if v.StringValue != nil {
		return *v.StringValue, true
	}
	if v.BinaryValue != nil {
		return base64.StdEncoding.EncodeToString(v.BinaryValue), true
	}
	return "", true
}

func (a attrSource) each(f func(name, value string)) {
	if a.env != nil {
		for k, v := range a.env.MessageAttributes {
			f(k, v.Value)
		}
		return
	}
	for k := range a.sqs {
		v, _ := a.get(k)
		f(k, v)
	}
}

// decode reads sm as far as it goes; problems name each field it could not
// take and why ("bag: not a JSON object: ..."). The message is never nil.
func decode(sm types.Message, opts DecodeOptions) (*message.Message, []string) {
	var problems []string
	body := aws.ToString(sm.Body)
	src := attrSource{sqs: sm.MessageAttributes}
	var envSubject string
	if opts.Envelope && len(sm.MessageAttributes) == 0 {
		var env envelope
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			problems = append(problems, "SNS envelope (the body): not JSON: "+err.Error())
		} else {
			src.env = &env
			body = env.Message
			envSubject = env.Subject
		}
	}
	var ce ceHeaders
	if s, ok := src.get(AttrCloudEventHeaders); ok && s != "" {
		ce.read(s)
	}
	bag := message.Bag{}
	if s, ok := src.get(AttrBag); ok && s != "" {
		if !message.ScanFlatStrings(s, func(k, v string) { bag[k] = v }) {
			bag = message.Bag{}
			if err := json.Unmarshal([]byte(s), &bag); err != nil || bag == nil {
				if err == nil {
					err = errors.New("null")
				}
				problems = append(problems, "bag: not a JSON object: "+err.Error())
				bag = message.Bag{AttrBag: s}
			}
		}
	}
	src.each(func(name, value string) {
		if _, known := knownAttrs[name]; known {
			return
		}
		if _, dup := bag[name]; !dup {
			bag[name] = value
		}
	})

	id, _ := src.get(AttrID)
	if id == "" {
		id = aws.ToString(sm.MessageId)
	}
	topic := opts.DefaultTopic
	if s, ok := src.get(AttrTopic); ok && s != "" {
		topic = topicName(s)
	}
	mt := message.MTEvent
	var wireType string
	if s, ok := src.get(AttrMessageType); ok {
		var err error
		if mt, err = message.ParseWireMessageType(s); err != nil {
			problems = append(problems, "message-type: "+err.Error())
			wireType = s
		}
	}
	m := message.New(id, topic, mt, nil)
	m.WireMessageType = wireType
	h := &m.Header
	h.Bag = bag

	switch {
	case hasNonEmpty(src, AttrDataContentType):
		h.ContentType, _ = src.get(AttrDataContentType)
	case hasNonEmpty(src, AttrContentType):
		h.ContentType, _ = src.get(AttrContentType)
	case ce.dataContentType != "":
		h.ContentType = ce.dataContentType
	default:
		h.ContentType = "text/plain"
	}
	h.CorrelationID, _ = src.get(AttrCorrelationID)
	h.ReplyTo, _ = src.get(AttrReplyTo)

	h.Timestamp = time.Now().UTC()
	if t, ok := readTime(src, AttrTime); ok {
		h.Timestamp = t
	} else if t, ok := readTime(src, AttrTimestamp); ok {
		h.Timestamp = t
	} else if ms, err := strconv.ParseInt(sm.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		h.Timestamp = time.UnixMilli(ms).UTC()
	}

	h.PartitionKey = sm.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
	if d := sm.Attributes[string(types.MessageSystemAttributeNameMessageDeduplicationId)]; d != "" {
		bag[AttrMessageDeduplicationID] = d
	}

	switch {
	case hasNonEmpty(src, AttrSubject):
		h.Subject, _ = src.get(AttrSubject)
	case envSubject != "":
		h.Subject = envSubject
	default:
		h.Subject = ce.subject
	}

	n, ok, err := stampedCount(bag)
	if err != nil {
		problems = append(problems, "bag handled-count: "+err.Error())
	} else {
		delete(bag, BagHandledCount)
	}
	if ok {
		h.HandledCount = n
	} else if s, ok := src.get(AttrHandledCount); ok && s != "" && err == nil {
		// A top-level handled-count attribute (what Brighter's envelope reader
		// looks for; no Brighter producer writes it).
		if n, err := message.ParseHandledCount(s); err != nil {
			problems = append(problems, "handled-count attribute: "+err.Error())
			bag[AttrHandledCount] = s
		} else {
			h.HandledCount = n
		}
	}

	h.Source = firstNonEmpty(attrOr(src, AttrSource), ce.source, message.DefaultSource)
	h.Type = firstNonEmpty(attrOr(src, AttrType), ce.typ)
	h.DataSchema = firstNonEmpty(attrOr(src, AttrDataSchema), ce.dataSchema)
	h.SpecVersion = firstNonEmpty(attrOr(src, AttrSpecVersion), ce.specVersion, message.DefaultSpecVersion)
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

func hasNonEmpty(src attrSource, name string) bool {
	s, ok := src.get(name)
	return ok && s != ""
}

func attrOr(src attrSource, name string) string {
	s, _ := src.get(name)
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func readTime(src attrSource, name string) (time.Time, bool) {
	s, ok := src.get(name)
	if !ok || s == "" {
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
