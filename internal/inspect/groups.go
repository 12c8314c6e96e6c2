package inspect

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/brightergo/brighter/internal/message"
	"github.com/brightergo/brighter/internal/redact"
)

// GroupIDLength is how many hexadecimal digits a failure group's id has:
// the first 48 bits of a SHA-256, short enough to type, long enough that
// two groups of one destination practically never share one.
const GroupIDLength = 12

// GroupKey is what makes dead-lettered messages one failure group:
// the same original topic, message type, rejection reason and
// normalised rejection message (see Normalise).
type GroupKey struct {
	// OriginalTopic is Described.OriginalTopic.
	OriginalTopic string `json:"originalTopic"`
	// MessageType is Described.MessageType (MT_EVENT, MT_COMMAND, ...).
	MessageType string `json:"messageType"`
	// Reason is Described.Reason.
	Reason string `json:"reason"`
	// Message is the normalised rejection message.
	Message string `json:"message"`
}

// GroupOf is the failure group of m.
func GroupOf(m *message.Message) GroupKey {
	d := Describe(m)
	return GroupKey{OriginalTopic: d.OriginalTopic, MessageType: d.MessageType, Reason: d.Reason, Message: Normalise(d.RejectionMessage)}
}

// ID is the group's stable id: the first GroupIDLength lowercase hex digits
// of the SHA-256 of its four fields, each ended by a NUL byte. It depends on
// nothing but the fields, so the id `dlq stats` shows today selects the
// same group with --group-id tomorrow, on any machine.
func (k GroupKey) ID() string {
	h := sha256.New()
	for _, s := range []string{k.OriginalTopic, k.MessageType, k.Reason, k.Message} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:GroupIDLength]
}

var reGroupID = regexp.MustCompile(`^[0-9a-f]{` + fmt.Sprint(GroupIDLength) + `}$`)

// ValidGroupID reports an error naming --group-id when id is not a group id
// (GroupIDLength hex digits; upper case is accepted).
func ValidGroupID(id string) error {
	if !reGroupID.MatchString(strings.ToLower(id)) {
		return fmt.Errorf("--group-id %q: want the %d-hex-digit id `brighter dlq stats` shows in its GROUP column", redact.Quoted(id), GroupIDLength)
	}
	return nil
}
