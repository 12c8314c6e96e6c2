package inspect

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// Described is what an operator wants to know about a dead-lettered
// message, read from its header and its rejection metadata.
type Described struct {
	// ID is the message id.
	ID string
	// OriginalTopic is the bag's originalTopic, or the message's own topic
	// for a message moved by a native redrive.
	OriginalTopic string
	// Reason is the rejectionReason, or ReasonNativeRedrive when the message
	// carries no rejection metadata.
	Reason string
	// RejectionMessage is the rejectionMessage ("" when none), through the
	// redaction rule (redact.Text): a copy stamped before the rule, or by
	// another writer, shows no URL user-info or query value in a table,
	// stats or a --grep.
	RejectionMessage string
	// RejectedAt is the rejectionTimestamp (zero when none or unreadable).
	RejectedAt time.Time
	// HandledCount is the count the consumer presented: the stamped count
	// for a routed copy.
	HandledCount int
	// Deliveries is how many times the message had been delivered when it
	// was rejected (a count, at least 1): the deliveries a budget's
	// rejection message states ("delivered 3 times", "delivery 4 on this
	// channel"), since a budget's rejection stamps the count raised by the
	// delivery that exhausted it; else HandledCount + 1, the presented
	// count being 0 on the first delivery.
	Deliveries int
	// MessageType is the originalMessageType, else the header's type.
	MessageType string
	// Timestamp is when the message was created.
	Timestamp time.Time
	// NativeRedrive is true when the message carries no rejection metadata.
	NativeRedrive bool
	// ReplayedFrom is the bag's replayedFrom: the destination (a URL) a
	// `dlq replay` read this message from; "" when it was never replayed.
	ReplayedFrom string
}

// Describe reads a message's rejection metadata. It never fails: missing or
// unreadable values are left empty.
func Describe(m *message.Message) Described {
	b := m.Header.Bag
	d := Described{ID: m.Header.MessageID, HandledCount: m.Header.HandledCount, Timestamp: m.Header.Timestamp, MessageType: m.Header.MessageType.String()}
	d.ReplayedFrom, _ = b.String(message.KeyReplayedFrom)
	if !m.HasRejectionMetadata() {
		d.NativeRedrive, d.Reason, d.OriginalTopic = true, ReasonNativeRedrive, m.Header.Topic
		d.Deliveries = deliveriesStated("", "", d.HandledCount)
		return d
	}
	d.OriginalTopic, _ = b.String(message.KeyOriginalTopic)
	d.Reason, _ = b.String(message.KeyRejectionReason)
	if d.Reason == "" {
		d.Reason = message.ReasonNone.String()
	}
	d.RejectionMessage, _ = b.String(message.KeyRejectionMessage)
	d.RejectionMessage = redact.Text(d.RejectionMessage)
	d.Deliveries = deliveriesStated(d.Reason, d.RejectionMessage, d.HandledCount)
	if s, ok := b.String(message.KeyRejectionTimestamp); ok {
		d.RejectedAt, _ = message.ParseWireTime(s)
	}
	if s, ok := b.String(message.KeyOriginalMessageType); ok && s != "" {
		d.MessageType = s
	}
	return d
}

// budgetExhausted starts the rejection message of a rejection by the
// redelivery budget; reDelivered finds the deliveries it states.
const budgetExhausted = "redelivery budget exhausted: "

var reDelivered = regexp.MustCompile(`\b(?:delivered (\d+) times?|delivery (\d+) on this channel)\b`)

// deliveriesStated is Described.Deliveries of a message rejected for
// reason with rejection message msg and stamped handled count handled.
func deliveriesStated(reason, msg string, handled int) int {
	if reason == message.ReasonDeliveryError.String() && strings.HasPrefix(msg, budgetExhausted) {
		if g := reDelivered.FindStringSubmatch(msg); g != nil {
			n := g[1] + g[2]
			if v, err := strconv.Atoi(n); err == nil && v > 0 {
				return v
			}
		}
	}
	return message.SaturatingAdd(max(handled, 0), 1)
}

var (
	reUUID   = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reHex    = regexp.MustCompile(`(?i)\b(?:0x)?[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b(?:0x)?[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`)
	reNumber = regexp.MustCompile(`[-+]?\d+(?:\.\d+)?`)
	reSpace  = regexp.MustCompile(`\s+`)
	// reTimes is a count of times after its number became <n>: "1 time"
	// and "3 times" are one group ("handled 1 time in this process", "handled 3
	// times in this process" in the pump's budget messages).
	reTimes = regexp.MustCompile(`<n> times?\b`)
)

// Normalise turns a rejection message into its group key for Stats: UUIDs
// and hexadecimal ids (8 or more characters, mixing digits and letters)
// become "<id>", other numbers "<n>", and runs of white space one space, so
// "order 42 failed" and "order 43 failed" count together; a count of
// times reads "<n> time(s)", so "handled 1 time in this process" and "handled 3 times
// here" count together too.
func Normalise(s string) string {
	s = reUUID.ReplaceAllString(s, "<id>")
	s = reHex.ReplaceAllStringFunc(s, func(h string) string {
		if len(strings.TrimPrefix(strings.ToLower(h), "0x")) < 8 {
			return h
		}
		return "<id>"
	})
	s = reNumber.ReplaceAllString(s, "<n>")
	s = reTimes.ReplaceAllString(s, "<n> time(s)")
	return strings.TrimSpace(reSpace.ReplaceAllString(s, " "))
}
