package sqs

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/brightergo/brighter/internal/broker"
	"github.com/brightergo/brighter/internal/message"
)

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
