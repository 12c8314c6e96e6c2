package message

import (
	"errors"
	"fmt"
	"iter"
	"strconv"
)

// MessageType is Brighter's MessageType enum. It travels on every transport
// as its enum name (for example "MT_COMMAND"), never as its number.
type MessageType int

// The values of MessageType, numbered as in Brighter's MessageHeader.cs.
const (
	// MTUnacceptable marks a message the consumer could not decode; the pump
	// rejects it as Unacceptable.
	MTUnacceptable MessageType = -1
	// MTNone means nothing was received.
	MTNone MessageType = 0
	// MTCommand is a command: one handler.
	MTCommand MessageType = 1
	// MTEvent is an event: zero or more handlers. It is the default when a
	// wire value is missing or cannot be parsed.
	MTEvent MessageType = 2
	// MTDocument is a document message.
	MTDocument MessageType = 3
	// MTQuit is the local stop signal; Brighter never sends it.
	MTQuit MessageType = 4
)

var messageTypeNames = [...]string{"MT_UNACCEPTABLE", "MT_NONE", "MT_COMMAND", "MT_EVENT", "MT_DOCUMENT", "MT_QUIT"}

// String returns the enum name Brighter writes on the wire, such as
// "MT_COMMAND". An out-of-range value prints as its number.
func (t MessageType) String() string {
	i := int(t) + 1
	if i >= 0 && i < len(messageTypeNames) {
		return messageTypeNames[i]
	}
	return strconv.Itoa(int(t))
}

// ParseMessageType reads a wire value the way Brighter's parsers do: the enum
// name (case-sensitive, as the SQS and Pub/Sub readers are) or its number.
// It reports false, and MTEvent, for anything else, so a caller can apply
// Brighter's fallback and still know the value was foreign.
func ParseMessageType(s string) (MessageType, bool) {
	for i, n := range messageTypeNames {
		if n == s {
			return MessageType(i - 1), true
		}
	}
	if n, err := strconv.Atoi(s); err == nil && n >= int(MTUnacceptable) && n <= int(MTQuit) {
		return MessageType(n), true
	}
	return MTEvent, false
}

// MarshalText writes the enum name.
func (t MessageType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads an enum name or number; an unknown value is an error.
func (t *MessageType) UnmarshalText(b []byte) error {
	v, ok := ParseMessageType(string(b))
	if !ok {
		return fmt.Errorf("unknown message type %q: valid values are MT_COMMAND, MT_EVENT, MT_DOCUMENT, MT_UNACCEPTABLE, MT_NONE, MT_QUIT", b)
	}
	*t = v
	return nil
}

// RejectionReason is why a message was rejected (Brighter's RejectionReason
// enum). It selects the rejection route: Unacceptable goes to the
// invalid-message channel, the others to the dead-letter queue.
type RejectionReason int

// The values of RejectionReason, numbered as in Brighter. These are all of
// .NET Brighter's reasons, and a routed copy is read by .NET consumers too:
// a reason Brighter lacks is one they cannot name (String writes it as its
// number), so none has been added (ARCHITECTURE.md#a-rejection-reason lists
// what adding one would touch).
const (
	// ReasonNone is a rejection with no stated reason; it routes to the
	// dead-letter queue.
	ReasonNone RejectionReason = 0
	// ReasonUnacceptable means the message cannot be handled as it is (it
	// could not be decoded, or the handler said it is invalid).
	ReasonUnacceptable RejectionReason = 1
	// ReasonDeliveryError means the message could not be delivered: the
	// handler rejected it or its redelivery budget ran out.
	ReasonDeliveryError RejectionReason = 2
)

// reasonNames are the enum names of the rejection reasons, indexed by
// their number: the one list String, ParseRejectionReason and
// RejectionReasons read, so a new reason is named here alone.
var reasonNames = [...]string{
	ReasonNone:          "None",
	ReasonUnacceptable:  "Unacceptable",
	ReasonDeliveryError: "DeliveryError",
}

// String returns the enum name written as rejectionReason: "None",
// "Unacceptable" or "DeliveryError"; a reason with no name is written as
// its number.
func (r RejectionReason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return strconv.Itoa(int(r))
}

// ParseRejectionReason reads an enum name ("None", "Unacceptable",
// "DeliveryError"), as String writes it; it reports false for anything
// else.
func ParseRejectionReason(s string) (RejectionReason, bool) {
	for i, name := range reasonNames {
		if name == s {
			return RejectionReason(i), true
		}
	}
	return ReasonNone, false
}

// RejectionReasons yields every rejection reason, in the order of their
// numbers.
func RejectionReasons() iter.Seq[RejectionReason] {
	return func(yield func(RejectionReason) bool) {
		for i := range reasonNames {
			if !yield(RejectionReason(i)) {
				return
			}
		}
	}
}

// Rejection is a reason with an optional description (Brighter's
// MessageRejectionReason record). The description becomes the
// rejectionMessage key of the routed copy when it is not empty.
type Rejection struct {
	Reason      RejectionReason
	Description string
}

// ErrLocalMessageType is returned by ParseWireMessageType for a type that
// is local to a pump and never sent (MT_NONE, MT_QUIT): taken at its word it
// would stop the pump (MT_QUIT) or leave the message unsettled as an empty
// poll (MT_NONE).
var ErrLocalMessageType = errors.New("message type is local to a pump and never sent")

// IsLocal reports whether t is one of the pump-local types MT_NONE and
// MT_QUIT, which no producer writes. MT_UNACCEPTABLE is not local: a message
// that could not be decoded is routed to the invalid-message channel with
// that type, as Brighter does, and is read back as such.
func (t MessageType) IsLocal() bool {
	return t == MTNone || t == MTQuit
}

// ParseWireMessageType reads a message type received from a broker: the
// enum name or number as ParseMessageType, an unknown value falling back to
// MT_EVENT as Brighter's readers do, and a local-only type refused with
// ErrLocalMessageType (the codecs then present the message as
// MT_UNACCEPTABLE so it is routed, never obeyed). Every transport's decoder
// uses it.
func ParseWireMessageType(s string) (MessageType, error) {
	mt, ok := ParseMessageType(s)
	if !ok {
		return MTEvent, nil
	}
	if mt.IsLocal() {
		return MTUnacceptable, fmt.Errorf("%w: %q", ErrLocalMessageType, s)
	}
	return mt, nil
}
