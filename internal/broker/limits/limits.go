// Package limits holds every broker limit brighter enforces where it writes,
// lints where a subscriptions file asks for the impossible, or reads back
// with `lint --live`: one value per transport, in bytes or as a duration, in
// this one place (docs/adr/0005-leases.md, "Ceilings").
//
// The transports (internal/broker/sqs, gcp, rocketmq), config and lint's
// rules all read the same numbers here, so lint needs no transport.
//
// Its layer, and so what it may depend on, is in the table of
// ARCHITECTURE.md#layers, which internal/layers enforces.
//
// Imports: none
package limits

import "time"

// Transport is one broker's limits. A zero field means the broker sets no
// such limit (or none brighter depends on).
type Transport struct {
	// Name is the transport's name as the subscriptions file spells it.
	Name string
	// MaxMessageBytes is the largest message the broker accepts: body plus
	// attribute (property) names and values, in bytes.
	MaxMessageBytes int
	// DefaultMaxMessageBytes is the limit a queue has when none is set
	// (SQS's MaximumMessageSize default); 0 when the same as
	// MaxMessageBytes.
	DefaultMaxMessageBytes int
	// MaxAttributes is the most message attributes (user properties) one
	// message may carry.
	MaxAttributes int
	// MaxAttributeKeyBytes is the longest attribute name, in bytes.
	MaxAttributeKeyBytes int
	// MaxAttributeValueBytes is the longest single attribute value, in
	// bytes.
	MaxAttributeValueBytes int
	// MaxAttributesBytes is the most bytes all user attributes of one
	// message may take together (names and values).
	MaxAttributesBytes int
	// MinLease and MaxLease bound the lease one call may grant a received
	// message (SQS visibility timeout, Pub/Sub ack deadline, RocketMQ
	// invisible duration).
	MinLease, MaxLease time.Duration
	// MaxHold is the longest the broker keeps a received message from
	// other consumers, counted from its receive, however often the lease
	// is extended; 0 when extensions have no such ceiling.
	MaxHold time.Duration
}

// The limits other packages need as constants; the Transport values below
// use them.
const (
	// SQSMaxVisibility is SQS's longest visibility timeout, and its
	// ceiling on a message's visibility counted from the receive.
	SQSMaxVisibility = 12 * time.Hour
	// PubSubMinAckDeadline and PubSubMaxAckDeadline bound a Pub/Sub ack
	// deadline (the subscription's and each ModifyAckDeadline's).
	PubSubMinAckDeadline = 10 * time.Second
	PubSubMaxAckDeadline = 600 * time.Second
	// PubSubMaxBackoff is the longest back-off a Pub/Sub retry policy
	// takes, as its minimum or its maximum (the service refuses a longer
	// one, and a maximum below the minimum, with InvalidArgument).
	PubSubMaxBackoff = 600 * time.Second
	// PubSubStreamHoldAcrossStop is the longest requeueDelay whose hold a
	// Pub/Sub stream consumer keeps through its Close (internal/broker/gcp:
	// DefaultCloseTimeout, 10s, less the 1s it leaves the client to send the
	// Nack and end the stream): a deferral whose hold ends later is Nacked
	// as the stop begins and is delivered again at once.
	PubSubStreamHoldAcrossStop = 9 * time.Second
	// SQSMaxAttributes is the most message attributes SQS (and SNS) take
	// per message.
	SQSMaxAttributes = 10
	// PubSubMaxAttributeValue is Pub/Sub's longest attribute value, in
	// bytes.
	PubSubMaxAttributeValue = 1024
	// CeilingMargin is how far short of a broker's ceiling on holding a
	// message (Transport.MaxHold) the pump stops extending its lease: the
	// broker counts from its hand-out, a little before the pump does (for
	// RocketMQ the pump counts from the receive call's start, no later),
	// and judges an extension when the call reaches it, up to ten seconds
	// after the pump decided it.
	CeilingMargin = time.Minute
)

// SQS is Amazon SQS (and SNS->SQS): 1 MiB messages since August 2025 (a
// queue's MaximumMessageSize defaults to 256 KiB), ten message attributes of
// names up to 256 bytes, counted in the message size; a visibility timeout
// of 0..12 h, and no ChangeMessageVisibility may reach past 12 hours from
// the receive ("Amazon SQS visibility timeout", AWS SQS Developer Guide).
var SQS = Transport{
	Name:                   "sqs",
	MaxMessageBytes:        1 << 20,
	DefaultMaxMessageBytes: 256 << 10,
	MaxAttributes:          SQSMaxAttributes,
	MaxAttributeKeyBytes:   256,
	MinLease:               0,
	MaxLease:               SQSMaxVisibility,
	MaxHold:                SQSMaxVisibility,
}

// SNS is Amazon SNS's Publish (an SNS->SQS channel's producer): messages
// of at most 256 KiB (262,144 bytes) counting the message, its subject and
// every message attribute's name, data type and value; ten message
// attributes when delivered to SQS, of names up to 256 bytes ("Amazon SNS
// message publishing", "Amazon SNS message attributes"). fauxqs enforces
// none of them.
var SNS = Transport{
	Name:                 "sns",
	MaxMessageBytes:      256 << 10,
	MaxAttributes:        SQSMaxAttributes,
	MaxAttributeKeyBytes: 256,
}

// PubSub is Google Cloud Pub/Sub: 10 MB messages, 100 attributes per
// message, attribute keys up to 256 bytes and values up to 1,024 bytes, an
// ack deadline of 10..600 s per call and no ceiling on extensions (Pub/Sub
// "Quotas and limits"). Google's emulator enforces none of the attribute
// limits (docs/adr/0005-leases.md).
var PubSub = Transport{
	Name:                   "gcp",
	MaxMessageBytes:        10_000_000,
	MaxAttributes:          100,
	MaxAttributeKeyBytes:   256,
	MaxAttributeValueBytes: PubSubMaxAttributeValue,
	MinLease:               PubSubMinAckDeadline,
	MaxLease:               PubSubMaxAckDeadline,
}

// RocketMQ is Apache RocketMQ 5 behind its proxy (ProxyConfig defaults,
// which an operator may change): bodies up to 4 MiB (maxMessageSize), up to
// 128 user properties (maxPropertyCount) of 16 KiB together
// (maxPropertySize), and an invisible duration of 10 s
// (minInvisibleTimeMillsForRecv, checked on receive) to 12 h
// (maxInvisibleTimeMills) per call. Our test broker (rmqtest) enforces none
// of them.
var RocketMQ = Transport{
	Name:               "rocketmq",
	MaxMessageBytes:    4 << 20,
	MaxAttributes:      128,
	MaxAttributesBytes: 16 << 10,
	MinLease:           10 * time.Second,
	MaxLease:           12 * time.Hour,
}

// MaxRejectionText is the most bytes of UTF-8 a rejection text written into
// a routed copy's bag may take (rejectionMessage and the pump's
// RejectionReason line), marker included: PubSub.MaxAttributeValueBytes,
// the smallest value limit of the transports, applied on every transport so
// that a rejection reads the same wherever it is routed. internal/message
// restates it (it imports nothing); a test keeps the two equal.
const MaxRejectionText = PubSubMaxAttributeValue
