package sqs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/brightergo/brighter/internal/message"
)

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
