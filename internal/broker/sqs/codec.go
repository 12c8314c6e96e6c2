package sqs

import (
	"errors"

	"github.com/brightergo/brighter/internal/broker/limits"
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
