package message

import "time"

// The five rejection-metadata keys, spelled exactly as Brighter writes them
// into the bag of a routed message (docs/wire-format.md#rejection, R-18).
const (
	// KeyOriginalTopic is the topic the message had before it was routed.
	KeyOriginalTopic = "originalTopic"
	// KeyRejectionTimestamp is when it was rejected, in .NET round-trip
	// format (RejectionTimestampLayout).
	KeyRejectionTimestamp = "rejectionTimestamp"
	// KeyOriginalMessageType is the message type's enum name on receive.
	KeyOriginalMessageType = "originalMessageType"
	// KeyRejectionReason is the RejectionReason enum name.
	KeyRejectionReason = "rejectionReason"
	// KeyRejectionMessage is the rejection's description, when not empty.
	KeyRejectionMessage = "rejectionMessage"
)

// RejectionKeys lists the five metadata keys in the order above.
var RejectionKeys = [...]string{KeyOriginalTopic, KeyRejectionTimestamp, KeyOriginalMessageType, KeyRejectionReason, KeyRejectionMessage}

// RejectionTimestampLayout is .NET's DateTimeOffset "o" format for a UTC
// value: seven fractional digits and a +00:00 offset.
const RejectionTimestampLayout = "2006-01-02T15:04:05.0000000+00:00"

// WireTimestampLayout is Brighter's ToRfc3339: UTC, three fractional digits,
// a literal Z. Header timestamps travel in it.
const WireTimestampLayout = "2006-01-02T15:04:05.000Z"

// FormatWireTime formats t in WireTimestampLayout (UTC).
func FormatWireTime(t time.Time) string { return t.UTC().Format(WireTimestampLayout) }

// ParseWireTime reads a header timestamp leniently (RFC 3339 with or without
// fraction, or the .NET round-trip form); it reports false when none fits.
func ParseWireTime(s string) (time.Time, bool) {
	for _, layout := range [...]string{time.RFC3339Nano, RejectionTimestampLayout, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// HasRejectionMetadata reports whether the message is a routed copy: its bag
// carries originalTopic and rejectionTimestamp. It is R-28's discriminator: a
// routed copy presents its stamped count only, however often it is re-read.
func (m *Message) HasRejectionMetadata() bool {
	if m.Header.Bag == nil {
		return false
	}
	_, a := m.Header.Bag[KeyOriginalTopic]
	_, b := m.Header.Bag[KeyRejectionTimestamp]
	return a && b
}

// Stamp returns the copy of m to publish to a rejection destination:
// the header and bag copied, the receipt NOT copied, the five metadata keys
// written (originalMessageType is the received type text when the decoder
// did not take it, Message.WireMessageType; rejectionMessage only when the description is not empty), the
// pump's PascalCase RejectionReason text as Brighter writes it, destination
// added to the rejectionPath (KeyRejectionPath), and the topic set to
// destination. Both rejection texts are cut to MaxRejectionText
// bytes on a rune boundary, marker included (TruncateBytes), so that they fit
// every transport's attribute value limit. m itself is left unchanged, so its receipt can still
// release it if the publish fails.
func Stamp(m *Message, destination string, r Rejection, now time.Time) *Message {
	c := m.Clone()
	c.Header.Bag[KeyOriginalTopic] = m.Header.Topic
	c.Header.Bag[KeyRejectionTimestamp] = now.UTC().Format(RejectionTimestampLayout)
	c.Header.Bag[KeyOriginalMessageType] = m.Header.MessageType.String()
	if m.WireMessageType != "" {
		c.Header.Bag[KeyOriginalMessageType] = m.WireMessageType
	}
	c.Header.Bag[KeyRejectionReason] = r.Reason.String()
	if r.Description != "" {
		c.Header.Bag[KeyRejectionMessage] = TruncateBytes(r.Description, MaxRejectionText)
	} else {
		delete(c.Header.Bag, KeyRejectionMessage)
	}
	c.Header.Bag[KeyPumpRejectionReason] = TruncateBytes("Message rejected reason: "+r.Reason.String()+" Description: "+r.Description, MaxRejectionText)
	c.Header.Bag[KeyRejectionPath] = extendPath(RejectionPath(m), destination)
	c.Header.Topic = destination
	return c
}

// StripRejection removes the five metadata keys, the pump's
// RejectionReason text and the rejectionPath from the bag (used by replay
// and edit: a replayed message may be routed to the same destinations
// again).
func StripRejection(b Bag) {
	for _, k := range RejectionKeys {
		delete(b, k)
	}
	delete(b, KeyPumpRejectionReason)
	delete(b, KeyRejectionPath)
}
